"""The whole pipeline as one operator, and as its six named stages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias, Unpack

from reactivex import Observable

from ..converter import STAGES, Converter, PipelineOptions, pipeline_settings
from ..core import ChatCompletionChunk
from ._core_operator import core_operator
from ._decode_sse import decode_sse
from ._flush_on_finish import flush_on_finish
from ._group_by_slot import group_by_slot
from ._latest_args import latest_args
from ._parse import parse
from ._to_openai import to_openai

__all__ = ["NamedOperator", "gemini_to_openai", "pipeline_stages"]


NamedOperator: TypeAlias = tuple[str, Callable[[Observable[Any]], Observable[Any]]]
"""An operator with the name it is shown under: ``(name, operator)``."""


def pipeline_stages(**options: Unpack[PipelineOptions]) -> list[NamedOperator]:
    """The six stages of ``gemini_to_openai(**options)``, named after their operators.

    For tracing or drawing the pipeline (:mod:`rxgem.viz`), or to compose it with
    operators of your own in between; composed, they give the same chunks as
    :func:`gemini_to_openai`.
    """
    s = pipeline_settings(options)
    operators = (
        decode_sse(),
        parse(api=s.api),
        group_by_slot(s.slot_policy),
        latest_args(),
        flush_on_finish(announce=s.announce, allow_truncated=s.allow_truncated),
        to_openai(
            model=s.model,
            include_usage=s.include_usage,
            reasoning_field=s.reasoning_field,
            render_code=s.render_code,
            signature_in_id=s.signature_in_id,
            id_factory=s.id_factory,
            clock=s.clock,
        ),
    )
    return list(zip(STAGES, operators, strict=True))


def gemini_to_openai(
    **options: Unpack[PipelineOptions],
) -> Callable[[Observable[bytes]], Observable[ChatCompletionChunk]]:
    """Gemini ``streamGenerateContent?alt=sse`` body bytes → OpenAI chunks.

    .. code::

        ---b"data: {…}\\r\\n\\r\\n"---b"data: {…}"---|
        [               gemini_to_openai()               ]
        ---chunk---chunk---chunk{finish}---chunk{usage}---|

    What ``decode_sse() → parse(api) → group_by_slot(slot_policy) → latest_args() →
    flush_on_finish(announce, allow_truncated) → to_openai(model, include_usage,
    reasoning_field, render_code, signature_in_id, id_factory, clock)`` do
    (:func:`pipeline_stages`), in one hop:
    each subscription runs a :class:`~rxgem.Converter`. See each operator for its
    options (:class:`~rxgem.converter.PipelineOptions`).

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ChatCompletionChunk]``.
    """
    pipeline_settings(options)  # checked now, not at subscription

    def converter() -> Converter:
        return Converter(**options)

    return core_operator(converter, ends_early=True)
