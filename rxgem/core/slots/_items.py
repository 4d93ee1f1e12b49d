"""The items that flow between the pipeline's middle stages.

``group_by_slot`` turns each Gemini response into one *batch* (a list of items);
``latest_args``, ``flush_on_finish`` and ``to_openai`` consume and produce batches,
so that an Rx hop happens once per Gemini event, never once per part.

Items emitted by ``group_by_slot``:
    :class:`Meta`, :class:`Text`, :class:`CallPart`, :class:`DataPart`,
    :class:`Sources`, :class:`Logprobs`, :class:`Details`, :class:`Finish`,
    :class:`Feedback`, :class:`Blocked`, :class:`Usage`.
``latest_args`` replaces every ``CallPart`` by a :class:`SlotUpdate` (or nothing, for
a replay that changes nothing).
``flush_on_finish`` passes ``Meta``, ``Text``, ``DataPart``, ``Sources`` and
``Logprobs`` on at once, holds the rest, and at
the end of the stream emits :class:`ToolCall` (one per slot), :class:`TextSignature`,
:class:`End` (one per candidate) and the last :class:`Usage`. With
``announce="first"`` it also emits a :class:`ToolCallHeader` for each candidate's
first slot as soon as that slot opens.

Google's Interactions reader (``interactions/``) emits the same items straight from its
steps, plus two of its own: :class:`ArgsDelta` (a fragment of a call's arguments, streamed
as it arrives) and :class:`UnknownStep` (a step or delta type rxgem does not know, which
the outputs ignore).

All items are immutable ``msgspec.Struct`` values that compare by value.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

from ..gemini import FunctionCall, Part, UsageMetadata

__all__ = [
    "ArgsDelta",
    "Batch",
    "Blocked",
    "CallPart",
    "DataPart",
    "Details",
    "End",
    "Feedback",
    "Finish",
    "Item",
    "Logprobs",
    "Meta",
    "SlotUpdate",
    "Sources",
    "Text",
    "TextSignature",
    "ToolCall",
    "ToolCallHeader",
    "UnknownStep",
    "Usage",
]


class Meta(msgspec.Struct, frozen=True, gc=False):
    """Stream metadata; emitted with the first response and whenever it changes."""

    response_id: str | None = None
    model_version: str | None = None
    create_time: str | None = None
    model_status: Any = None


class Text(msgspec.Struct, frozen=True, gc=False):
    """A text part (``thought=True`` for a thought summary) of one candidate."""

    candidate: int
    text: str
    thought: bool = False
    signature: str | None = None


class CallPart(msgspec.Struct, frozen=True, gc=False):
    """A ``functionCall`` part, assigned to tool-call slot ``slot`` (0, 1, 2… per candidate).

    ``replay`` is set when the slot table found the args the same as the slot's
    (types and all): ``latest_args`` then need not compare them again (a re-sent
    1 MB object).
    """

    candidate: int
    slot: int
    call: FunctionCall
    signature: str | None = None
    replay: bool = False


class DataPart(msgspec.Struct, frozen=True, gc=False):
    """A part that is neither text nor a function call, with its own thought signature.

    Code (``executableCode``), its result (``codeExecutionResult``), inline or file
    data (images, audio, documents), a built-in tool's ``toolCall``/``toolResponse``.
    """

    candidate: int
    part: Part


class Sources(msgspec.Struct, frozen=True, gc=False):
    """One event's grounding, citation and URL-context metadata of a candidate (as sent).

    Gemini sends these in pieces: grounding chunks accumulate across events and the
    supports' ``groundingChunkIndices`` index the accumulated list.
    """

    candidate: int
    grounding: dict[str, Any] | None = None
    citation: dict[str, Any] | None = None
    url_context: dict[str, Any] | None = None


class Logprobs(msgspec.Struct, frozen=True, gc=False):
    """One event's ``logprobsResult`` of a candidate (the tokens of that event)."""

    candidate: int
    result: dict[str, Any]


class Details(msgspec.Struct, frozen=True, gc=False):
    """Per-candidate values kept for its finish: ``safety_ratings``, ``avg_logprobs``, ...

    Keys are the snake_case names of the finish chunk's ``extra_content.google``;
    a later value of a key replaces an earlier one.
    """

    candidate: int
    details: dict[str, Any]


class Feedback(msgspec.Struct, frozen=True, gc=False):
    """A ``promptFeedback`` object as sent (block reason, its message, safety ratings)."""

    feedback: dict[str, Any]


class Finish(msgspec.Struct, frozen=True, gc=False):
    """A ``finishReason`` seen on a candidate (may arrive mid-stream and more than once)."""

    candidate: int
    reason: str
    message: str | None = None


class Usage(msgspec.Struct, frozen=True, gc=False):
    """A ``usageMetadata`` snapshot that carries token counts (cumulative, never a delta)."""

    usage: UsageMetadata


class Blocked(msgspec.Struct, frozen=True, gc=False):
    """The prompt was blocked (``promptFeedback.blockReason``, no candidates)."""

    reason: str
    message: str | None = None


class SlotUpdate(msgspec.Struct, frozen=True, gc=False):
    """The latest state of a tool-call slot after a part changed it."""

    candidate: int
    slot: int
    name: str
    id: str | None
    args: dict[str, Any]
    signature: str | None = None


class ToolCallHeader(msgspec.Struct, frozen=True, gc=False):
    """Announces a tool call early (its arguments follow in a :class:`ToolCall`)."""

    candidate: int
    slot: int
    name: str
    id: str | None
    signature: str | None = None


class ToolCall(msgspec.Struct, frozen=True, gc=False):
    """A tool call with its final arguments, flushed at the end of the stream.

    ``arguments``: the arguments' JSON exactly as it was streamed in :class:`ArgsDelta`
    fragments (the outputs then do not send them again); ``None`` when they were not.
    """

    candidate: int
    slot: int
    name: str
    id: str | None
    args: dict[str, Any]
    signature: str | None = None
    arguments: str | None = None


class ArgsDelta(msgspec.Struct, frozen=True, gc=False):
    """A fragment of the arguments JSON of the call in ``slot``, as it arrived.

    Comes after the call's :class:`ToolCallHeader` and before its :class:`ToolCall`,
    whose ``arguments`` is the concatenation of the fragments.
    """

    candidate: int
    slot: int
    text: str


class UnknownStep(msgspec.Struct, frozen=True, gc=False):
    """A step or delta type the reader does not know (``kind``), with its fields as read.

    Passed on so that code after the reader may look at it; the outputs ignore it.
    """

    candidate: int
    kind: str
    value: Any = None


class TextSignature(msgspec.Struct, frozen=True, gc=False):
    """The latest thought signature of a candidate's text parts, once, at the end."""

    candidate: int
    signature: str


class End(msgspec.Struct, frozen=True, gc=False):
    """The end of one candidate: its last native finish reason (``None`` if none came)."""

    candidate: int
    reason: str | None
    has_calls: bool = False
    blocked: bool = False
    message: str | None = None
    details: dict[str, Any] | None = None


Item: TypeAlias = (
    Meta
    | Text
    | CallPart
    | DataPart
    | Sources
    | Logprobs
    | Details
    | Feedback
    | Finish
    | Usage
    | Blocked
    | SlotUpdate
    | ToolCallHeader
    | ToolCall
    | TextSignature
    | End
    | ArgsDelta
    | UnknownStep
)
Batch: TypeAlias = list[Item]
