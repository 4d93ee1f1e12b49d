"""FakeGemini's structured output, and its scenario files on the Interactions API.

A request asking for JSON gets JSON, as Gemini gives it: ``generationConfig``'s
``responseMimeType: application/json`` with ``responseJsonSchema`` (JSON Schema, ``$ref``
and ``$defs`` included) or ``responseSchema`` (Gemini's OpenAPI subset, upper-case types),
or an Interactions create's ``response_format`` (``{type: "text", mime_type:
"application/json", schema}``, alone or in a list; or the older ``response_mime_type``).
The answer is a value valid against the schema (:func:`structured_value`: every property,
plausible values), pretty-printed and streamed in a few text pieces; without a schema, a
JSON object; ``text/x.enum`` gets the enum's first value as plain text. A schema too complex
to serve gets Google's 400 (:class:`SchemaTooComplex`).

:func:`interaction_from_sse` turns a scenario file's ``GenerateContentResponse`` events
into an Interactions run, so one file answers both APIs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ._fake_response import FakeResponse
from ._gemini_builders import Piece, candidate, event, finish, text, thought, usage
from ._interaction_script import (
    FakeInteraction,
    ScriptedStep,
    call_step,
    interaction_usage,
    text_step,
    thought_step,
)
from ._schema_values import TOO_COMPLEX, SchemaTooComplex, structured_value

__all__ = [
    "TOO_COMPLEX",
    "JsonAsk",
    "SchemaTooComplex",
    "asked_json",
    "gemini_json",
    "interaction_from_sse",
    "interaction_json",
    "json_text",
]

_JSON: Final = "application/json"
_ENUM: Final = "text/x.enum"
_FREE_ANSWER: Final = "Hello from FakeGemini."
_THOUGHT: Final = "Working out what each field of the answer should hold."
_PIECES: Final = 3


@dataclasses.dataclass(frozen=True)
class JsonAsk:
    """What a request asks its answer to be."""

    schema: Any = None
    """The schema (JSON Schema or Gemini's OpenAPI subset), None in plain JSON mode."""
    enum: bool = False
    """``text/x.enum``: one value of the schema's enum, as plain text."""


def _first(mapping: Mapping[str, Any], *keys: str) -> Any:
    return next((mapping[k] for k in keys if mapping.get(k) is not None), None)


def asked_json(body: Any) -> JsonAsk | None:
    """The JSON a generateContent or Interactions create body asks for, or None."""
    if not isinstance(body, Mapping):
        return None
    if "contents" in body or "input" not in body:  # generateContent
        config = _first(body, "generationConfig", "generation_config")
        if not isinstance(config, Mapping):
            return None
        mime = _first(config, "responseMimeType", "response_mime_type")
        schema = _first(
            config,
            "responseJsonSchema",
            "response_json_schema",
            "responseSchema",
            "response_schema",
        )
        if mime == _JSON:
            return JsonAsk(schema)
        return JsonAsk(schema, enum=True) if mime == _ENUM else None
    formats = body.get("response_format")
    for spec in formats if isinstance(formats, list) else [formats]:
        if not isinstance(spec, Mapping):
            continue
        if spec.get("type") == "text" and spec.get("mime_type") == _JSON:
            return JsonAsk(spec.get("schema"))
        older = spec.get("type") not in ("text", "audio", "image", "video")
        if older and body.get("response_mime_type") == _JSON:  # the schema itself, as before
            return JsonAsk(spec)
    return JsonAsk() if body.get("response_mime_type") == _JSON else None


def json_text(ask: JsonAsk, candidate: int = 0) -> str:
    """The answer's text: JSON valid against the schema (candidates after the first differ
    only without a schema, their answer starting ``Answer N:``). Raises
    :class:`SchemaTooComplex`."""
    if ask.enum:
        choices = ask.schema.get("enum") if isinstance(ask.schema, Mapping) else None
        return str(choices[0]) if isinstance(choices, list) and choices else ""
    if ask.schema is None:
        said = f"Answer {candidate + 1}: {_FREE_ANSWER}" if candidate else _FREE_ANSWER
        return json.dumps({"answer": said}, ensure_ascii=False, indent=2)
    return json.dumps(structured_value(ask.schema), ensure_ascii=False, indent=2)


def _split(value: str, count: int) -> list[str]:
    """``value`` in ``count`` pieces, none empty (fewer for a short value)."""
    count = max(1, min(count, len(value)))
    size = -(-len(value) // count) if value else 1
    return [value[i : i + size] for i in range(0, len(value), size)] or [value]


def _tokens(value: str) -> int:
    return max(1, len(value) // 4)


def gemini_json(
    request: Mapping[str, Any],
    ask: JsonAsk,
    *,
    model: str,
    count: int = 1,
    thoughts: bool = False,
    signature: str | None = None,
) -> bytes:
    """The ``streamGenerateContent?alt=sse`` body answering ``ask`` with ``count``
    candidates: a thought first (with ``thoughts``), then each candidate's JSON in a few
    text events (``signature`` on the first), finish ``STOP`` and usage on the last."""
    answers = [json_text(ask, i) for i in range(count)]
    pieces = min(_PIECES, *(len(a) or 1 for a in answers))
    split = [_split(a, pieces) for a in answers]
    events: list[bytes] = []
    if thoughts:
        events.append(event(*(candidate(i, thought(_THOUGHT)) for i in range(count)), model=model))
    rounds = max(len(s) for s in split)
    for k in range(rounds):
        last = k == rounds - 1
        parts: list[Piece] = []
        for i, chunks in enumerate(split):
            inner = [text(chunks[k], sig=signature if k == 0 else None)] if k < len(chunks) else []
            if last:
                inner.append(finish("STOP"))
            if inner:
                parts.append(candidate(i, *inner))
        if last:
            spent = sum(_tokens(a) for a in answers)
            parts.append(usage(10, spent, thoughts=6 if thoughts else None))
        events.append(event(*parts, model=model))
    return b"".join(events)


def interaction_json(
    ask: JsonAsk, *, thoughts: bool = False, signature: str | None = None
) -> FakeInteraction:
    """The Interactions run answering ``ask``: a thought step (with ``thoughts``), then a
    ``model_output`` step with the JSON in a few ``text`` deltas."""
    answer = json_text(ask)
    steps: list[ScriptedStep] = []
    if thoughts:
        steps.append(thought_step(_THOUGHT, signature=signature))
    steps.append(text_step(answer, pieces=_PIECES))
    spent = interaction_usage(10, _tokens(answer), thought=6 if thoughts else 0)
    return FakeInteraction(steps=tuple(steps), usage=spent)


# --------------------------------------------------------------------------- scenario files


def _events(sse: bytes) -> list[dict[str, Any]]:
    out = []
    for line in sse.splitlines():
        if not line.startswith(b"data:") or line[5:].strip() == b"[DONE]":
            continue
        data = json.loads(line[5:])
        if not isinstance(data, dict):
            raise ValueError("an event is not a JSON object")
        out.append(data)
    return out


class _Steps:
    """The steps a candidate's parts make: text parts in a row are one ``model_output``
    step (a delta each), thought parts one ``thought`` step; a signature on any other part
    goes to the thought step just before it, else to a thought step of its own."""

    def __init__(self, calls_before: int) -> None:
        self.steps: list[ScriptedStep] = []
        self.texts: list[str] | None = None  # the open model_output step's pieces
        self.summary: list[str] | None = None  # the open thought step's summary pieces
        self.signature: str | None = None  # the open thought step's signature
        self.calls = calls_before  # ids call-N go on from the conversation's own
        self.code = 0

    def close(self) -> None:
        if self.texts is not None:
            whole = {
                "type": "model_output",
                "content": [{"type": "text", "text": "".join(self.texts)}],
            }
            deltas = tuple({"type": "text", "text": t} for t in self.texts)
            self.steps.append(ScriptedStep({"type": "model_output", "content": []}, deltas, whole))
        if self.summary is not None:
            summary = "".join(self.summary) if self.summary else None
            self.steps.append(thought_step(summary, signature=self.signature))
        self.texts = self.summary = self.signature = None

    def add(self, part: Mapping[str, Any]) -> None:
        signature = part.get("thoughtSignature")
        signature = signature if isinstance(signature, str) else None
        if part.get("thought") is True:
            if self.summary is None or self.signature is not None:
                self.close()
                self.summary = []
            if isinstance(part.get("text"), str) and part["text"]:
                self.summary.append(part["text"])
            self.signature = signature
            return
        if signature is not None:
            if self.summary is None or self.signature is not None:
                self.close()
                self.summary = []
            self.signature = signature
        if isinstance(part.get("text"), str):
            if self.texts is None:
                self.close()
                self.texts = []
            if part["text"]:
                self.texts.append(part["text"])
            return
        self.close()
        self.steps += self._other(part)

    def _other(self, part: Mapping[str, Any]) -> list[ScriptedStep]:
        call = part.get("functionCall")
        if isinstance(call, Mapping):
            self.calls += 1
            args = call.get("args")
            name = str(call.get("name") or "")
            call_id = str(call.get("id") or f"call-{self.calls}")
            return [call_step(name, args if isinstance(args, Mapping) else {}, id=call_id)]
        code = part.get("executableCode")
        if isinstance(code, Mapping):
            self.code += 1
            arguments = {
                "code": str(code.get("code", "")),
                "language": str(code.get("language", "python")).lower(),
            }
            step = {
                "type": "code_execution_call",
                "id": f"code-{self.code}",
                "arguments": arguments,
            }
            return [ScriptedStep(step, (), step)]
        result = part.get("codeExecutionResult")
        if isinstance(result, Mapping):
            done: dict[str, Any] = {
                "type": "code_execution_result",
                "call_id": f"code-{self.code}",
                "result": str(result.get("output", "")),
            }
            if result.get("outcome") not in (None, "OUTCOME_OK"):
                done["is_error"] = True
            return [ScriptedStep(done, (), done)]
        return []  # media, files: not scripted on Interactions


def _usage(metadata: Any) -> dict[str, int] | None:
    if not isinstance(metadata, Mapping):
        return None

    def count(key: str) -> int:
        value = metadata.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return interaction_usage(
        count("promptTokenCount"),
        count("candidatesTokenCount"),
        thought=count("thoughtsTokenCount"),
        cached=count("cachedContentTokenCount"),
        tool_use=count("toolUsePromptTokenCount"),
    )


def _event_count(steps: Sequence[ScriptedStep]) -> int:
    """How many events come before ``interaction.completed`` (created, status, steps)."""
    return 2 + sum(2 + len(step.deltas) for step in steps)


def interaction_from_sse(sse: bytes, *, calls_before: int = 0) -> FakeInteraction | FakeResponse:
    """A scenario file's ``GenerateContentResponse`` events (its SSE body) as an
    Interactions run: the first candidate's parts as steps (text, thoughts with their
    signature, function calls with their id or ``call-N`` (numbered after the
    ``calls_before`` the conversation holds), code execution), its last
    ``usageMetadata`` as usage; finish ``STOP`` completes it (``requires_action`` with
    calls), ``MAX_TOKENS`` leaves it ``incomplete``, another reason, a blocked prompt or a
    Google error event fails it with an ``error`` event (an error before any part is that
    HTTP error); no finish at all stops the stream before ``interaction.completed``.
    Raises ``ValueError`` for events that are not JSON objects."""
    steps = _Steps(calls_before)
    spent: dict[str, int] | None = None
    reason: str | None = None
    failure: dict[str, Any] | None = None
    for data in _events(sse):
        error = data.get("error")
        if isinstance(error, Mapping):
            if not steps.steps and steps.texts is None and steps.summary is None:
                return FakeResponse(status=int(error.get("code") or 500), error=dict(error))
            status = str(error.get("status") or "unknown").lower()
            failure = {"code": status, "message": str(error.get("message", ""))}
            break
        spent = _usage(data.get("usageMetadata")) or spent
        blocked = (data.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            failure = {
                "code": "invalid_argument",
                "message": f"The prompt was blocked ({blocked}).",
            }
            break
        for entry in data.get("candidates") or ():
            if not isinstance(entry, Mapping) or entry.get("index", 0) != 0:
                continue
            for part in (entry.get("content") or {}).get("parts") or ():
                if isinstance(part, Mapping):
                    steps.add(part)
            reason = entry.get("finishReason") or reason
    steps.close()
    run = FakeInteraction(steps=tuple(steps.steps), usage=spent)
    if failure is None and reason not in (None, "STOP", "MAX_TOKENS"):
        failure = {"code": "invalid_argument", "message": f"The answer was stopped ({reason})."}
    if failure is not None:
        return dataclasses.replace(run, status="failed", error=failure)
    if reason == "MAX_TOKENS":
        return dataclasses.replace(run, status="incomplete")
    if reason is None:  # the capture stops short: so does the stream
        return dataclasses.replace(run, cut_after=(_event_count(steps.steps),), clean_cuts=True)
    return run
