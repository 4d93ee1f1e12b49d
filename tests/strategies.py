"""Hypothesis strategies: valid Gemini streams, each with the outcome a correct translator gives.

A generated :class:`GeminiStream` is a list of ``GenerateContentResponse`` objects (plain JSON
data) plus its :class:`Expected` outcome, derived *by construction* from the README rules with the
default slot policy (never by running rxgem):

- text and thought parts of random Unicode (astral characters, U+2028/2029, NEL, quotes,
  backslashes, CR/LF, NUL, things that look like SSE framing);
- id-less complete calls with random JSON args, made distinguishable by construction: a new call
  is never identical to, nor a growth of, an earlier call of the same name (nor does one with
  ``{}`` args stay open for it to join), else it gets a distinguishing key or a fresh name;
- re-sends, always of the most recent id-less call of that name and in a later event:
  identical, grown (keys added, strings extended, arrays appended, recursively), or real args
  after a ``{}``/absent placeholder;
- Gemini 3 calls with ``functionCall.id``, re-sent with changed or identical args;
- parallel calls in one event (same name too) and across events;
- Vertex ``partialArgs`` streams: ``{name, willContinue}``, pieces addressing ``$.a``, ``$.a.b``,
  ``$.list[0]``, ``$['odd key']``, string values split in fragments with ``willContinue``, bare
  ``{willContinue: true}`` parts, and an ending by terminal ``{}``, by a last piece without
  ``willContinue``, by the next named call, or by the end of the stream;
- 1-3 candidates interleaved across events, finish reasons from the whole enum (unknown values
  too) on the last event, on every event, mid-stream, on a content-less terminator, or missing
  (then the stream ends with ``TruncatedStreamError``);
- usage snapshots (with counts, or count-less Vertex ones) and a prompt-block variant.

:func:`encode` serialises the responses to SSE bytes with a :class:`Framing` drawn per example:
CR, LF or CRLF, ``ensure_ascii`` or raw UTF-8, compact or Google's ``": "`` spacing, ``data:``
with or without the space, multi-line ``data``, JSON lines, comments, a BOM, ``[DONE]``, a
last event without its blank line.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = [
    "BLOCK_REASONS",
    "FINISH_REASONS",
    "PROPERTIES",
    "Expected",
    "ExpectedCall",
    "ExpectedChoice",
    "Framing",
    "GeminiStream",
    "blocked_streams",
    "encode",
    "examples",
    "framings",
    "gemini_streams",
    "is_growth",
    "openai_finish",
    "openai_usage",
    "same_json",
    "split_points",
    "texts",
]

# -- settings ------------------------------------------------------------------------------

_SCALE = float(os.environ.get("RXGEM_HYPOTHESIS_SCALE", "1"))


def examples(n: int) -> int:
    """``n`` examples, scaled by ``RXGEM_HYPOTHESIS_SCALE`` (e.g. 10 for a long local run)."""
    return max(1, int(n * _SCALE))


settings.register_profile(
    "rxgem-properties",
    deadline=None,
    # a whole stream is a large example by nature
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
    print_blob=True,
)
PROPERTIES = settings.get_profile("rxgem-properties")
"""The parent settings of the property tests (use ``@settings(PROPERTIES, max_examples=...)``).

It inherits the profile loaded when this module is imported: ``rxgem`` from ``conftest.py``
(derandomized: the same examples on every run, no example database), or the one given with
``--hypothesis-profile`` (``rxgem-explore`` for fresh examples)."""

# -- the README tables, written out independently of rxgem's code ---------------------------

FINISH_REASONS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "LANGUAGE",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_OTHER",
    "NO_IMAGE",
    "IMAGE_RECITATION",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
    "MISSING_THOUGHT_SIGNATURE",
    "MALFORMED_RESPONSE",
    "ESCALATION",
    "PUP_LIMITED_DISABLED",
    "CONTINUATION",
    "MODEL_ARMOR",
    "FAKE_ENUM",  # unknown values are tolerated (a recorded Vertex fixture has this one)
)
_LENGTH = {"MAX_TOKENS", "CONTINUATION"}
_CONTENT_FILTER = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "MODEL_ARMOR",
    "PUP_LIMITED_DISABLED",
}
BLOCK_REASONS = (
    "BLOCKED_REASON_UNSPECIFIED",
    "SAFETY",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "IMAGE_SAFETY",
    "MODEL_ARMOR",
    "JAILBREAK",
)
_UNSPECIFIED_BLOCK = {"BLOCKED_REASON_UNSPECIFIED"}


def openai_finish(native: str, *, has_calls: bool) -> str:
    """The README's finish-reason table."""
    if native in _LENGTH:
        return "length"
    if native in _CONTENT_FILTER:
        return "content_filter"
    return "tool_calls" if has_calls else "stop"


_USAGE_FIELDS = (
    "promptTokenCount",
    "candidatesTokenCount",
    "totalTokenCount",
    "thoughtsTokenCount",
    "cachedContentTokenCount",
    "toolUsePromptTokenCount",
)


def openai_usage(usage: dict[str, Any]) -> dict[str, Any]:
    """The README's usage table: ``{prompt, completion, total, reasoning, cached}``."""
    prompt = usage.get("promptTokenCount", 0) + usage.get("toolUsePromptTokenCount", 0)
    completion = usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": usage.get("totalTokenCount", prompt + completion),
        "reasoning_tokens": usage.get("thoughtsTokenCount"),
        "cached_tokens": usage.get("cachedContentTokenCount"),
    }


def is_growth(old: Any, new: Any) -> bool:
    """The README's growth rule: same keys or more, strings extended, arrays extended, recursively;
    scalars identical (same JSON type)."""
    if isinstance(old, dict):
        return isinstance(new, dict) and all(k in new and is_growth(old[k], new[k]) for k in old)
    if isinstance(old, list):
        return (
            isinstance(new, list)
            and len(new) >= len(old)
            and all(is_growth(a, b) for a, b in zip(old, new, strict=False))
        )
    if isinstance(old, str):
        return isinstance(new, str) and new.startswith(old)
    return type(old) is type(new) and old == new


def same_json(a: Any, b: Any) -> bool:
    """Equality of JSON values that also tells ``1`` from ``1.0`` from ``True``."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# -- leaf strategies ------------------------------------------------------------------------

_SPECIAL_TEXT = (
    "\u2028",
    "\u2029",
    "\u0085",
    '"',
    "\\",
    '\\"',
    "\n",
    "\r",
    "\r\n",
    "\t",
    "\x00",
    "\x1b",
    "\ufeff",
    "😀",
    "𝄞",
    "\U0010ffff",
    "👩‍👩‍👧",
    "é",
    "中文",
    "data: ",
    "\n\ndata: [DONE]\n\n",
    "{",
    "}]",
    "[",
    "</script>",
    "\\u0000",
)
_CHARS = st.characters(codec="utf-8")  # every code point but the surrogates

texts = st.lists(
    st.one_of(st.text(_CHARS, max_size=10), st.sampled_from(_SPECIAL_TEXT)), max_size=5
).map("".join)
"""Random Unicode text, biased towards what breaks framing and JSON escaping."""

_KEYS = st.one_of(
    st.sampled_from(["q", "path", "city", "n", "ids", "opts", "a", "b", "", "é", "a.b", "x y"]),
    st.text(_CHARS, max_size=6),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=10,
)
args_objects = st.dictionaries(_KEYS, json_values, max_size=4)

# Streamed (partialArgs) arguments: containers must be non-empty (only leaves are addressable);
# numbers are what a protobuf Value holds.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STREAM_KEYS = st.one_of(
    st.sampled_from(["q", "location", "recipe", "ingredients", "amount", "days", "x1", "_"]),
    # bracket-quoted keys: dots, brackets, quotes, backslashes, spaces, non-ASCII (no control
    # characters: their RFC 9535 escapes are covered by a separate test)
    st.text(st.characters(codec="utf-8", exclude_categories=["Cc"]), max_size=6),
)
_STREAM_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
streamed_values = st.recursive(
    _STREAM_SCALARS,
    lambda inner: (
        st.lists(inner, min_size=1, max_size=3)
        | st.dictionaries(_STREAM_KEYS, inner, min_size=1, max_size=3)
    ),
    max_leaves=8,
)
streamed_args = st.dictionaries(_STREAM_KEYS, streamed_values, max_size=4)

_NAMES = ("read_file", "search", "get_weather", "now", "f")
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_SIGNATURES = st.text(_B64, min_size=1)


# -- expected outcome -----------------------------------------------------------------------


@dataclass
class ExpectedCall:
    """One tool call a correct translator reports, with its final arguments."""

    name: str
    args: dict[str, Any]
    id: str | None  # Gemini's functionCall.id, else None (a minted call_… id)
    signature: str | None = None
    kind: str = "plain"  # "plain" (id-less, complete), "id", "streamed"
    last_step: int = -1  # the candidate step (event) that last touched it


@dataclass
class ExpectedChoice:
    content: str = ""
    reasoning: str = ""
    calls: list[ExpectedCall] = field(default_factory=list)
    text_signature: str | None = None
    native_finish: str | None = None  # the last finishReason (None: none came)
    finish: str | None = None  # OpenAI's finish_reason (None: truncated, no finish)


@dataclass
class Expected:
    choices: list[ExpectedChoice]
    usage: dict[str, Any] | None  # see openai_usage(); None: no usage chunk
    error: str | None  # "TruncatedStreamError" or None
    truncated: tuple[int, ...]
    model: str
    response_id: str | None
    last_usage: dict[str, Any] | None = None  # the usage a non-truncated ending reports

    @property
    def tool_names(self) -> list[str]:
        return sorted({call.name for choice in self.choices for call in choice.calls})


@dataclass
class GeminiStream:
    events: list[dict[str, Any]]
    expected: Expected

    def __repr__(self) -> str:  # what Hypothesis prints for a falsifying example
        body = ",\n  ".join(json.dumps(e, ensure_ascii=True) for e in self.events)
        return f"GeminiStream(events=[\n  {body}\n], expected={self.expected!r})"


# -- one candidate's script -----------------------------------------------------------------


def _render_key(key: str) -> str:
    if _IDENT.match(key):
        return f".{key}"
    return "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, path + _render_key(k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


Draw = Callable[[st.SearchStrategy[Any]], Any]


def _pieces(draw: Draw, args: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``partialArgs`` pieces that assemble ``args``, in order."""
    out: list[dict[str, Any]] = []
    for path, value in _leaves(args, "$"):
        if isinstance(value, str):
            cuts = sorted(draw(st.sets(st.integers(1, max(1, len(value) - 1)), max_size=3)))
            cuts = [c for c in cuts if c < len(value)]
            bounds = [0, *cuts, len(value)]
            fragments = [value[a:b] for a, b in itertools.pairwise(bounds)]
            closing = bool(value) and draw(st.booleans())  # a closing "" fragment
            for i, fragment in enumerate(fragments):
                piece: dict[str, Any] = {"jsonPath": path, "stringValue": fragment}
                if closing or i < len(fragments) - 1:
                    piece["willContinue"] = True
                out.append(piece)
            if closing:
                out.append({"jsonPath": path, "stringValue": ""})
        elif isinstance(value, bool):
            out.append({"jsonPath": path, "boolValue": value})
        elif value is None:
            out.append({"jsonPath": path, "nullValue": "NULL_VALUE"})
        else:
            out.append({"jsonPath": path, "numberValue": value})
    return out


def _grow(draw: Draw, value: Any, depth: int = 0) -> Any:
    """A growth of ``value`` (possibly ``value`` itself) in the README's sense."""
    if isinstance(value, dict):
        grown = {
            k: (_grow(draw, v, depth + 1) if draw(st.booleans()) else v) for k, v in value.items()
        }
        for key in draw(st.lists(_KEYS, max_size=2)):
            if key not in grown:
                grown[key] = draw(json_values)
        return grown
    if isinstance(value, list):
        grown_list = [_grow(draw, v, depth + 1) if draw(st.booleans()) else v for v in value]
        return grown_list + draw(st.lists(json_values, max_size=2))
    if isinstance(value, str):
        return value + draw(texts)
    return value


class _Ids:
    """Unique Gemini ids and fresh names for one stream."""

    def __init__(self, draw: Draw) -> None:
        self._prefix = draw(st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=4, max_size=8))
        self._n = 0

    def next(self) -> int:
        self._n += 1
        return self._n

    def gemini_id(self) -> str:
        return f"{self._prefix}-{self.next():04d}"


class _Script:
    """Builds one candidate's steps (each step's parts go into one event) and its outcome."""

    def __init__(self, draw: Draw, ids: _Ids) -> None:
        self.draw = draw
        self.ids = ids
        self.steps: list[list[dict[str, Any]]] = []
        self.choice = ExpectedChoice()
        self.streaming: ExpectedCall | None = None
        self.queue: list[dict[str, Any]] = []  # pieces of the streaming call still to send
        self.output = False  # whether rxgem sees output for this candidate

    # -- helpers

    def _sig(self, p: float = 0.25) -> str | None:
        return self.draw(_SIGNATURES) if self.draw(st.integers(0, 99)) < p * 100 else None

    def _call_part(self, body: dict[str, Any], call: ExpectedCall) -> dict[str, Any]:
        part: dict[str, Any] = {"functionCall": body}
        signature = self._sig()
        if signature:
            part["thoughtSignature"] = signature
            call.signature = signature
        self.output = True
        return part

    def _end_streaming(self) -> None:
        assert not self.queue
        self.streaming = None

    def _conflicts(self, name: str, args: dict[str, Any], step: int) -> bool:
        """Whether a new id-less call could be taken for a re-send of an earlier call."""
        return any(
            call.kind == "plain"
            and call.name == name
            and call.last_step != step
            and (not call.args or is_growth(call.args, args))
            for call in self.choice.calls
        )

    def _resend_target(self, step: int) -> list[ExpectedCall]:
        latest: dict[str, ExpectedCall] = {}
        for call in self.choice.calls:
            if call.kind == "plain":
                latest[call.name] = call
        return [c for c in latest.values() if c.last_step < step]

    # -- actions

    def text(self, step: int, thought: bool) -> list[dict[str, Any]]:
        value = self.draw(texts)
        part: dict[str, Any] = {"text": value}
        if thought:
            part["thought"] = True
            self.choice.reasoning += value
        else:
            if self.draw(st.integers(0, 9)) == 0:
                part["thought"] = False
            self.choice.content += value
        signature = self._sig(0.15)
        if signature:
            part["thoughtSignature"] = signature
            self.choice.text_signature = signature
        if value or signature:
            self.output = True
        return [part]

    def other_part(self, step: int) -> list[dict[str, Any]]:
        return [
            self.draw(
                st.sampled_from(
                    [
                        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
                        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
                        {"text": ""},
                    ]
                )
            )
        ]

    def new_call(self, step: int) -> list[dict[str, Any]]:
        name = self.draw(st.sampled_from(_NAMES))
        placeholder = self.draw(st.integers(0, 5)) == 0
        args: dict[str, Any] = {} if placeholder else self.draw(args_objects)
        if self._conflicts(name, args, step) and not placeholder:
            args = {**args, "#": self.ids.next()}  # a distinguishing key...
        if self._conflicts(name, args, step):
            name = f"{name}_{self.ids.next()}"  # ...or a fresh name
        call = ExpectedCall(name, args, None, kind="plain", last_step=step)
        self.choice.calls.append(call)
        body: dict[str, Any] = {"name": name}
        if args or not self.draw(st.booleans()):  # absent args = {}
            body["args"] = args
        return [self._call_part(body, call)]

    def resend(self, step: int) -> list[dict[str, Any]]:
        call = self.draw(st.sampled_from(self._resend_target(step)))
        if not call.args:
            args = self.draw(args_objects)  # the real args after a placeholder
        elif self.draw(st.booleans()):
            args = json.loads(json.dumps(call.args))  # identical
        else:
            args = _grow(self.draw, call.args)
        assert is_growth(call.args, args) or not call.args
        call.args = args
        call.last_step = step
        return [self._call_part({"name": call.name, "args": args}, call)]

    def id_call(self, step: int) -> list[dict[str, Any]]:
        name = self.draw(st.sampled_from(_NAMES))
        args = self.draw(args_objects)
        call = ExpectedCall(name, args, self.ids.gemini_id(), kind="id", last_step=step)
        self.choice.calls.append(call)
        return [self._call_part({"name": name, "args": args, "id": call.id}, call)]

    def id_resend(self, step: int) -> list[dict[str, Any]]:
        call = self.draw(st.sampled_from([c for c in self.choice.calls if c.kind == "id"]))
        if self.draw(st.booleans()):
            call.args = self.draw(args_objects)  # a changed replay: the id decides
        call.last_step = step
        return [self._call_part({"name": call.name, "args": call.args, "id": call.id}, call)]

    def stream_start(self, step: int) -> list[dict[str, Any]]:
        name = self.draw(st.sampled_from(_NAMES))
        args = self.draw(streamed_args)
        gemini_id = self.ids.gemini_id() if self.draw(st.integers(0, 4)) == 0 else None
        call = ExpectedCall(name, args, gemini_id, kind="streamed", last_step=step)
        self.choice.calls.append(call)
        self.streaming = call
        self.queue = _pieces(self.draw, args)
        body: dict[str, Any] = {"name": name, "willContinue": True}
        if gemini_id:
            body["id"] = gemini_id
        return [self._call_part(body, call)]

    def stream_pieces(self, step: int) -> list[dict[str, Any]]:
        assert self.streaming is not None
        if self.draw(st.integers(0, 5)) == 0:
            return [{"functionCall": {"willContinue": True}}]  # a bare continuation
        count = self.draw(st.integers(1, 3))
        pieces, self.queue = self.queue[:count], self.queue[count:]
        body: dict[str, Any] = {"partialArgs": pieces, "willContinue": True}
        if not self.queue and self.draw(st.booleans()):
            del body["willContinue"]  # the last piece without willContinue completes the call
            self._end_streaming()
        return [{"functionCall": body}]

    def terminal(self, step: int) -> list[dict[str, Any]]:
        self._end_streaming()
        return [{"functionCall": {}}]

    # -- steps

    def step(self, step: int) -> None:
        parts: list[dict[str, Any]] = []
        for _ in range(self.draw(st.integers(1, 3))):
            actions = ["text", "text", "thought", "other"]
            if self.streaming is not None and self.queue:
                actions += ["pieces", "pieces", "pieces"]
            else:
                actions += ["call", "call", "id_call", "stream"]
                if self._resend_target(step):
                    actions += ["resend", "resend"]
                if any(c.kind == "id" for c in self.choice.calls):
                    actions += ["id_resend"]
                if self.streaming is not None:
                    actions += ["terminal", "terminal"]
            action = self.draw(st.sampled_from(actions))
            named = action in ("call", "id_call", "stream", "resend", "id_resend")
            if named and self.streaming is not None:
                self._end_streaming()  # the next named call completes a streamed call
            if action == "text":
                parts += self.text(step, thought=False)
            elif action == "thought":
                parts += self.text(step, thought=True)
            elif action == "other":
                parts += self.other_part(step)
            elif action == "pieces":
                parts += self.stream_pieces(step)
            elif action == "call":
                parts += self.new_call(step)
            elif action == "resend":
                parts += self.resend(step)
            elif action == "id_call":
                parts += self.id_call(step)
            elif action == "id_resend":
                parts += self.id_resend(step)
            elif action == "stream":
                parts += self.stream_start(step)
            else:
                parts += self.terminal(step)
        self.steps.append(parts)

    def finish_streaming(self) -> None:
        """Send the pieces still queued; maybe a terminal, else the end of the stream ends it."""
        while self.queue:
            count = self.draw(st.integers(1, 3))
            pieces, self.queue = self.queue[:count], self.queue[count:]
            self.steps.append([{"functionCall": {"partialArgs": pieces, "willContinue": True}}])
        if self.streaming is not None and self.draw(st.booleans()):
            self.steps[-1].append({"functionCall": {}})
            self._end_streaming()


_FINISH_MODES = ("last", "last", "every", "mid", "terminator", "missing")


def _script(draw: Draw, ids: _Ids, finish_mode: str) -> tuple[_Script, list[str | None]]:
    script = _Script(draw, ids)
    if finish_mode != "missing" and draw(st.integers(0, 11)) == 0:
        # a silent candidate: only a finishReason (SAFETY: "the content field is empty if
        # content filters block the output"); it still gets its choice and finish
        final = draw(st.sampled_from(FINISH_REASONS))
        script.steps.append([])
        script.choice.native_finish = final
        script.choice.finish = openai_finish(final, has_calls=False)
        return script, [final]
    n_steps = draw(st.integers(1, 7))
    for step in range(n_steps):
        script.step(step)
    script.finish_streaming()
    if not script.output:  # a candidate without finish must have output (else no choice)
        script.steps[0].insert(0, {"text": draw(texts.filter(bool))})
        script.choice.content = script.steps[0][0]["text"] + script.choice.content
        script.output = True
    final = draw(st.sampled_from(FINISH_REASONS))
    reasons: list[str | None] = [None] * len(script.steps)
    if finish_mode == "terminator":
        shapes: list[list[dict[str, Any]]] = [[], [{"text": ""}]]
        if script.streaming is not None:  # Vertex: the terminal `{}` rides on the last event
            shapes.append([{"functionCall": {}}])
        script.steps.append(list(draw(st.sampled_from(shapes))))
        reasons.append(final)
    elif finish_mode == "every":
        reasons = [draw(st.sampled_from(FINISH_REASONS)) for _ in script.steps]
        reasons[-1] = final
    elif finish_mode == "mid":
        reasons = [
            draw(st.sampled_from(FINISH_REASONS)) if draw(st.booleans()) else None
            for _ in script.steps
        ]
        reasons[-1] = final
    elif finish_mode == "last":
        reasons[-1] = final
    choice = script.choice
    if finish_mode != "missing":
        choice.native_finish = final
        choice.finish = openai_finish(final, has_calls=bool(choice.calls))
    return script, reasons


@st.composite
def _usage(draw: Draw) -> dict[str, Any]:
    if draw(st.integers(0, 3)) == 0:
        return {"trafficType": "ON_DEMAND"}  # Vertex: a snapshot without counts
    fields = draw(st.lists(st.sampled_from(_USAGE_FIELDS), min_size=1, unique=True))
    usage: dict[str, Any] = {f: draw(st.integers(0, 10**6)) for f in fields}
    if draw(st.booleans()):
        usage["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": 1}]
    return usage


def _meta(draw: Draw) -> tuple[dict[str, Any], str, str | None]:
    version = draw(
        st.sampled_from(
            [None, "gemini-2.5-flash", "models/gemini-2.5-flash-preview-05-20", "gemini-3-pro"]
        )
    )
    response_id = draw(st.one_of(st.none(), st.text("abcdefghijkLMNOP0123456789_-", min_size=1)))
    meta: dict[str, Any] = {}
    if version is not None:
        meta["modelVersion"] = version
    if response_id is not None:
        meta["responseId"] = response_id
    model = version.removeprefix("models/") if version else "gemini"
    return meta, model, response_id


@st.composite
def gemini_streams(
    draw: Draw, *, max_candidates: int = 3, truncated: bool | None = False
) -> GeminiStream:
    """A valid Gemini stream with its expected outcome.

    ``truncated``: ``False`` (every candidate gets a finishReason), ``True`` (at least one
    candidate never does: the stream ends with TruncatedStreamError) or ``None`` (either).
    """
    ids = _Ids(draw)
    n = draw(st.integers(1, max_candidates))
    allowed = [m for m in _FINISH_MODES if truncated is not False or m != "missing"]
    modes = [draw(st.sampled_from(allowed)) for _ in range(n)]
    if truncated and "missing" not in modes:
        modes[draw(st.integers(0, n - 1))] = "missing"
    scripts = [_script(draw, ids, mode) for mode in modes]
    meta, model, response_id = _meta(draw)

    events: list[dict[str, Any]] = []
    usage: dict[str, Any] | None = None
    position = [0] * n
    while True:
        remaining = [i for i in range(n) if position[i] < len(scripts[i][0].steps)]
        if not remaining:
            break
        extra = draw(st.integers(0, 15))
        if extra == 0:  # an event with no candidates: usage only, or only unknown keys
            event: dict[str, Any] = draw(
                st.sampled_from([{"usageMetadata": {"trafficType": "ON_DEMAND"}}, {"x": [1]}])
            )
            events.append({**event, **meta} if "x" not in event else event)
            continue
        chosen = draw(st.lists(st.sampled_from(remaining), min_size=1, unique=True))
        candidates = []
        for index in chosen:
            script, reasons = scripts[index]
            parts = script.steps[position[index]]
            reason = reasons[position[index]]
            position[index] += 1
            candidate: dict[str, Any] = {}
            if parts:
                candidate["content"] = {"parts": parts, "role": "model"}
            else:
                shape = draw(st.integers(0, 2))
                if shape == 1:
                    candidate["content"] = {"role": "model"}
                elif shape == 2:
                    candidate["content"] = {"parts": []}
            if reason is not None:
                candidate["finishReason"] = reason
                if draw(st.integers(0, 3)) == 0:
                    candidate["finishMessage"] = "Finished"
            if index != 0 or draw(st.booleans()):
                candidate["index"] = index
            if draw(st.integers(0, 5)) == 0:
                candidate["safetyRatings"] = [
                    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}
                ]
            candidates.append(candidate)
        event = {"candidates": candidates}
        if draw(st.booleans()):
            event["usageMetadata"] = draw(_usage())
        event.update(meta)
        events.append(event)
    for event in events:
        snapshot = event.get("usageMetadata")
        if snapshot and any(f in snapshot for f in _USAGE_FIELDS):
            usage = snapshot

    truncated_ix = tuple(i for i, mode in enumerate(modes) if mode == "missing")
    expected = Expected(
        choices=[script.choice for script, _ in scripts],
        usage=openai_usage(usage) if usage is not None and not truncated_ix else None,
        last_usage=openai_usage(usage) if usage is not None else None,
        error="TruncatedStreamError" if truncated_ix else None,
        truncated=truncated_ix,
        model=model,
        response_id=response_id,
    )
    return GeminiStream(events, expected)


@st.composite
def blocked_streams(draw: Draw) -> GeminiStream:
    """A prompt block: ``promptFeedback.blockReason`` and no candidates."""
    reason = draw(st.sampled_from((*BLOCK_REASONS, "BLOCK_REASON_UNSPECIFIED")))
    meta, model, response_id = _meta(draw)
    feedback: dict[str, Any] = {"blockReason": reason}
    if draw(st.booleans()):
        feedback["blockReasonMessage"] = draw(texts)
    if draw(st.booleans()):
        feedback["safetyRatings"] = [
            {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}
        ]
    event: dict[str, Any] = {"promptFeedback": feedback, **meta}
    usage = draw(st.one_of(st.none(), _usage()))
    if usage is not None:
        event["usageMetadata"] = usage
    counted = usage is not None and any(f in usage for f in _USAGE_FIELDS)
    unspecified = reason in _UNSPECIFIED_BLOCK or reason == "BLOCK_REASON_UNSPECIFIED"
    finish = "stop" if unspecified else "content_filter"
    choice = ExpectedChoice(native_finish=reason, finish=finish)
    expected = Expected(
        choices=[choice],
        usage=openai_usage(usage) if usage is not None and counted else None,
        last_usage=openai_usage(usage) if usage is not None and counted else None,
        error=None,
        truncated=(),
        model=model,
        response_id=response_id,
    )
    return GeminiStream([event], expected)


# -- serialisation --------------------------------------------------------------------------


@dataclass(frozen=True)
class Framing:
    """How a list of responses is written as an SSE body."""

    eol: str = "\r\n"
    ensure_ascii: bool = False
    google_spacing: bool = True  # `": "` after keys, no space after commas
    data_prefix: str = "data: "
    style: str = "sse"  # "sse": one data line per event; "multiline": several; "jsonl": raw lines
    comments: bool = False
    bom: bool = False
    done: bool = False  # a final `data: [DONE]`
    last_blank: bool = True  # the last event ends with its blank line
    last_eol: bool = True  # the last line ends with a line end

    def with_eol(self, eol: str) -> Framing:
        return dataclasses.replace(self, eol=eol)


framings = st.builds(
    Framing,
    eol=st.sampled_from(["\r\n", "\n", "\r"]),
    ensure_ascii=st.booleans(),
    google_spacing=st.booleans(),
    data_prefix=st.sampled_from(["data: ", "data:"]),
    style=st.sampled_from(["sse", "sse", "sse", "multiline", "jsonl"]),
    comments=st.booleans(),
    bom=st.booleans(),
    done=st.booleans(),
    last_blank=st.booleans(),
    last_eol=st.booleans(),
)


def encode(events: Sequence[dict[str, Any]], framing: Framing = Framing()) -> bytes:
    """SSE bytes of ``events`` as Gemini (or a proxy) would write them."""
    eol = framing.eol
    separators = (",", ": ") if framing.google_spacing else (",", ":")
    out: list[str] = []
    if framing.comments:
        out.append(f": keep-alive{eol}")
    for number, event in enumerate(events):
        last = number == len(events) - 1
        if framing.style == "multiline":
            text = json.dumps(event, ensure_ascii=framing.ensure_ascii, indent=1)
            lines = [f"{framing.data_prefix}{line}{eol}" for line in text.split("\n")]
        else:
            text = json.dumps(event, ensure_ascii=framing.ensure_ascii, separators=separators)
            prefix = "" if framing.style == "jsonl" else framing.data_prefix
            lines = [f"{prefix}{text}{eol}"]
        out.extend(lines)
        if not last or framing.last_blank or framing.done:
            out.append(eol)
        if framing.comments and not last:
            out.append(f": ping {number}{eol}")
    if framing.done:
        out.append(f"data: [DONE]{eol}{eol}")
    if not framing.last_eol and not framing.last_blank and not framing.done:
        out[-1] = out[-1].removesuffix(eol)  # the body ends inside its last line
    body = "".join(out).encode("utf-8")
    return b"\xef\xbb\xbf" + body if framing.bom else body


def split_points(data: bytes) -> list[int]:
    """The awkward places to split ``data``: inside UTF-8 sequences and between CR and LF."""
    return [
        i
        for i in range(1, len(data))
        if 0x80 <= data[i] <= 0xBF or (data[i - 1] == 0x0D and data[i] == 0x0A)
    ]
