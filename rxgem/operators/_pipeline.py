"""The whole pipeline as one operator, and as its named stages, for either upstream."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, Unpack

from reactivex import Observable

from ..converter import CoreConverter, CoreResponsesConverter, ResponsesConverter
from ..core import ChatCompletionChunk
from ..core.pipeline import (
    RESPONSES_STAGES,
    InteractionsPipelineOptions,
    InteractionsResponsesOptions,
    PipelineOptions,
    PipelineSettings,
    ResponsesPipelineOptions,
)
from ..core.responses import ResponsesEvent
from ._own_operator import core_operator
from ._stage_operator import documented, over_core

__all__ = [
    "NamedOperator",
    "gemini_to_openai",
    "gemini_to_responses",
    "interactions_to_openai",
    "interactions_to_responses",
    "pipeline_stages",
    "responses_operator",
    "responses_stages",
]


NamedOperator: TypeAlias = tuple[str, Callable[[Observable[Any]], Observable[Any]]]
"""An operator with the name it is shown under: ``(name, operator)``."""


@documented(PipelineOptions)
def pipeline_stages(**options: Unpack[PipelineOptions]) -> list[NamedOperator]:
    """The stages of ``gemini_to_openai(**options)``, named after their operators.

    For tracing or drawing the pipeline (:mod:`rxgem.viz`), or to compose it with
    operators of your own in between; composed, they give the same chunks as
    :func:`gemini_to_openai`. Each stage takes the options of its core.

    Returns:
        ``(name, operator)`` for ``decode_sse``, ``parse``, ``group_by_slot``,
        ``latest_args``, ``flush_on_finish`` and ``to_openai``, in this order; with
        ``upstream="interactions"``, for ``decode_sse``, ``parse_interactions``,
        ``read_steps`` and ``to_openai``.
    """
    settings = PipelineSettings(options)
    return [
        (stage.name, over_core(stage, make))
        for stage, make in zip(settings.stages, settings.makers, strict=True)
    ]


def responses_stages(**options: Unpack[ResponsesPipelineOptions]) -> list[NamedOperator]:
    """The stages of ``gemini_to_responses(**options)``, as :func:`pipeline_stages`
    gives those of ``gemini_to_openai``: the same ones with ``to_responses`` last."""
    settings = PipelineSettings(options, RESPONSES_STAGES)
    return [
        (stage.name, over_core(stage, make))
        for stage, make in zip(settings.stages, settings.makers, strict=True)
    ]


@documented(PipelineOptions)
def gemini_to_openai(
    **options: Unpack[PipelineOptions],
) -> Callable[[Observable[bytes]], Observable[ChatCompletionChunk]]:
    """Gemini ``streamGenerateContent?alt=sse`` body bytes → OpenAI chunks.

    .. code::

        ---b"data: {…}\\r\\n\\r\\n"---b"data: {…}"---|
        [               gemini_to_openai()               ]
        ---chunk---chunk---chunk{finish}---chunk{usage}---|

    With ``upstream="interactions"``, the body of an Interactions stream
    (``POST /v1beta/interactions`` with ``"stream": true``) instead
    (:func:`interactions_to_openai`).

    What the operators of :func:`pipeline_stages` do, in one hop: each
    subscription runs a :class:`~rxgem.Converter` (in the cores' shape: what a failed
    stream still owed is emitted, then the error). Each option goes to the stage
    whose core takes it (:class:`~rxgem.converter.PipelineOptions`).

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ChatCompletionChunk]``.
    """
    settings = PipelineSettings(options)  # checked now, once, not at subscription

    def converter() -> CoreConverter:
        return CoreConverter(settings)

    return core_operator(converter, ends_early=True, name="gemini_to_openai")()


@documented(ResponsesPipelineOptions)
def gemini_to_responses(
    **options: Unpack[ResponsesPipelineOptions],
) -> Callable[[Observable[bytes]], Observable[ResponsesEvent]]:
    """Gemini ``streamGenerateContent?alt=sse`` body bytes → OpenAI Responses events.

    .. code::

        ---b"data: {…}\\r\\n\\r\\n"---b"data: {…}"---|
        [               gemini_to_responses()               ]
        ---created,in_progress,…delta---…delta,…done---completed|

    :func:`gemini_to_openai` with the Responses output as its last stage
    (``to_responses``): each subscription runs a
    :class:`~rxgem.converter.ResponsesConverter` in the cores' shape (a failed stream
    emits the events it still owed, ending with ``response.failed``, then the error).

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ResponsesEvent]``.
    """
    return responses_operator(options)


def responses_operator(
    options: Mapping[str, Any],
    on_start: Callable[[ResponsesConverter], None] | None = None,
) -> Callable[[Observable[bytes]], Observable[ResponsesEvent]]:
    """:func:`gemini_to_responses` with a hook: ``on_start(converter)`` at each
    subscription, before the first byte, with the converter it runs (a server reads its
    ``signatures`` at the end, to store them whether or not the client sees them)."""
    settings = PipelineSettings(options, RESPONSES_STAGES)  # checked now, once

    def converter() -> CoreResponsesConverter:
        made = CoreResponsesConverter(settings)
        if on_start is not None:
            on_start(made)
        return made

    return core_operator(converter, ends_early=True, name="gemini_to_responses")()


@documented(InteractionsPipelineOptions)
def interactions_to_openai(
    **options: Unpack[InteractionsPipelineOptions],
) -> Callable[[Observable[bytes]], Observable[ChatCompletionChunk]]:
    """Gemini Interactions stream body bytes → OpenAI chunks.

    .. code::

        ---b"event: step.start\\ndata: {…}\\n\\n"---b"event: step.delta…"---|
        [                     interactions_to_openai()                      ]
        ---chunk{role,tool 0 hdr}----------------chunk{args}---chunk{finish}---|

    ``gemini_to_openai(upstream="interactions", **options)``: the stages
    ``decode_sse``, ``parse_interactions``, ``read_steps`` and ``to_openai`` in one hop.

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ChatCompletionChunk]``.
    """
    return gemini_to_openai(upstream="interactions", **options)


@documented(InteractionsResponsesOptions)
def interactions_to_responses(
    **options: Unpack[InteractionsResponsesOptions],
) -> Callable[[Observable[bytes]], Observable[ResponsesEvent]]:
    """Gemini Interactions stream body bytes → OpenAI Responses events.

    .. code::

        ---b"event: step.start\\ndata: {…}\\n\\n"---b"event: step.delta…"---|
        [                    interactions_to_responses()                    ]
        ---created,in_progress,…added-------------…delta-----…done,completed|

    ``gemini_to_responses(upstream="interactions", **options)``.

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ResponsesEvent]``.
    """
    return responses_operator({**options, "upstream": "interactions"})
