"""Reproducible synthetic Gemini ``streamGenerateContent?alt=sse`` captures.

Every capture is generated in code from a fixed seed, so two runs (and two machines)
see byte-identical input; nothing big is committed. The bytes follow Google's own
style (see ``/work/shared/reference/wire-formats.md`` A1.2): one event per line,
``data: `` + compact JSON with ``": "`` after each key and ``,`` without a space,
non-ASCII left unescaped, and ``\\r\\n\\r\\n`` after every event.

The generators (each returns a :class:`Capture`):

- :func:`text_answer`: a plain text answer, ``usageMetadata`` on every event (``text``).
- :func:`thinking_tools`: a thinking turn: thought-summary events, then two calls
  re-sent on every event with growing args (``thinking-tools``).
- :func:`parallel_calls`: parallel calls to one tool, one per event at part index 0
  (``parallel-16``).
- :func:`big_args`: one call whose large args object is re-sent unchanged (``big-args``).
- :func:`interactions_text`: the text answer of :func:`text_answer` as Google's
  Interactions API streams it (``interactions-text``): ``event:`` lines, ``step.*``
  events, usage once at ``interaction.completed``.
- :func:`interactions_answer`: a :func:`text_answer` capture's own answer as an Interactions
  stream, event for event (the serve benchmark's ``--serve-upstream-api interactions``).
- :data:`CAPTURES` / :data:`QUICK_CAPTURES` / :func:`build`: the named captures the
  benchmark runs (by default / with ``--quick``).
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

__all__ = [
    "CAPTURES",
    "QUICK_CAPTURES",
    "SEED",
    "Capture",
    "CaptureSpec",
    "big_args",
    "build",
    "encode_event",
    "interactions_answer",
    "interactions_text",
    "parallel_calls",
    "text_answer",
    "thinking_tools",
]

SEED = 20240917
MODEL = "gemini-2.5-flash"
PROMPT_TOKENS = 1843

# A small vocabulary with some non-ASCII (Gemini leaves it unescaped in the JSON).
_VOCABULARY = (
    "the of and to in is that for it as with was on be by this are or from at an which "
    "stream event parser token model answer function call argument value result state "
    "buffer latency memory request response server client chunk pipeline operator "
    "reactive observable subscription schedule queue thread loop socket header body "
    "decode encode validate assemble flush finish usage prompt candidate content part "
    "naïve café résumé façade déjà-vu — “quoted” ½ €5 °C µs → ✓ 東京 données"
)
_WORDS = tuple(_VOCABULARY.split())
_MARKDOWN = ("\n\n", "\n\n## ", "\n- ", "\n1. ", " **", "** ", " `", "` ", ". ", ", ", "; ")


def encode_event(obj: Any) -> bytes:
    """One SSE event as Gemini writes it: ``data: `` + JSON, then ``\\r\\n\\r\\n``."""
    return b"data: " + _dumps(obj).encode() + b"\r\n\r\n"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ": "), ensure_ascii=False)


@dataclass(frozen=True)
class Capture:
    """A generated capture: its body split into events, plus what the floor needs.

    Attributes:
        name: the capture's name (as shown in the table).
        description: one line on its shape.
        events: the SSE events, each ``data: …\\r\\n\\r\\n`` as bytes.
    """

    name: str
    description: str
    events: tuple[bytes, ...] = field(repr=False)

    @cached_property
    def body(self) -> bytes:
        """The whole response body."""
        return b"".join(self.events)

    @property
    def event_count(self) -> int:
        return len(self.events)

    @cached_property
    def payloads(self) -> list[str]:
        """Every event's ``data:`` payload as ``str`` (already split: the floor's input)."""
        return [event[6:-4].decode() for event in self.events]

    def pieces(self, size: int | None = None) -> list[bytes]:
        """The body as network-like pieces: one event per piece, or ``size`` bytes each."""
        if size is None:
            return list(self.events)
        body = self.body
        return [body[i : i + size] for i in range(0, len(body), size)]


class _Usage:
    """Gemini's cumulative ``usageMetadata`` snapshots (AI Studio style: on every event)."""

    def __init__(self, thoughts: int = 0) -> None:
        self.candidates = 0
        self.thoughts = thoughts

    def snapshot(self, *, final: bool = False) -> dict[str, Any]:
        usage: dict[str, Any] = {"promptTokenCount": PROMPT_TOKENS}
        if self.candidates:
            usage["candidatesTokenCount"] = self.candidates
        usage["totalTokenCount"] = PROMPT_TOKENS + self.candidates + self.thoughts
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": PROMPT_TOKENS}]
        if final and self.candidates:
            usage["candidatesTokensDetails"] = [{"modality": "TEXT", "tokenCount": self.candidates}]
        if self.thoughts:
            usage["thoughtsTokenCount"] = self.thoughts
        return usage


def _response_id(rng: random.Random) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return "".join(rng.choice(alphabet) for _ in range(23))


def _signature(rng: random.Random, size: int = 600) -> str:
    return base64.b64encode(rng.randbytes(size)).decode()


def _phrase(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(low, high))]
    text = " ".join(words)
    if rng.random() < 0.3:
        text += rng.choice(_MARKDOWN)
    return " " + text


def _event(
    parts: list[dict[str, Any]],
    usage: dict[str, Any],
    response_id: str,
    *,
    finish: str | None = None,
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}}
    if finish is not None:
        candidate["finishReason"] = finish
    candidate["index"] = 0
    return {
        "candidates": [candidate],
        "usageMetadata": usage,
        "modelVersion": MODEL,
        "responseId": response_id,
    }


def text_answer(
    events: int = 2000, *, words: tuple[int, int] = (3, 30), seed: int = SEED, name: str = ""
) -> Capture:
    """A plain text answer of ``events`` events, usage on every one, ``STOP`` on the last."""
    rng = random.Random(seed)
    rid = _response_id(rng)
    usage = _Usage(thoughts=rng.randint(100, 900))
    out: list[bytes] = []
    for number in range(events):
        text = _phrase(rng, *words)
        usage.candidates += max(1, len(text) // 4)
        last = number == events - 1
        parts = [{"text": text}]
        event = _event(parts, usage.snapshot(final=last), rid, finish="STOP" if last else None)
        out.append(encode_event(event))
    return Capture(
        name or f"text-{events}",
        f"text answer, {events} events, usage on every event",
        tuple(out),
    )


def thinking_tools(
    thoughts: int = 200, resends: int = 200, *, seed: int = SEED, name: str = ""
) -> Capture:
    """A thinking turn: ``thoughts`` thought-summary events, then two calls (``search`` and
    ``write_file``) re-sent together on each of ``resends`` events with growing args (the
    first call with a ``thoughtSignature`` each time), then an empty final ``STOP`` event."""
    rng = random.Random(seed + 1)
    rid = _response_id(rng)
    usage = _Usage()
    out: list[bytes] = []
    for _ in range(thoughts):
        heading = " ".join(rng.choice(_WORDS) for _ in range(3)).title()
        text = f"**{heading}**\n\n{_phrase(rng, 20, 60).strip()}\n\n\n"
        usage.thoughts += max(1, len(text) // 4)
        parts = [{"text": text, "thought": True}]
        out.append(encode_event(_event(parts, usage.snapshot(), rid)))
    signature = _signature(rng)
    query = "rxgem"
    content = "# Plan\n"
    for _ in range(resends):
        query += _phrase(rng, 1, 2)
        content += _phrase(rng, 4, 12)
        usage.candidates += 6
        parts = [
            {
                "functionCall": {
                    "name": "search",
                    "args": {"query": query, "max_results": 10, "filters": {"lang": "en"}},
                },
                "thoughtSignature": signature,
            },
            {
                "functionCall": {
                    "name": "write_file",
                    "args": {"path": "notes/plan.md", "content": content, "overwrite": False},
                }
            },
        ]
        out.append(encode_event(_event(parts, usage.snapshot(), rid)))
    out.append(encode_event(_event([{"text": ""}], usage.snapshot(final=True), rid, finish="STOP")))
    return Capture(
        name or "thinking-tools",
        f"{thoughts} thought events, 2 calls re-sent {resends}x with growing args",
        tuple(out),
    )


def parallel_calls(calls: int = 16, *, seed: int = SEED, name: str = "") -> Capture:
    """Two thought events, then ``calls`` parallel ``read_file`` calls, one per event at
    part index 0 (the signature only on the first), then an empty final ``STOP`` event."""
    rng = random.Random(seed + 2)
    rid = _response_id(rng)
    usage = _Usage()
    out: list[bytes] = []
    for _ in range(2):
        text = f"**Reading the sources**\n\n{_phrase(rng, 20, 40).strip()}\n\n\n"
        usage.thoughts += len(text) // 4
        out.append(encode_event(_event([{"text": text, "thought": True}], usage.snapshot(), rid)))
    for number in range(calls):
        part: dict[str, Any] = {
            "functionCall": {
                "name": "read_file",
                "args": {
                    "path": f"src/pkg/module_{number:02d}.py",
                    "start_line": rng.randint(1, 50),
                    "end_line": rng.randint(100, 400),
                },
            }
        }
        if number == 0:
            part["thoughtSignature"] = _signature(rng)
        usage.candidates += 14
        out.append(encode_event(_event([part], usage.snapshot(), rid)))
    out.append(encode_event(_event([{"text": ""}], usage.snapshot(final=True), rid, finish="STOP")))
    return Capture(
        name or f"parallel-{calls}",
        f"{calls} parallel same-tool calls, one per event at part index 0",
        tuple(out),
    )


def _rows_object(rng: random.Random, size: int) -> dict[str, Any]:
    """An args object of about ``size`` bytes of JSON: a table of records."""
    rows: list[dict[str, Any]] = []
    obj: dict[str, Any] = {"table": "events", "upsert": True, "rows": rows}
    total = 40
    number = 0
    while total < size:
        row = {
            "id": number,
            "name": " ".join(rng.choice(_WORDS) for _ in range(3)),
            "email": f"user{number}@example.com",
            "score": round(rng.uniform(0, 100), 3),
            "active": rng.random() < 0.5,
            "tags": [rng.choice(_WORDS) for _ in range(rng.randint(0, 4))],
            "meta": {"source": rng.choice(("web", "api", "batch")), "rank": rng.randint(1, 9)},
        }
        rows.append(row)
        total += len(_dumps(row)) + 1
        number += 1
    return obj


def big_args(
    size: int = 1 << 20, resends: int = 20, *, seed: int = SEED, name: str = ""
) -> Capture:
    """One ``bulk_insert`` call whose ``size``-byte args object is re-sent unchanged on
    ``resends`` events (the last one with ``STOP``)."""
    rng = random.Random(seed + 3)
    rid = _response_id(rng)
    usage = _Usage(thoughts=311)
    args = _rows_object(rng, size)
    signature = _signature(rng)
    out: list[bytes] = []
    for number in range(resends):
        usage.candidates += 1000
        last = number == resends - 1
        part = {
            "functionCall": {"name": "bulk_insert", "args": args},
            "thoughtSignature": signature,
        }
        event = _event([part], usage.snapshot(final=last), rid, finish="STOP" if last else None)
        out.append(encode_event(event))
    label = f"{size / (1 << 20):g} MB" if size >= 1 << 19 else f"{size >> 10} KB"
    return Capture(
        name or f"big-args-{label.replace(' ', '')}",
        f"one {label} args object re-sent {resends}x",
        tuple(out),
    )


def _interactions_event(obj: dict[str, Any], event_id: str) -> bytes:
    """One Interactions SSE event as ``rxgem.testing.FakeGemini`` frames Google's: its
    ``event:`` line, its ``id:`` (the ``event_id`` to resume from) and its compact JSON,
    which carries the ``event_type`` and the ``event_id`` too."""
    data = json.dumps({**obj, "event_id": event_id}, separators=(",", ":"), ensure_ascii=False)
    return f"event: {obj['event_type']}\nid: {event_id}\ndata: {data}\n\n".encode()


def interactions_text(
    deltas: int = 2000, *, words: tuple[int, int] = (3, 30), seed: int = SEED, name: str = ""
) -> Capture:
    """A text answer like :func:`text_answer`'s (the same vocabulary and sizes) as an
    Interactions stream: ``interaction.created``, a ``thought`` step with its signature,
    then a ``model_output`` step whose text comes in ``deltas`` ``text`` deltas, then
    ``interaction.completed`` with the usage, and ``data: [DONE]``.

    :attr:`Capture.payloads` holds every event's JSON (``[DONE]`` aside): the floor's
    input, as for the ``generateContent`` captures.
    """
    rng = random.Random(seed)
    iid = "v1_" + _response_id(rng) + _response_id(rng)
    thoughts = rng.randint(100, 900)
    created = {"id": iid, "status": "in_progress", "object": "interaction", "model": MODEL}
    objs: list[dict[str, Any]] = [
        {"event_type": "interaction.created", "interaction": created},
        {"event_type": "interaction.status_update", "interaction_id": iid, "status": "in_progress"},
        {"event_type": "step.start", "index": 0, "step": {"type": "thought"}},
        {
            "event_type": "step.delta",
            "index": 0,
            "delta": {"type": "thought_signature", "signature": _signature(rng, 240)},
        },
        {"event_type": "step.stop", "index": 0},
        {"event_type": "step.start", "index": 1, "step": {"type": "model_output"}},
    ]
    output = 0
    for _ in range(deltas):
        text = _phrase(rng, *words)
        output += max(1, len(text) // 4)
        objs.append(
            {"event_type": "step.delta", "index": 1, "delta": {"type": "text", "text": text}}
        )
    usage = {
        "total_input_tokens": PROMPT_TOKENS,
        "input_tokens_by_modality": [{"modality": "text", "tokens": PROMPT_TOKENS}],
        "total_output_tokens": output,
        "total_thought_tokens": thoughts,
        "total_cached_tokens": 0,
        "total_tool_use_tokens": 0,
        "total_tokens": PROMPT_TOKENS + output + thoughts,
    }
    completed = {**created, "status": "completed", "usage": usage}
    objs += [
        {"event_type": "step.stop", "index": 1},
        {"event_type": "interaction.completed", "interaction": completed},
    ]
    events = [_interactions_event(obj, f"{iid}:{number}") for number, obj in enumerate(objs, 1)]
    return _InteractionsCapture(
        name or f"interactions-text-{deltas}",
        f"Interactions text answer, {deltas} text deltas, usage at the end",
        (*events, b"data: [DONE]\n\n"),
    )


def interactions_answer(capture: Capture, *, name: str = "") -> Capture:
    """``capture`` (a :func:`text_answer`) as the Interactions API would stream the same
    answer: the same text in one ``text`` delta per ``generateContent`` event, the last
    event's usage at ``interaction.completed``, no thought step (the text answer has no
    signature). Each event of the result holds the frames that stand for one event of
    ``capture`` (the first also opens the interaction and its ``model_output`` step; the last
    closes them and ends with ``data: [DONE]``), so an upstream that writes or paces one
    event at a time sends the same pieces with the same text on both APIs.
    """
    texts: list[str] = []
    usage: dict[str, Any] = {}
    response_id = ""
    for raw in capture.events:
        data = json.loads(raw.decode().removeprefix("data: "))
        parts = data["candidates"][0]["content"]["parts"]
        texts.append("".join(p["text"] for p in parts if "text" in p and not p.get("thought")))
        usage, response_id = data.get("usageMetadata", usage), data.get("responseId", "")
    iid = "v1_" + response_id
    created = {"id": iid, "status": "in_progress", "object": "interaction", "model": MODEL}
    prompt = usage.get("promptTokenCount", 0)
    completed = {
        **created,
        "status": "completed",
        "usage": {
            "total_input_tokens": prompt,
            "input_tokens_by_modality": [{"modality": "text", "tokens": prompt}],
            "total_output_tokens": usage.get("candidatesTokenCount", 0),
            "total_thought_tokens": usage.get("thoughtsTokenCount", 0),
            "total_tokens": usage.get("totalTokenCount", 0),
        },
    }
    groups: list[list[dict[str, Any]]] = [
        [{"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": text}}]
        for text in texts
    ]
    groups[0][:0] = [
        {"event_type": "interaction.created", "interaction": created},
        {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}},
    ]
    groups[-1] += [
        {"event_type": "step.stop", "index": 0},
        {"event_type": "interaction.completed", "interaction": completed},
    ]
    numbers = iter(range(1, sum(map(len, groups)) + 1))
    events = [
        b"".join(_interactions_event(obj, f"{iid}:{next(numbers)}") for obj in group)
        for group in groups
    ]
    events[-1] += b"data: [DONE]\n\n"
    return Capture(
        name or f"interactions-{capture.name}",
        f"{capture.name}'s answer as an Interactions stream, frames grouped per event",
        tuple(events),
    )


class _InteractionsCapture(Capture):
    """A capture of Interactions events: each payload is its ``data:`` line's JSON."""

    @cached_property
    def payloads(self) -> list[str]:
        return [
            event.decode().split("data: ", 1)[1].removesuffix("\n\n")
            for event in self.events
            if not event.startswith(b"data: [DONE]")
        ]


@dataclass(frozen=True)
class CaptureSpec:
    """A named capture of the benchmark, with an optional half-size variant (linearity)."""

    name: str
    make: Callable[[], Capture]
    half_name: str | None = None
    half: Callable[[], Capture] | None = None


CAPTURES: tuple[CaptureSpec, ...] = (
    CaptureSpec("text-2000", lambda: text_answer(2000, name="text-2000")),
    CaptureSpec("thinking-tools", lambda: thinking_tools(200, 200, name="thinking-tools")),
    CaptureSpec("parallel-16", lambda: parallel_calls(16, name="parallel-16")),
    CaptureSpec(
        "big-args-1MB",
        lambda: big_args(1 << 20, 20, name="big-args-1MB"),
        "big-args-512KB",
        lambda: big_args(1 << 19, 20, name="big-args-512KB"),
    ),
    CaptureSpec(
        "stream-100k",
        lambda: text_answer(100_000, words=(1, 4), name="stream-100k"),
        "stream-50k",
        lambda: text_answer(50_000, words=(1, 4), name="stream-50k"),
    ),
)
"""The captures of a default run, in table order."""

QUICK_CAPTURES: tuple[CaptureSpec, ...] = (
    *CAPTURES[:3],
    CaptureSpec(
        "big-args-256KB",
        lambda: big_args(1 << 18, 20, name="big-args-256KB"),
        "big-args-128KB",
        lambda: big_args(1 << 17, 20, name="big-args-128KB"),
    ),
    CaptureSpec(
        "stream-20k",
        lambda: text_answer(20_000, words=(1, 4), name="stream-20k"),
        "stream-10k",
        lambda: text_answer(10_000, words=(1, 4), name="stream-10k"),
    ),
)
"""The captures of ``--quick``: the two big ones scaled down (and so named differently)."""


def build(name: str) -> Capture:
    """The capture called ``name`` (in :data:`CAPTURES` or :data:`QUICK_CAPTURES`, or a
    half-size variant of one)."""
    for spec in (*CAPTURES, *QUICK_CAPTURES[3:]):
        if spec.name == name:
            return spec.make()
        if spec.half is not None and spec.half_name == name:
            return spec.half()
    raise KeyError(f"unknown capture {name!r}; known: {', '.join(s.name for s in CAPTURES)}")
