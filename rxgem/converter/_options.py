"""The options of the Gemini → OpenAI pipeline, validated in one place.

``gemini_to_openai(**options)``, ``pipeline_stages(**options)``,
``Converter(**options)`` and ``stream_chat(..., **options)`` take the same keyword
options (:class:`PipelineOptions`); :func:`pipeline_settings` checks them once and
makes the six cores of one stream, in pipeline order (:data:`STAGES`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypedDict

from ..core import (
    Announce,
    ArgsTable,
    ChunkBuilder,
    FinishBuffer,
    GeminiApi,
    ReasoningField,
    ResponseParser,
    SlotPolicy,
    SlotPolicyName,
    SlotTable,
    SSEDecoder,
    random_id,
)

__all__ = ["STAGES", "PipelineOptions", "PipelineSettings", "StreamOptions", "pipeline_settings"]

STAGES: tuple[str, ...] = (
    "decode_sse",
    "parse",
    "group_by_slot",
    "latest_args",
    "flush_on_finish",
    "to_openai",
)
"""The pipeline's stages in order, named after their operators (each over one core)."""


class StreamOptions(TypedDict, total=False):
    """The pipeline's options but ``model`` (which ``stream_chat`` takes as the Gemini model).

    Attributes:
        include_usage: send the final ``choices: []`` usage chunk (default true).
        reasoning_field: ``"reasoning_content"`` (default), ``"reasoning"``, or
            ``None`` to drop thought text.
        render_code: show code execution as fenced Markdown blocks in the content
            (default true); the parts are in ``extra_content.google.parts`` either way.
        signature_in_id: also put each call's thought signature in its id
            (``<id>__thought__<signature>``), for clients that drop unknown fields.
        slot_policy: ``"latest"`` (default), ``"positional"``, ``"every_part"``, or
            a :class:`~rxgem.SlotPolicy` object.
        announce: ``"first"`` (default) announces each choice's first tool call
            early; ``"none"`` holds every call to the end.
        allow_truncated: end a candidate that never got a ``finishReason`` with a
            finish instead of :class:`~rxgem.TruncatedStreamError`.
        id_factory: returns the random part of minted ``chatcmpl-``/``call_`` ids.
        clock: returns the time in seconds used for ``created``.
        api: ``"gemini"`` (default) or ``"vertex"``: whose numbers enums sent as
            integers (``enum-encoding=int``) are read with; the two APIs number
            some ``finishReason``/``blockReason`` values differently.
            ``stream_chat`` picks ``"vertex"`` for an ``aiplatform.googleapis.com``
            base URL unless told.
    """

    include_usage: bool
    reasoning_field: ReasoningField
    render_code: bool
    signature_in_id: bool
    slot_policy: SlotPolicy | SlotPolicyName
    announce: Announce
    allow_truncated: bool
    id_factory: Callable[[], str]
    clock: Callable[[], float]
    api: GeminiApi


class PipelineOptions(StreamOptions, total=False):
    """The keyword options of the whole pipeline (each stage takes its own subset).

    ``model``: the ``model`` of every chunk; default: Gemini's ``modelVersion``.
    The others: see :class:`StreamOptions`.
    """

    model: str | None


@dataclass(frozen=True, slots=True)
class PipelineSettings:
    """Validated :class:`PipelineOptions` with their defaults; makes fresh cores."""

    model: str | None = None
    include_usage: bool = True
    reasoning_field: ReasoningField = "reasoning_content"
    render_code: bool = True
    signature_in_id: bool = False
    slot_policy: SlotPolicy | SlotPolicyName = "latest"
    announce: Announce = "first"
    allow_truncated: bool = False
    id_factory: Callable[[], str] = random_id
    clock: Callable[[], float] = time.time
    api: GeminiApi = "gemini"

    def parser(self) -> ResponseParser:
        return ResponseParser(api=self.api)

    def slot_table(self) -> SlotTable:
        return SlotTable(self.slot_policy)

    def finish_buffer(self) -> FinishBuffer:
        return FinishBuffer(announce=self.announce, allow_truncated=self.allow_truncated)

    def chunk_builder(self) -> ChunkBuilder:
        return ChunkBuilder(
            model=self.model,
            include_usage=self.include_usage,
            reasoning_field=self.reasoning_field,
            render_code=self.render_code,
            signature_in_id=self.signature_in_id,
            id_factory=self.id_factory,
            clock=self.clock,
        )

    def cores(
        self,
    ) -> tuple[SSEDecoder, ResponseParser, SlotTable, ArgsTable, FinishBuffer, ChunkBuilder]:
        """Fresh cores for one stream, in the order of :data:`STAGES`."""
        return (
            SSEDecoder(),
            self.parser(),
            self.slot_table(),
            ArgsTable(),
            self.finish_buffer(),
            self.chunk_builder(),
        )


_NAMES = frozenset(field.name for field in fields(PipelineSettings))


def pipeline_settings(options: Mapping[str, Any]) -> PipelineSettings:
    """Check ``options`` once (unknown names and bad values raise at call time)."""
    settings = settings_of(options)
    settings.cores()  # each core checks its own options (api, policy, announce, reasoning_field)
    return settings


def settings_of(options: Mapping[str, Any]) -> PipelineSettings:
    """:func:`pipeline_settings` but for the cores' own checks (made when they are built)."""
    unknown = sorted(set(options) - _NAMES)
    if unknown:
        raise TypeError(
            f"unknown pipeline option {unknown[0]!r}; expected one of {', '.join(sorted(_NAMES))}"
        )
    settings = PipelineSettings(**options)
    for name in ("id_factory", "clock"):
        if not callable(getattr(settings, name)):
            raise TypeError(f"{name} must be callable")
    return settings
