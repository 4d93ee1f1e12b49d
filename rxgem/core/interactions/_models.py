"""Typed models of Google's Interactions API stream (``POST /v1beta/interactions``, SSE).

One model per event (``event_type`` is the tag): ``interaction.created``,
``interaction.status_update``, ``step.start {index, step}``, ``step.delta {index, delta}``,
``step.stop {index}``, ``interaction.completed {interaction}`` and ``error``; the
stream's ``data: [DONE]`` is :class:`Done`. A :class:`Step` and a :class:`Delta` hold
the fields of every step and delta type (``type`` says which): a type Google adds later
still decodes, with the fields rxgem knows. Decoding is done by ``msgspec``: unknown keys
are ignored, a known key with the wrong type is a validation error (reported as
:class:`~rxgem.MalformedStreamError` by the parser). Values rxgem carries without reading
(tool arguments and results, annotations) are plain JSON.

The wire names are snake_case, as Google sends them (and as the models name them).
"""

from __future__ import annotations

from typing import Any, TypeAlias

import msgspec

__all__ = [
    "Content",
    "Delta",
    "Done",
    "ErrorEvent",
    "ErrorInfo",
    "Interaction",
    "InteractionCompleted",
    "InteractionCreated",
    "InteractionEvent",
    "InteractionStatusUpdate",
    "InteractionUsage",
    "ModalityTokens",
    "Step",
    "StepDelta",
    "StepStart",
    "StepStop",
    "UnknownEvent",
]

JSON = Any


class Content(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """One content of a ``model_output`` step (or a thought summary): ``text``, ``image``,
    ``audio``, ``video``, ``document``, with ``annotations`` on text."""

    type: str = ""
    text: str | None = None
    data: str | None = None
    uri: str | None = None
    mime_type: str | None = None
    annotations: list[JSON] | None = None


class Step(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """A step at ``step.start`` (or in an Interaction's ``steps[]``); ``type`` says which.

    ``thought``: ``signature``, ``summary``; ``model_output``: ``content``;
    ``function_call``: ``id``, ``name``, ``arguments``; a built-in tool's call:
    ``id``, ``arguments``; its result: ``call_id``, ``result``, ``is_error``.
    """

    type: str = ""
    content: list[Content] | None = None
    summary: list[Content] | None = None
    signature: str | None = None
    id: str | None = None
    name: str | None = None
    arguments: JSON = None
    call_id: str | None = None
    result: JSON = None
    is_error: bool | None = None
    search_type: str | None = None
    error: JSON = None


class Delta(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """A ``step.delta``'s delta; ``type`` says which (``text``, ``thought_summary``,
    ``thought_signature``, ``arguments_delta``, ``text_annotation_delta``, media, one
    per built-in tool call and result)."""

    type: str = ""
    text: str | None = None
    content: Content | None = None
    signature: str | None = None
    # a string fragment for `arguments_delta`, an object for a built-in tool's call
    arguments: JSON = None
    annotations: list[JSON] | None = None
    data: str | None = None
    uri: str | None = None
    mime_type: str | None = None
    result: JSON = None
    is_error: bool | None = None
    name: str | None = None


class ModalityTokens(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """The tokens of one modality (``text``, ``image``, ``audio``, ``video``, ``document``)."""

    modality: str | None = None
    tokens: int | None = None


class InteractionUsage(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """An Interaction's ``usage``: totals and per-modality counts."""

    total_input_tokens: int | None = None
    total_output_tokens: int | None = None
    total_thought_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_tool_use_tokens: int | None = None
    total_tokens: int | None = None
    input_tokens_by_modality: list[ModalityTokens] | None = None
    output_tokens_by_modality: list[ModalityTokens] | None = None
    cached_tokens_by_modality: list[ModalityTokens] | None = None
    tool_use_tokens_by_modality: list[ModalityTokens] | None = None


class ErrorInfo(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """An ``error``: ``code`` (a URI or a status name) and ``message``."""

    code: JSON = None
    message: str | None = None


class Interaction(msgspec.Struct, omit_defaults=True, frozen=True, gc=False):
    """An Interaction object (non-streamed, or in ``interaction.created``/``.completed``).

    ``outputs`` is the pre-June-2026 schema's (read only to refuse it); ``metadata``
    may carry the transitional ``total_usage``.
    """

    id: str | None = None
    status: str | None = None
    model: str | None = None
    agent: str | None = None
    created: str | None = None
    updated: str | None = None
    steps: list[Step] | None = None
    usage: InteractionUsage | None = None
    metadata: dict[str, JSON] | None = None
    errors: list[ErrorInfo] | None = None
    error: ErrorInfo | None = None
    outputs: JSON = None
    object: str | None = None


class _Event(msgspec.Struct, tag_field="event_type", omit_defaults=True, frozen=True, gc=False):
    """The events' common options: tagged by ``event_type``, with the ``event_id`` to
    resume the stream from (when Google sends one)."""

    event_id: str | None = None


class InteractionCreated(_Event, tag="interaction.created", frozen=True, gc=False):
    interaction: Interaction = Interaction()


class InteractionStatusUpdate(_Event, tag="interaction.status_update", frozen=True, gc=False):
    interaction_id: str | None = None
    status: str | None = None


# `raw`: the step or delta as sent, set by the parser only when its type is not one rxgem
# knows (so that what Google added passes on whole); never a key of Google's JSON
_RAW = "__rxgem_raw__"


class StepStart(_Event, tag="step.start", frozen=True, gc=False):
    index: int = -1
    step: Step = Step()
    raw: JSON = msgspec.field(default=None, name=_RAW)


class StepDelta(_Event, tag="step.delta", frozen=True, gc=False):
    index: int = -1
    delta: Delta = Delta()
    raw: JSON = msgspec.field(default=None, name=_RAW)


class StepStop(_Event, tag="step.stop", frozen=True, gc=False):
    index: int = -1


class InteractionCompleted(_Event, tag="interaction.completed", frozen=True, gc=False):
    interaction: Interaction = Interaction()


class ErrorEvent(_Event, tag="error", frozen=True, gc=False):
    error: ErrorInfo | None = None


class Done(msgspec.Struct, frozen=True, gc=False):
    """The stream's last event, ``data: [DONE]``."""


class UnknownEvent(msgspec.Struct, frozen=True, gc=False):
    """An event type the parser does not know (Google adds them), with its JSON."""

    event_type: str
    value: JSON = None
    event_id: str | None = None


InteractionEvent: TypeAlias = (
    InteractionCreated
    | InteractionStatusUpdate
    | StepStart
    | StepDelta
    | StepStop
    | InteractionCompleted
    | ErrorEvent
    | Done
    | UnknownEvent
)
"""What :class:`~rxgem.core.InteractionsParser` turns an SSE event into."""

TaggedEvent: TypeAlias = (
    InteractionCreated
    | InteractionStatusUpdate
    | StepStart
    | StepDelta
    | StepStop
    | InteractionCompleted
    | ErrorEvent
)
