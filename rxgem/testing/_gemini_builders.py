"""Short constructors of Gemini events, for marble tests and fakes.

The *pieces* of an event (:func:`text`, :func:`thought`, :func:`call`,
:func:`call_start`, :func:`partial_args`, :func:`call_end`, :func:`code`,
:func:`code_result`, :func:`media`, :func:`file`, :func:`finish`,
:func:`candidate_fields`, :func:`usage`, :func:`blocked`, :func:`api_error`,
grouped per candidate with :func:`candidate`) are put together by :func:`event` (SSE bytes, what
``decode_sse``/``gemini_to_openai`` eat), :func:`response` (a typed
``GenerateContentResponse``, what ``group_by_slot`` eats) or :func:`event_json`
(the JSON object).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec

from ..core import GenerateContentResponse

__all__ = [
    "MODEL",
    "RESPONSE_ID",
    "Piece",
    "api_error",
    "blocked",
    "call",
    "call_end",
    "call_start",
    "candidate",
    "candidate_fields",
    "code",
    "code_result",
    "event",
    "event_json",
    "file",
    "finish",
    "media",
    "partial_args",
    "response",
    "text",
    "thought",
    "usage",
]

RESPONSE_ID = "test"
"""The ``responseId`` :func:`event` puts on every event by default."""
MODEL = "gemini-test"
"""The ``modelVersion`` :func:`event` puts on every event, and :func:`chunk`'s ``model``."""


@dataclass(frozen=True)
class Piece:
    """One piece of a Gemini event: a part, a finish, usage, a block, an error, a candidate.

    Made by the constructors of this module; :func:`event` puts pieces together.
    """

    kind: Literal["part", "finish", "usage", "blocked", "error", "candidate"]
    json: Mapping[str, Any] = field(default_factory=dict)
    index: int = 0
    pieces: tuple[Piece, ...] = ()


def _part(data: dict[str, Any], sig: str | None) -> Piece:
    if sig is not None:
        data["thoughtSignature"] = sig
    return Piece("part", data)


def text(value: str, *, sig: str | None = None) -> Piece:
    """A text part: ``{"text": value}`` (with ``thoughtSignature`` ``sig``)."""
    return _part({"text": value}, sig)


def thought(value: str, *, sig: str | None = None) -> Piece:
    """A thought summary part: ``{"text": value, "thought": true}``."""
    return _part({"text": value, "thought": True}, sig)


def call(
    name: str,
    args: Mapping[str, Any] | None = None,
    *,
    id: str | None = None,
    sig: str | None = None,
    **kwargs: Any,
) -> Piece:
    """A complete ``functionCall`` part: ``call("search", q="a")`` → ``{"name", "args"}``.

    The arguments are ``args`` and/or the keyword arguments (use ``args=`` for names
    like ``id`` or ``sig``); with neither, the part has no ``args`` key at all
    (``call("f", {})`` sends ``"args": {}``). ``id`` is Gemini 3's ``functionCall.id``.
    """
    function: dict[str, Any] = {"name": name}
    if args is not None or kwargs:
        function["args"] = {**(args or {}), **kwargs}
    if id is not None:
        function["id"] = id
    return _part({"functionCall": function}, sig)


def call_start(name: str, *, id: str | None = None, sig: str | None = None) -> Piece:
    """The start of a Vertex streamed call: ``{"name", "willContinue": true}``."""
    function: dict[str, Any] = {"name": name, "willContinue": True}
    if id is not None:
        function["id"] = id
    return _part({"functionCall": function}, sig)


def partial_args(path: str, value: Any, *, more: bool = True) -> Piece:
    """One Vertex ``partialArgs`` piece setting JSON path ``path`` (``"$.city"``).

    ``value`` picks the field: ``str`` → ``stringValue``, ``bool`` → ``boolValue``,
    ``int``/``float`` → ``numberValue``, ``None`` → ``nullValue``. ``more=True`` marks
    the piece and the part with ``willContinue: true``; ``more=False`` leaves both
    out (the last piece of a call that has no terminal ``{}``).
    """
    piece: dict[str, Any] = {"jsonPath": path}
    if value is None:
        piece["nullValue"] = "NULL_VALUE"
    elif isinstance(value, bool):
        piece["boolValue"] = value
    elif isinstance(value, int | float):
        piece["numberValue"] = value
    elif isinstance(value, str):
        piece["stringValue"] = value
    else:
        raise TypeError(f"partial_args takes str, bool, int, float or None, not {value!r}")
    function: dict[str, Any] = {"partialArgs": [piece]}
    if more:
        piece["willContinue"] = True
        function["willContinue"] = True
    return Piece("part", {"functionCall": function})


def call_end() -> Piece:
    """The terminal part of a Vertex streamed call: ``{"functionCall": {}}``."""
    return Piece("part", {"functionCall": {}})


def _data(data: dict[str, Any], sig: str | None, thought: bool) -> Piece:
    if thought:
        data["thought"] = True
    return _part(data, sig)


def code(
    source: str, *, language: str = "PYTHON", sig: str | None = None, thought: bool = False
) -> Piece:
    """An ``executableCode`` part (code the model ran with the code-execution tool)."""
    return _data({"executableCode": {"language": language, "code": source}}, sig, thought)


def code_result(
    output: str, *, outcome: str = "OUTCOME_OK", sig: str | None = None, thought: bool = False
) -> Piece:
    """A ``codeExecutionResult`` part: what the code printed, and how it ended."""
    return _data({"codeExecutionResult": {"outcome": outcome, "output": output}}, sig, thought)


def media(mime_type: str, data: bytes, *, sig: str | None = None, thought: bool = False) -> Piece:
    """An ``inlineData`` part (an image, an audio clip, ...): ``data`` is base64-encoded."""
    encoded = base64.b64encode(data).decode("ascii")
    return _data({"inlineData": {"mimeType": mime_type, "data": encoded}}, sig, thought)


def file(uri: str, mime_type: str | None = None, *, sig: str | None = None) -> Piece:
    """A ``fileData`` part: a file by URI."""
    data: dict[str, Any] = {"fileUri": uri}
    if mime_type is not None:
        data["mimeType"] = mime_type
    return _part({"fileData": data}, sig)


def candidate_fields(**fields: Any) -> Piece:
    """Other fields of the candidate, by their wire names (``groundingMetadata={...}``,
    ``avgLogprobs=-0.2``, ``safetyRatings=[...]``, ...)."""
    return Piece("finish", fields)


def finish(reason: str = "STOP", message: str | None = None) -> Piece:
    """The candidate's ``finishReason`` (and ``finishMessage``)."""
    data: dict[str, Any] = {"finishReason": reason}
    if message is not None:
        data["finishMessage"] = message
    return Piece("finish", data)


def usage(
    prompt: int | None = None,
    candidates: int | None = None,
    *,
    thoughts: int | None = None,
    total: int | None = None,
    cached: int | None = None,
    tool_use: int | None = None,
) -> Piece:
    """``usageMetadata``; ``total`` defaults to the sum of the other counts given."""
    counts = {
        "promptTokenCount": prompt,
        "candidatesTokenCount": candidates,
        "cachedContentTokenCount": cached,
        "toolUsePromptTokenCount": tool_use,
        "thoughtsTokenCount": thoughts,
    }
    data = {key: value for key, value in counts.items() if value is not None}
    if total is None and data:
        total = sum(v for k, v in data.items() if k != "cachedContentTokenCount")
    if total is not None:
        data["totalTokenCount"] = total
    return Piece("usage", data)


def blocked(reason: str = "SAFETY", message: str | None = None) -> Piece:
    """``promptFeedback.blockReason`` (the prompt was blocked; use with no parts)."""
    data: dict[str, Any] = {"blockReason": reason}
    if message is not None:
        data["blockReasonMessage"] = message
    return Piece("blocked", data)


def api_error(
    code: int = 500, status: str = "INTERNAL", message: str = "Internal error encountered."
) -> Piece:
    """A Google error object: the event is ``{"error": {"code", "message", "status"}}``."""
    return Piece("error", {"code": code, "message": message, "status": status})


def candidate(index: int, *pieces: Piece) -> Piece:
    """Parts and a finish of candidate ``index``, for events with several candidates."""
    for piece in pieces:
        if piece.kind not in ("part", "finish"):
            raise ValueError(f"a candidate holds parts and a finish, not {piece.kind}")
    return Piece("candidate", {}, index, tuple(pieces))


def event_json(
    *pieces: Piece,
    candidate: int = 0,
    response_id: str | None = RESPONSE_ID,
    model: str | None = MODEL,
) -> dict[str, Any]:
    """The ``GenerateContentResponse`` JSON object made of ``pieces``.

    Parts and finishes not wrapped in :func:`candidate` belong to candidate
    ``candidate``. ``response_id`` and ``model`` become ``responseId`` and
    ``modelVersion`` (``None`` leaves them out). An :func:`api_error` piece must be
    alone and makes the whole event ``{"error": {...}}``.
    """
    errors = [p for p in pieces if p.kind == "error"]
    if errors:
        if len(pieces) != 1:
            raise ValueError("an api_error() event holds nothing else")
        return {"error": dict(errors[0].json)}
    candidates: dict[int, dict[str, Any]] = {}

    def add(index: int, piece: Piece) -> None:
        entry = candidates.setdefault(index, {})
        if piece.kind == "part":
            content = entry.setdefault("content", {"parts": [], "role": "model"})
            content["parts"].append(dict(piece.json))
        else:
            entry.update(piece.json)

    body: dict[str, Any] = {}
    for piece in pieces:
        if piece.kind == "candidate":
            for inner in piece.pieces:
                add(piece.index, inner)
        elif piece.kind in ("part", "finish"):
            add(candidate, piece)
        elif piece.kind == "usage":
            body["usageMetadata"] = dict(piece.json)
        elif piece.kind == "blocked":
            body["promptFeedback"] = dict(piece.json)
    out: dict[str, Any] = {}
    if candidates:
        out["candidates"] = [
            {
                **({"content": c["content"]} if "content" in c else {}),
                **{k: v for k, v in c.items() if k != "content"},
                "index": i,
            }
            for i, c in sorted(candidates.items())
        ]
    out.update(body)
    if model is not None:
        out["modelVersion"] = model
    if response_id is not None:
        out["responseId"] = response_id
    return out


def event(
    *pieces: Piece,
    candidate: int = 0,
    response_id: str | None = RESPONSE_ID,
    model: str | None = MODEL,
) -> bytes:
    """One SSE event as Gemini sends it: ``b'data: {...}\\r\\n\\r\\n'`` (see :func:`event_json`).

    .. code::

        event(thought("Let me look"), usage(10, 0, thoughts=4))
        event(call("search", q="rx"), call("search", q="ops"))   # two calls, one event
        event(text("done"), finish("STOP"), usage(10, 3))
    """
    body = event_json(*pieces, candidate=candidate, response_id=response_id, model=model)
    return b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\r\n\r\n"


def response(
    *pieces: Piece,
    candidate: int = 0,
    response_id: str | None = RESPONSE_ID,
    model: str | None = MODEL,
) -> GenerateContentResponse:
    """The typed ``GenerateContentResponse`` of :func:`event_json` (``group_by_slot``'s input)."""
    body = event_json(*pieces, candidate=candidate, response_id=response_id, model=model)
    return msgspec.json.decode(json.dumps(body), type=GenerateContentResponse)
