"""Marble testing helpers: short constructors for Gemini events and OpenAI chunks, and a runner.

Gemini side: the *pieces* of an event (:func:`text`, :func:`thought`, :func:`call`,
:func:`call_start`, :func:`partial_args`, :func:`call_end`, :func:`finish`,
:func:`usage`, :func:`blocked`, :func:`api_error`, grouped per candidate with
:func:`candidate`) are put together by :func:`event` (SSE bytes, what
``decode_sse``/``gemini_to_openai`` eat), :func:`response` (a typed
``GenerateContentResponse``, what ``group_by_slot`` eats) or :func:`event_json`
(the JSON object).

OpenAI side: :func:`chunk`, :func:`tool_delta` and :func:`usage_chunk` build the
chunks ``to_openai`` emits, with defaults that match ``gemini_to_openai(clock=lambda: 0)``
run on events made by :func:`event` (``responseId`` ``"test"``, ``modelVersion``
``"gemini-test"``).

:func:`run_marbles` runs an operator on a cold marble source under a fresh
``TestScheduler`` and returns what it emitted; :func:`expect_marbles` parses the
expected marbles into the same form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from reactivex import Observable, abc
from reactivex.notification import OnCompleted, OnError, OnNext
from reactivex.observable.marbles import parse
from reactivex.scheduler import VirtualTimeScheduler
from reactivex.testing import ReactiveTest, TestScheduler

from ..core import (
    ChatCompletionChunk,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    FinishReason,
    GenerateContentResponse,
)
from ..viz import Diagram, Recorder, XMode

__all__ = [
    "CHUNK_ID",
    "MODEL",
    "RESPONSE_ID",
    "Piece",
    "Recorded",
    "Recording",
    "api_error",
    "blocked",
    "call",
    "call_end",
    "call_start",
    "candidate",
    "chunk",
    "event",
    "event_json",
    "expect_marbles",
    "finish",
    "partial_args",
    "response",
    "run_marbles",
    "text",
    "thought",
    "tool_delta",
    "usage",
    "usage_chunk",
]

RESPONSE_ID = "test"
"""The ``responseId`` :func:`event` puts on every event by default."""
MODEL = "gemini-test"
"""The ``modelVersion`` :func:`event` puts on every event, and :func:`chunk`'s ``model``."""
CHUNK_ID = f"chatcmpl-{RESPONSE_ID}"
"""The chunk ``id`` rxgem derives from :data:`RESPONSE_ID`, and :func:`chunk`'s default."""

# -- Gemini pieces ----------------------------------------------------------------------


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


# -- OpenAI chunks ----------------------------------------------------------------------


def _signature(signature: str) -> dict[str, Any]:
    return {"google": {"thought_signature": signature}}


def tool_delta(
    index: int,
    arguments: str | None = None,
    *,
    id: str | None = None,
    name: str | None = None,
    signature: str | None = None,
) -> ChoiceDeltaToolCall:
    """A ``tool_calls[]`` delta. With ``id``, it is a call's first delta (``type: "function"``,
    ``name``, ``arguments`` defaulting to ``""``); without, an ``arguments`` fragment.
    ``signature`` goes to ``extra_content.google.thought_signature``."""
    header = id is not None or name is not None
    return ChoiceDeltaToolCall(
        index=index,
        id=id,
        type="function" if id is not None else None,
        function=ChoiceDeltaToolCallFunction(
            name=name, arguments="" if arguments is None and header else arguments
        ),
        extra_content=_signature(signature) if signature is not None else None,
    )


def chunk(
    content: str | None = None,
    *,
    reasoning: str | None = None,
    role: Literal["assistant"] | None = None,
    tool_calls: Sequence[ChoiceDeltaToolCall] | None = None,
    signature: str | None = None,
    finish: FinishReason | None = None,
    native_finish: str | None = None,
    choice: int = 0,
    id: str = CHUNK_ID,
    model: str = MODEL,
    created: int = 0,
) -> ChatCompletionChunk:
    """A chunk with one choice: ``chunk("Hi", role="assistant")``, ``chunk(finish="stop")``.

    ``reasoning`` goes to ``delta.reasoning_content``; ``signature`` to
    ``delta.extra_content.google.thought_signature``.
    """
    delta = ChoiceDelta(
        role=role,
        content=content,
        reasoning_content=reasoning,
        tool_calls=list(tool_calls) if tool_calls is not None else None,
        extra_content=_signature(signature) if signature is not None else None,
    )
    return ChatCompletionChunk(
        id=id,
        created=created,
        model=model,
        choices=[
            ChunkChoice(
                index=choice,
                delta=delta,
                finish_reason=finish,
                native_finish_reason=native_finish,
            )
        ],
    )


def usage_chunk(
    prompt: int = 0,
    completion: int = 0,
    total: int | None = None,
    *,
    reasoning: int | None = None,
    cached: int | None = None,
    id: str = CHUNK_ID,
    model: str = MODEL,
    created: int = 0,
) -> ChatCompletionChunk:
    """The final usage chunk (``choices: []``); ``total`` defaults to prompt + completion."""
    return ChatCompletionChunk(
        id=id,
        created=created,
        model=model,
        choices=[],
        usage=CompletionUsage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=prompt + completion if total is None else total,
            completion_tokens_details=(
                {"reasoning_tokens": reasoning} if reasoning is not None else None
            ),
            prompt_tokens_details={"cached_tokens": cached} if cached is not None else None,
        ),
    )


# -- running marbles --------------------------------------------------------------------


def _same_error(a: Any, b: Any) -> bool:
    if isinstance(b, type):
        return isinstance(a, b)
    if isinstance(a, type):
        return isinstance(b, a)
    return type(a) is type(b) and a.args == b.args


@dataclass(frozen=True, eq=False)
class Recorded:
    """One notification at a virtual time: ``kind`` is ``"next"``, ``"error"`` or ``"completed"``.

    Equality compares time, kind and value; errors compare by class and ``args``
    (not by message text), and an exception *class* as the value matches any
    instance of it: ``Recorded(3, "error", MalformedStreamError)``.
    """

    time: float
    kind: Literal["next", "error", "completed"]
    value: Any = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Recorded):
            return NotImplemented
        if self.time != other.time or self.kind != other.kind:
            return False
        if self.kind == "error":
            return _same_error(self.value, other.value)
        return bool(self.value == other.value)

    __hash__ = None  # type: ignore[assignment]


class Recording(list[Recorded]):
    """What an operator emitted under :func:`run_marbles`: a list of :class:`Recorded`.

    Compares equal to the list :func:`expect_marbles` returns; ``values``,
    ``error`` and ``completed`` summarise it, ``recorder`` holds every lane (the
    source, each stage) and ``diagram()`` draws them.
    """

    def __init__(self, records: Sequence[Recorded], recorder: Recorder) -> None:
        super().__init__(records)
        self.recorder = recorder

    @property
    def values(self) -> list[Any]:
        """The emitted values, in order."""
        return [r.value for r in self if r.kind == "next"]

    @property
    def error(self) -> BaseException | None:
        """The error the output ended with, if any."""
        return next((r.value for r in self if r.kind == "error"), None)

    @property
    def completed(self) -> bool:
        """Whether the output completed."""
        return any(r.kind == "completed" for r in self)

    def diagram(self, **options: Any) -> Diagram:
        """The marble diagram of every lane (see :meth:`rxgem.viz.Recorder.diagram`)."""
        x: XMode = options.pop("x", "time")
        return self.recorder.diagram(x=x, **options)


class _StrictLookup(dict[str | float, Any]):
    """A lookup that refuses marbles it does not know (instead of emitting their text)."""

    def get(self, key: str | float, default: Any = None) -> Any:
        if key not in self:
            raise KeyError(
                f"marble {key!r} is not in the lookup (keys: {sorted(map(str, self))});"
                " adjacent letters are one marble: write '-a-b-' or '(a,b)', not 'ab'"
            )
        return self[key]


def _records(
    marbles: str,
    lookup: Mapping[str | float, Any] | None,
    error: Exception | None,
    timespan: int,
) -> list[Recorded]:
    records: list[Recorded] = []
    strict = _StrictLookup(lookup) if lookup else None
    for time, notification in parse(marbles, timespan=timespan, lookup=strict, error=error):
        at = float(time) if isinstance(time, int | float) else time.total_seconds()
        if isinstance(notification, OnNext):
            records.append(Recorded(at, "next", notification.value))
        elif isinstance(notification, OnError):
            records.append(Recorded(at, "error", notification.exception))
        elif isinstance(notification, OnCompleted):
            records.append(Recorded(at, "completed"))
    return records


def expect_marbles(
    marbles: str,
    lookup: Mapping[str | float, Any] | None = None,
    *,
    error: Exception | type[Exception] | None = None,
    timespan: int = 1,
) -> list[Recorded]:
    """Marbles as the list of :class:`Recorded` that :func:`run_marbles` is compared with.

    Each character is ``timespan`` ticks from 0: ``"-a-(bc)-|"`` is ``a`` at 1,
    ``b`` and ``c`` at 3, completion at 8 (a group takes its length in ticks).
    ``#`` is ``error`` (an exception, or a class matching any instance of it).
    Numeric tokens are cast before the lookup: the key for ``"1"`` is the int ``1``.
    With a ``lookup``, a marble that is not in it raises ``KeyError`` (adjacent
    letters make one marble: ``"ab"`` is the value ``"ab"``, not ``a`` then ``b``).
    """
    marker = RuntimeError("marble error")
    records = _records(marbles, lookup, marker, timespan)
    if error is None:
        return records
    return [
        Recorded(r.time, "error", error) if r.kind == "error" and r.value is marker else r
        for r in records
    ]


Operator = Callable[[Observable[Any]], Observable[Any]]


def _ignore(_: Exception) -> None:
    """Errors are recorded by the last tap; nothing else to do with them."""


def run_marbles(
    operator: Operator | Sequence[tuple[str, Operator]],
    source: str,
    lookup: Mapping[str | float, Any] | None = None,
    *,
    error: Exception | None = None,
    timespan: int = 1,
    dispose_at: float | None = None,
) -> Recording:
    """Run ``operator`` on a cold marble ``source`` under a fresh ``TestScheduler``.

    .. code::

        run_marbles(group_by_slot(), "-a-b-|", {"a": response(call("f", x=1)), "b": ...})

    The subscription happens at tick 0, so times line up with the marble strings
    (see :func:`expect_marbles`). ``operator`` may also be a list of
    ``(name, operator)`` stages: each becomes a lane of ``Recording.recorder`` and
    the result is what the last one emitted. ``#`` in ``source`` emits ``error``
    (default: ``RuntimeError("marble error")``); ``dispose_at`` disposes of the
    subscription at that tick.
    """
    scheduler = TestScheduler()
    recorder = Recorder(scheduler)
    records = _records(source, lookup, error or RuntimeError("marble error"), timespan)
    messages = [
        ReactiveTest.on_next(int(r.time), r.value)
        if r.kind == "next"
        else ReactiveTest.on_error(int(r.time), r.value)
        if r.kind == "error"
        else ReactiveTest.on_completed(int(r.time))
        for r in records
    ]
    stages = [("output", operator)] if callable(operator) else list(operator)
    stream: Observable[Any] = scheduler.create_cold_observable(messages).pipe(
        recorder.tap("source")
    )
    for name, stage in stages:
        stream = stream.pipe(stage, recorder.tap(name))
    holder: list[abc.DisposableBase] = []

    def subscribe(scheduler_: abc.SchedulerBase, state: Any = None) -> None:
        holder.append(stream.subscribe(on_error=_ignore, scheduler=scheduler_))

    def dispose(scheduler_: abc.SchedulerBase, state: Any = None) -> None:
        for subscription in holder:
            subscription.dispose()

    scheduler.schedule_absolute(0.0, subscribe)
    if dispose_at is not None:
        scheduler.schedule_absolute(float(dispose_at), dispose)
    VirtualTimeScheduler.start(scheduler)
    last = stages[-1][0] if stages else "source"
    output = [Recorded(e.time, e.kind, e.value) for e in recorder.emissions if e.stage == last]
    return Recording(output, recorder)
