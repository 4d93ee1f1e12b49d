"""OpenAI Responses objects and streaming events, as ``msgspec`` structs.

The shapes are those of the ``openai`` SDK's ``openai.types.responses``: every event
validates as its ``ResponseStreamEvent`` (strictly), and a :class:`Response` as its
``Response``. Each struct's ``type`` is its tag and comes first when encoded;
``to_dict()`` gives plain JSON data with ``None`` fields left out, ``to_json()`` its
compact UTF-8 JSON, as the chat chunks do (:class:`~rxgem.core.ChatCompletionChunk`).

Fields beyond OpenAI's own (``extra_content`` on a message item and on ``usage``) are
extensions in the shape of Chat Completions' ``extra_content.google``; the ``openai`` SDK
keeps them as extra attributes.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

__all__ = [
    "CodeInterpreterCall",
    "ContentPart",
    "ContentPartAdded",
    "ContentPartDone",
    "FunctionCallArgumentsDelta",
    "FunctionCallArgumentsDone",
    "FunctionCallItem",
    "ImageGenerationCall",
    "OutputItem",
    "OutputItemAdded",
    "OutputItemDone",
    "OutputMessage",
    "OutputRefusal",
    "OutputText",
    "OutputTextAnnotationAdded",
    "OutputTextDelta",
    "OutputTextDone",
    "ReasoningItem",
    "ReasoningSummaryPartAdded",
    "ReasoningSummaryPartDone",
    "ReasoningSummaryTextDelta",
    "ReasoningSummaryTextDone",
    "RefusalDelta",
    "RefusalDone",
    "Response",
    "ResponseCompleted",
    "ResponseCreated",
    "ResponseError",
    "ResponseFailed",
    "ResponseInProgress",
    "ResponseIncomplete",
    "ResponseStatus",
    "ResponseUsage",
    "ResponsesEvent",
    "SummaryText",
]

ResponseStatus: TypeAlias = Literal[
    "queued", "in_progress", "completed", "incomplete", "failed", "cancelled"
]
ItemStatus: TypeAlias = Literal["in_progress", "completed", "incomplete"]


# Lists that OpenAI always sends (``content: []``, ``annotations: []``...) have no default:
# ``omit_defaults`` would leave out an empty one.


class _Model(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (dicts, lists, str, numbers), ``None`` fields left out."""
        data: dict[str, Any] = msgspec.to_builtins(self)
        return data

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON of :meth:`to_dict`."""
        return msgspec.json.encode(self)


class _Tagged(_Model, tag_field="type"):
    pass


# -- content ----------------------------------------------------------------------------


class OutputText(_Tagged, tag="output_text"):
    """A message's text: ``annotations`` (``url_citation``) and ``logprobs`` always sent."""

    text: str
    annotations: list[dict[str, Any]]
    logprobs: list[dict[str, Any]]


class OutputRefusal(_Tagged, tag="refusal"):
    """Why Gemini stopped or refused (a safety finish's or a block's message)."""

    refusal: str


ContentPart: TypeAlias = OutputText | OutputRefusal


class SummaryText(_Tagged, tag="summary_text"):
    """A part of a reasoning item's summary: Gemini's thought text."""

    text: str


# -- output items -----------------------------------------------------------------------


class OutputMessage(_Tagged, tag="message"):
    """The assistant's message; ``content`` is ``[]`` when announced."""

    id: str
    status: ItemStatus
    content: list[ContentPart]
    role: Literal["assistant"] = msgspec.field(default_factory=lambda: "assistant")
    extra_content: dict[str, Any] | None = None


class ReasoningItem(_Tagged, tag="reasoning"):
    """Gemini's thoughts (``summary``) and thought signatures (``encrypted_content``)."""

    id: str
    summary: list[SummaryText]
    encrypted_content: str | None = None
    status: ItemStatus | None = None


class FunctionCallItem(_Tagged, tag="function_call"):
    """A call of one of the request's functions; ``arguments`` is ``""`` when announced.

    A function of a ``namespace`` tool is named as the request named it: ``name`` its
    own, ``namespace`` the tool's."""

    id: str
    call_id: str
    name: str
    arguments: str
    status: ItemStatus
    namespace: str | None = None


class CodeInterpreterCall(_Tagged, tag="code_interpreter_call"):
    """Gemini's code execution: its code and, once it ran, its output (``logs``)."""

    id: str
    status: Literal["in_progress", "completed", "incomplete", "interpreting", "failed"]
    container_id: str
    code: str | None = None
    outputs: list[dict[str, Any]] | None = None
    extra_content: dict[str, Any] | None = None


class ImageGenerationCall(_Tagged, tag="image_generation_call"):
    """An image Gemini made: ``result`` is its base64 data."""

    id: str
    status: Literal["in_progress", "completed", "generating", "failed"]
    result: str | None = None
    extra_content: dict[str, Any] | None = None


OutputItem: TypeAlias = (
    OutputMessage | ReasoningItem | FunctionCallItem | CodeInterpreterCall | ImageGenerationCall
)


# -- the response -----------------------------------------------------------------------


class ResponseUsage(_Model):
    """Token counts of the whole response (Gemini's ``usageMetadata``)."""

    input_tokens: int
    input_tokens_details: dict[str, int]
    output_tokens: int
    output_tokens_details: dict[str, int]
    total_tokens: int
    extra_content: dict[str, Any] | None = None


class ResponseError(_Model):
    """Why a response failed: one of the Responses API's ``code`` values and a message;
    for an error that ended the stream, its ``type`` and ``param`` as every other output
    says them (:func:`~rxgem.core.openai_error`)."""

    code: str
    message: str
    param: str | None = None
    type: str | None = None


def _response_object() -> Literal["response"]:
    return "response"


class Response(_Model, kw_only=True):
    """A ``response`` object: the one of the lifecycle events, and the non-streamed answer.

    ``tools``, ``tool_choice``, ``parallel_tool_calls`` and the other echo fields
    repeat the request (the builder's ``request`` option).
    """

    id: str
    object: Literal["response"] = msgspec.field(default_factory=_response_object)
    created_at: int
    model: str
    status: ResponseStatus
    output: list[OutputItem]
    tools: list[Any]
    tool_choice: Any
    parallel_tool_calls: bool
    usage: ResponseUsage | None = None
    error: ResponseError | None = None
    incomplete_details: dict[str, Any] | None = None
    instructions: Any = None
    metadata: dict[str, Any] | None = None
    max_output_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    previous_response_id: str | None = None
    text: dict[str, Any] | None = None
    reasoning: dict[str, Any] | None = None
    store: bool | None = None
    truncation: str | None = None
    background: bool | None = None
    extra_content: dict[str, Any] | None = None


# -- events -----------------------------------------------------------------------------


class _Event(_Tagged):
    sequence_number: int


class ResponseCreated(_Event, tag="response.created"):
    response: Response


class ResponseInProgress(_Event, tag="response.in_progress"):
    response: Response


class ResponseCompleted(_Event, tag="response.completed"):
    response: Response


class ResponseIncomplete(_Event, tag="response.incomplete"):
    response: Response


class ResponseFailed(_Event, tag="response.failed"):
    response: Response


class OutputItemAdded(_Event, tag="response.output_item.added"):
    output_index: int
    item: OutputItem


class OutputItemDone(_Event, tag="response.output_item.done"):
    output_index: int
    item: OutputItem


class ContentPartAdded(_Event, tag="response.content_part.added"):
    item_id: str
    output_index: int
    content_index: int
    part: ContentPart


class ContentPartDone(_Event, tag="response.content_part.done"):
    item_id: str
    output_index: int
    content_index: int
    part: ContentPart


class OutputTextDelta(_Event, tag="response.output_text.delta"):
    item_id: str
    output_index: int
    content_index: int
    delta: str
    logprobs: list[dict[str, Any]]


class OutputTextDone(_Event, tag="response.output_text.done"):
    item_id: str
    output_index: int
    content_index: int
    text: str
    logprobs: list[dict[str, Any]]


class OutputTextAnnotationAdded(_Event, tag="response.output_text.annotation.added"):
    item_id: str
    output_index: int
    content_index: int
    annotation_index: int
    annotation: dict[str, Any]


class RefusalDelta(_Event, tag="response.refusal.delta"):
    item_id: str
    output_index: int
    content_index: int
    delta: str


class RefusalDone(_Event, tag="response.refusal.done"):
    item_id: str
    output_index: int
    content_index: int
    refusal: str


class ReasoningSummaryPartAdded(_Event, tag="response.reasoning_summary_part.added"):
    item_id: str
    output_index: int
    summary_index: int
    part: SummaryText


class ReasoningSummaryPartDone(_Event, tag="response.reasoning_summary_part.done"):
    item_id: str
    output_index: int
    summary_index: int
    part: SummaryText


class ReasoningSummaryTextDelta(_Event, tag="response.reasoning_summary_text.delta"):
    item_id: str
    output_index: int
    summary_index: int
    delta: str


class ReasoningSummaryTextDone(_Event, tag="response.reasoning_summary_text.done"):
    item_id: str
    output_index: int
    summary_index: int
    text: str


class FunctionCallArgumentsDelta(_Event, tag="response.function_call_arguments.delta"):
    item_id: str
    output_index: int
    delta: str


class FunctionCallArgumentsDone(_Event, tag="response.function_call_arguments.done"):
    item_id: str
    output_index: int
    arguments: str


ResponsesEvent: TypeAlias = (
    ResponseCreated
    | ResponseInProgress
    | ResponseCompleted
    | ResponseIncomplete
    | ResponseFailed
    | OutputItemAdded
    | OutputItemDone
    | ContentPartAdded
    | ContentPartDone
    | OutputTextDelta
    | OutputTextDone
    | OutputTextAnnotationAdded
    | RefusalDelta
    | RefusalDone
    | ReasoningSummaryPartAdded
    | ReasoningSummaryPartDone
    | ReasoningSummaryTextDelta
    | ReasoningSummaryTextDone
    | FunctionCallArgumentsDelta
    | FunctionCallArgumentsDone
)
"""Every event the Responses stage emits (each has ``type`` and ``sequence_number``)."""
