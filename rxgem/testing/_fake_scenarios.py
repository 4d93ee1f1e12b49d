"""FakeGemini's scenarios: an answer chosen from what a request offers, as Gemini would give it.

With no scripted responses, FakeGemini reads each request and answers from a named
scenario (:data:`SCENARIOS`): tools offered and no tool result yet get a call to one of
them, with arguments made from its JSON schema (:func:`schema_value`); a tool result
gets an answer that mentions it; a thinking config gets thoughts; a request for JSON gets
JSON valid against its schema (:mod:`._fake_structured`); anything else gets the ``text``
sample. A scenario can be forced by name, or by a file (:func:`load_scenario`): a recorded
capture (``.sse``: the bytes of a ``streamGenerateContent?alt=sse`` body, sent as they
are), or a script of ``GenerateContentResponse`` objects, one JSON list or one object per
line (JSONL), sent as SSE events; an Interactions create gets the same events as a run
(:func:`~._fake_structured.interaction_from_sse`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from copy import deepcopy
from os import PathLike
from pathlib import Path
from typing import Any, Final

from .. import samples
from ._fake_call_ids import CallIds, calls_made
from ._fake_interactions import InteractionCall, google_error
from ._fake_response import FakeResponse
from ._fake_signatures import SignatureBook
from ._fake_structured import (
    TOO_COMPLEX,
    JsonAsk,
    SchemaTooComplex,
    asked_json,
    gemini_json,
    interaction_from_sse,
    interaction_json,
)
from ._fake_tool_choice import calling
from ._gemini_builders import (
    api_error,
    blocked,
    call,
    code,
    code_result,
    event,
    finish,
    text,
    thought,
    usage,
)
from ._gemini_validation import candidate_count_problems, gemini_request_problems, invalid_argument
from ._interaction_script import (
    FakeInteraction,
    call_step,
    code_steps,
    interaction_usage,
    text_step,
    thought_step,
)
from ._schema_values import schema_value

__all__ = [
    "SCENARIOS",
    "Scenarios",
    "choose_scenario",
    "gemini_scenario",
    "interaction_scenario",
    "load_scenario",
    "schema_value",
]

SCENARIOS: Final = (
    "text",
    "thinking",
    "tool-call",
    "parallel-calls",
    "tool-answer",
    "json",
    "code-execution",
    "blocked",
    "error-mid-stream",
    "truncated",
)
"""The scenario names, for ``scenario=`` and ``--fake-scenario``."""
_SIGNATURE: Final = "c2NlbmFyaW8tc2lnbmF0dXJl"
_GREETING: Final = "Hello from FakeGemini."
_THOUGHT: Final = "Thinking about the question first."
_ANSWER: Final = "Here is a considered answer."


# --------------------------------------------------------------------------- reading a request


def _tools(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The (name, parameters schema) of each function a request offers, in order."""
    found: list[tuple[str, Any]] = []
    for tool in body.get("tools") or ():
        if not isinstance(tool, Mapping):
            continue
        if tool.get("type") == "function" and tool.get("name"):  # Interactions
            found.append((str(tool["name"]), tool.get("parameters")))
        for key in ("functionDeclarations", "function_declarations"):
            for decl in tool.get(key) or ():
                if isinstance(decl, Mapping) and decl.get("name"):
                    schema = decl.get("parameters") or decl.get("parametersJsonSchema")
                    found.append((str(decl["name"]), schema))
    return found


def _results(body: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The (name, result) of the tool results in the request's last turn."""
    if "contents" in body:
        contents = body.get("contents") or []
        last = contents[-1] if contents and isinstance(contents[-1], Mapping) else {}
        return [
            (str(p["functionResponse"].get("name")), p["functionResponse"].get("response"))
            for p in last.get("parts") or ()
            if isinstance(p, Mapping) and isinstance(p.get("functionResponse"), Mapping)
        ]
    steps = body.get("input")
    steps = steps if isinstance(steps, list) else []
    tail: list[Mapping[str, Any]] = []
    for step in reversed(steps):
        if not isinstance(step, Mapping) or step.get("type") != "function_result":
            break
        tail.insert(0, step)
    return [(str(s.get("name")), s.get("result")) for s in tail]


def _thinks(body: Mapping[str, Any]) -> bool:
    config = body.get("generationConfig") or body.get("generation_config") or {}
    thinking = config.get("thinkingConfig") or {}
    if thinking.get("includeThoughts"):
        return True
    return config.get("thinking_summaries") not in (None, "none") or bool(
        config.get("thinking_level") and config.get("thinking_summaries")
    )


def choose_scenario(body: Any) -> str:
    """The scenario a request body (generateContent or Interactions create) asks for."""
    if not isinstance(body, Mapping):
        return "text"
    mode = calling(body)[0]
    if _tools(body) and mode == "any":
        return "tool-call"
    if _results(body):
        return "json" if asked_json(body) else "tool-answer"
    if _tools(body) and mode != "none":
        return "tool-call"
    if asked_json(body):
        return "json"
    if _thinks(body):
        return "thinking"
    return "text"


def _arguments(body: Mapping[str, Any], count: int) -> list[tuple[str, dict[str, Any]]]:
    allowed = calling(body)[1]
    offered = _tools(body)
    tools = [tool for tool in offered if tool[0] in allowed] or offered
    tools = tools or [("lookup", {"type": "object", "properties": {"query": {}}})]
    picked = [tools[i % len(tools)] for i in range(count)]
    out = []
    for name, schema in picked:
        value = schema_value(schema or {"type": "object"}, name)
        out.append((name, value if isinstance(value, dict) else {}))
    return out


def _sign(
    signatures: SignatureBook | None,
    model: str,
    *,
    call: tuple[str, dict[str, Any]] | None = None,
    text: str | None = None,
    thought: str | None = None,
) -> str:
    """The signature of one part the scenario sends (a call, a text or a thought)."""
    if signatures is None:
        return _SIGNATURE
    if call is not None:
        return signatures.call(model, *call)
    if text is not None:
        return signatures.text(model, text)
    return signatures.thought(model, thought or "")


def _summary(results: Sequence[tuple[str, Any]]) -> str:
    said = "; ".join(
        f"{name} returned {json.dumps(result, ensure_ascii=False)}" for name, result in results
    )
    return f"From the tool results: {said}." if said else "There was no tool result."


# --------------------------------------------------------------------------- generateContent


def _candidate_count(request: Mapping[str, Any]) -> int:
    config = request.get("generationConfig")
    count = config.get("candidateCount", 1) if isinstance(config, Mapping) else 1
    return count if isinstance(count, int) and count > 1 else 1


def _fan_out(sse: bytes, count: int) -> bytes:
    """``sse`` with each candidate answered ``count`` times, as Gemini does for
    ``candidateCount``: candidate ``i`` gets its ``index``, its parts and finish, and its
    first answer text starts with ``Answer {i + 1}:`` so the candidates differ."""
    out: list[bytes] = []
    started: set[int] = set()
    for line in sse.splitlines():
        if not line.startswith(b"data:"):
            continue
        data = json.loads(line[5:])
        if data.get("candidates"):
            (one,) = data["candidates"]
            data["candidates"] = [{**deepcopy(one), "index": i} for i in range(count)]
            for i, candidate in enumerate(data["candidates"][1:], start=1):
                for part in (candidate.get("content") or {}).get("parts") or ():
                    if "text" in part and not part.get("thought") and i not in started:
                        part["text"] = f"Answer {i + 1}: {part['text']}"
                        started.add(i)
        out.append(b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\r\n\r\n")
    return b"".join(out)


def gemini_scenario(
    name: str, body: Any, *, model: str, signatures: SignatureBook | None = None
) -> bytes:
    """The ``streamGenerateContent?alt=sse`` body of scenario ``name`` for ``body``:
    ``generationConfig.candidateCount`` candidates (one by default), signed by
    ``signatures`` (without it, with one constant signature)."""
    request = body if isinstance(body, Mapping) else {}
    count = _candidate_count(request)
    if name == "json":  # each candidate its own JSON (no "Answer N:" prefix to break it)
        ask = asked_json(request) or JsonAsk()
        sig = _sign(signatures, model, text=name) if _thinks(request) else None
        return gemini_json(
            request, ask, model=model, count=count, thoughts=bool(sig), signature=sig
        )
    sse = _one_candidate(name, request, model=model, signatures=signatures)
    return sse if count == 1 else _fan_out(sse, count)


def _one_candidate(
    name: str, request: Mapping[str, Any], *, model: str, signatures: SignatureBook | None
) -> bytes:

    def ev(*pieces: Any) -> bytes:
        return event(*pieces, model=model)

    if name == "text":
        return samples.read("text")
    if name == "thinking":
        return b"".join(
            (
                ev(thought(_THOUGHT)),
                ev(text(_ANSWER, sig=_sign(signatures, model, text=_ANSWER))),
                ev(text(" Nothing else to add."), finish("STOP"), usage(8, 9, thoughts=6)),
            )
        )
    if name in ("tool-call", "parallel-calls"):
        calls = _arguments(request, 1 if name == "tool-call" else 2)
        parts = [
            call(tool, args, sig=_sign(signatures, model, call=(tool, args)) if i == 0 else None)
            for i, (tool, args) in enumerate(calls)
        ]
        return ev(*parts, finish("STOP"), usage(12, 6))
    if name == "tool-answer":
        words = _summary(_results(request))
        return ev(text(words[: len(words) // 2])) + ev(
            text(words[len(words) // 2 :]), finish("STOP"), usage(20, 12)
        )
    if name == "code-execution":
        return b"".join(
            (
                ev(code("print(sum(range(10)))")),
                ev(code_result("45\n")),
                ev(text("The sum of 0..9 is 45."), finish("STOP"), usage(10, 14)),
            )
        )
    if name == "blocked":
        return event(blocked("SAFETY"), usage(9, 0), model=model)
    if name == "error-mid-stream":
        return ev(text("The answer starts here")) + event(
            api_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
            response_id=None,
            model=None,
        )
    if name == "truncated":
        return ev(text("This answer stops")) + ev(text(" in the middle of"))
    raise ValueError(f"no scenario named {name!r}; scenarios: {', '.join(SCENARIOS)}")


def load_scenario(path: str | PathLike[str]) -> bytes:
    """A scenario file's SSE body: a capture as is, or a JSON/JSONL script as events."""
    if not Path(path).is_file():
        raise ValueError(
            f"no scenario or file named {str(path)!r}; scenarios: {', '.join(SCENARIOS)}"
        )
    raw = Path(path).read_bytes()
    stripped = raw.lstrip()
    if stripped.startswith((b"data:", b":", b"event:", b"id:")) or not stripped:
        return raw
    try:
        objects = _script_objects(raw)
        if not all(isinstance(o, dict) for o in objects):
            raise ValueError("a script holds GenerateContentResponse objects")
        return b"".join(b"data: " + json.dumps(o).encode() + b"\r\n\r\n" for o in objects)
    except RecursionError:
        raise ValueError(f"{path}: JSON nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def _script_objects(raw: bytes) -> list[Any]:
    """The objects of a JSON or JSONL script; ``ValueError`` names the line at fault."""
    try:
        data = json.loads(raw)
        return data if isinstance(data, list) else [data]
    except ValueError:
        pass
    objects = []
    for number, line in enumerate(raw.splitlines(), 1):
        if line.strip():
            try:
                objects.append(json.loads(line))
            except ValueError as exc:
                where = getattr(exc, "msg", None) or str(exc)
                column = getattr(exc, "colno", None)
                at = f"line {number}" + (f", column {column}" if column else "")
                raise ValueError(f"neither SSE, JSON nor JSONL: {at}: {where}") from None
    return objects


def merged_response(sse: bytes) -> dict[str, Any]:
    """The events of an SSE body as one ``generateContent`` response (each candidate's
    parts joined)."""
    merged: dict[str, Any] = {}
    candidates: dict[int, dict[str, Any]] = {}
    parts: dict[int, list[Any]] = {}
    for line in sse.splitlines():
        if not line.startswith(b"data:"):
            continue
        data = json.loads(line[5:])
        if "error" in data:
            return dict(data)  # the caller answers with Google's error status
        for candidate in data.get("candidates") or ():
            index = int(candidate.get("index", 0))
            parts.setdefault(index, []).extend((candidate.get("content") or {}).get("parts") or ())
            rest = {k: v for k, v in candidate.items() if k != "content"}
            candidates.setdefault(index, {}).update(rest)
        merged.update({k: v for k, v in data.items() if k != "candidates"})
    if candidates:
        merged["candidates"] = [
            {**candidates[i], "content": {"parts": parts[i], "role": "model"}}
            for i in sorted(candidates)
        ]
    return merged


# --------------------------------------------------------------------------- Interactions


def interaction_scenario(
    name: str, body: Any, *, calls_before: int = 0, signatures: SignatureBook | None = None
) -> FakeInteraction:
    """The Interactions run of scenario ``name`` for a create ``body``; its calls are
    numbered after the ``calls_before`` the conversation already holds (``call-N``), so
    that no two calls of a conversation share an id, as at Google; its thought steps are
    signed by ``signatures`` (without it, with one constant signature)."""
    request = body if isinstance(body, Mapping) else {}
    model = str(request.get("model") or "").removeprefix("models/")
    if name == "text":
        return FakeInteraction(steps=(text_step(_GREETING, pieces=2),))
    if name == "thinking":
        return FakeInteraction(
            steps=(
                thought_step(_THOUGHT, signature=_sign(signatures, model, thought=_THOUGHT)),
                text_step("Here is a considered answer.", pieces=2),
            ),
            usage=interaction_usage(8, 9, thought=6),
        )
    if name in ("tool-call", "parallel-calls"):
        calls = _arguments(request, 1 if name == "tool-call" else 2)
        first = calls_before + calls_made(request.get("input")) + 1
        steps = tuple(call_step(t, a, id=f"call-{first + i}") for i, (t, a) in enumerate(calls))
        signature = _sign(signatures, model, call=calls[0])
        return FakeInteraction(steps=(thought_step(signature=signature), *steps))
    if name == "tool-answer":
        return FakeInteraction(steps=(text_step(_summary(_results(request)), pieces=2),))
    if name == "json":
        sig = _sign(signatures, model, thought=name) if _thinks(request) else None
        return interaction_json(asked_json(request) or JsonAsk(), thoughts=bool(sig), signature=sig)
    if name == "code-execution":
        return FakeInteraction(
            steps=(
                *code_steps("print(sum(range(10)))", "45\n", id="code-1"),
                text_step("The sum of 0..9 is 45."),
            )
        )
    if name == "blocked":
        return FakeInteraction(
            steps=(),
            status="failed",
            error={"code": "invalid_argument", "message": "The prompt was blocked (SAFETY)."},
        )
    if name == "error-mid-stream":
        return FakeInteraction(
            steps=(text_step("The answer starts here"),),
            status="failed",
            error={
                "code": "unavailable",
                "message": "The model is overloaded. Please try again later.",
            },
        )
    if name == "truncated":
        return FakeInteraction(
            steps=(text_step("This answer stops", pieces=2),), cut_after=(4,), clean_cuts=True
        )
    raise ValueError(f"no scenario named {name!r}; scenarios: {', '.join(SCENARIOS)}")


# --------------------------------------------------------------------------- FakeGemini's answers


class Scenarios:
    """FakeGemini's answers from scenarios: chosen by request, or one forced (a name or file)."""

    def __init__(
        self,
        scenario: str | PathLike[str] | None,
        *,
        models: Sequence[str],
        signatures: SignatureBook | None = None,
    ) -> None:
        self._models = tuple(models)
        self._signatures = signatures
        self._forced: str | None = None
        self._file: bytes | None = None
        self._call_ids = CallIds()
        if isinstance(scenario, str) and scenario in SCENARIOS:
            self._forced = scenario
        elif scenario is not None:
            self._file = load_scenario(scenario)

    def interaction(self, call: InteractionCall) -> FakeInteraction | FakeResponse:
        """The run answering an Interactions create (a scenario file's events translated:
        :func:`interaction_from_sse`)."""
        sent = calls_made(call.body.get("input"))

        def run(before: int) -> FakeInteraction | FakeResponse:
            if self._file is not None:
                return interaction_from_sse(self._file, calls_before=before)
            name = self._forced or choose_scenario(call.body)
            return interaction_scenario(
                name, call.body, calls_before=before - sent, signatures=self._signatures
            )

        try:
            return self._call_ids.run(calls_made(call.history) + sent, run)
        except SchemaTooComplex:
            return google_error(400, TOO_COMPLEX)
        except (ValueError, RecursionError) as exc:
            message = f"FakeGemini: the scenario's events are not one interaction: {exc!r}"
            return google_error(500, message[:300])

    def answer(self, model: str, method: str, raw: bytes, *, strict: bool) -> FakeResponse:
        """The answer to ``method`` (``generateContent`` or ``streamGenerateContent``);
        with ``strict``, Google's 400 to a request Gemini would refuse."""
        if model.removeprefix("models/") not in self._models:
            return google_error(404, f"models/{model} is not found for API version v1beta.")
        problems = gemini_request_problems(raw, model=model) if strict else []
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            body = None  # answered as text, as before scenarios (strict mode refuses it)
        problems = problems or candidate_count_problems(body)
        if problems:
            return FakeResponse(status=400, error=invalid_argument(problems))
        if self._file is not None:
            sse = self._file
        else:
            try:
                name = self._forced or choose_scenario(body)
                sse = gemini_scenario(name, body, model=model, signatures=self._signatures)
            except SchemaTooComplex:
                return google_error(400, TOO_COMPLEX)
        if method == "streamGenerateContent":
            return FakeResponse(body=sse)
        try:
            whole = merged_response(sse)
        except (ValueError, RecursionError, TypeError, AttributeError) as exc:
            message = f"FakeGemini: the scenario's events are not one response: {exc!r}"[:300]
            return google_error(500, message)
        if "error" in whole:
            return FakeResponse(status=int(whole["error"].get("code", 500)), error=whole["error"])
        data = json.dumps(whole).encode()
        return FakeResponse(body=data, content_type="application/json; charset=UTF-8")
