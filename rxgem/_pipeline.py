"""The whole pipeline, composed: Gemini SSE bytes → OpenAI chunks."""

from __future__ import annotations

import time
from collections.abc import Callable

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

__all__ = ["gemini_to_openai"]


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
    to_openai(model, include_usage, reasoning_field, id_factory, clock)``. See each
    operator for its options.

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[ChatCompletionChunk]``.
    """
    return compose(
        decode_sse(),
        parse(),
        group_by_slot(slot_policy),
        latest_args(),
        flush_on_finish(announce=announce, allow_truncated=allow_truncated),
        to_openai(
            model=model,
            include_usage=include_usage,
            reasoning_field=reasoning_field,
            id_factory=id_factory,
            clock=clock,
        ),
    )
