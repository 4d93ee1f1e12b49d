"""The whole pipeline, composed: Gemini SSE bytes → OpenAI chunks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeAlias

from reactivex import Observable, compose

from ._chunks import ChatCompletionChunk
from ._finish import Announce
from ._openai import ReasoningField, random_id
from ._slots import SlotPolicy, SlotPolicyName
from .operators import (
    decode_sse,
    flush_on_finish,
    group_by_slot,
    latest_args,
    parse,
    to_openai,
)

__all__ = ["Stage", "gemini_to_openai", "pipeline_stages"]


Stage: TypeAlias = tuple[str, Callable[[Observable[Any]], Observable[Any]]]
"""A named operator: ``(name, operator)``."""


def pipeline_stages(
    *,
    model: str | None = None,
    include_usage: bool = True,
    reasoning_field: ReasoningField = "reasoning_content",
    slot_policy: SlotPolicy | SlotPolicyName = "latest",
    announce: Announce = "first",
    allow_truncated: bool = False,
    id_factory: Callable[[], str] = random_id,
    clock: Callable[[], float] = time.time,
) -> list[Stage]:
    """The six stages of ``gemini_to_openai(**options)``, named after their operators.

    For tracing or drawing the pipeline (``rxgem.viz``), or to compose it with
    operators of your own in between.
    """
    return [
        ("decode_sse", decode_sse()),
        ("parse", parse()),
        ("group_by_slot", group_by_slot(slot_policy)),
        ("latest_args", latest_args()),
        ("flush_on_finish", flush_on_finish(announce=announce, allow_truncated=allow_truncated)),
        (
            "to_openai",
            to_openai(
                model=model,
                include_usage=include_usage,
                reasoning_field=reasoning_field,
                id_factory=id_factory,
                clock=clock,
            ),
        ),
    ]


def gemini_to_openai(
    *,
    model: str | None = None,
    include_usage: bool = True,
    reasoning_field: ReasoningField = "reasoning_content",
    slot_policy: SlotPolicy | SlotPolicyName = "latest",
    announce: Announce = "first",
    allow_truncated: bool = False,
    id_factory: Callable[[], str] = random_id,
    clock: Callable[[], float] = time.time,
) -> Callable[[Observable[bytes]], Observable[ChatCompletionChunk]]:
    """Gemini ``streamGenerateContent?alt=sse`` body bytes → OpenAI chunks.

    .. code::

        ---b"data: {…}\\r\\n\\r\\n"---b"data: {…}"---|
        [               gemini_to_openai()               ]
        ---chunk---chunk---chunk{finish}---chunk{usage}---|

    The six operators composed: ``decode_sse() → parse() → group_by_slot(slot_policy)
    → latest_args() → flush_on_finish(announce, allow_truncated) →
    to_openai(model, include_usage, reasoning_field, id_factory, clock)``
    (:func:`pipeline_stages`). See each operator for its options.

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ChatCompletionChunk]``.
    """
    stages = pipeline_stages(
        model=model,
        include_usage=include_usage,
        reasoning_field=reasoning_field,
        slot_policy=slot_policy,
        announce=announce,
        allow_truncated=allow_truncated,
        id_factory=id_factory,
        clock=clock,
    )
    operator: Callable[[Observable[bytes]], Observable[ChatCompletionChunk]] = compose(
        *(stage for _, stage in stages)
    )
    return operator
