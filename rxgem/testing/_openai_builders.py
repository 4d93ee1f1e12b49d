"""Short constructors of the OpenAI chunks rxgem emits, for the expected side of tests.

:func:`chunk`, :func:`tool_delta` and :func:`usage_chunk` have defaults that match
``gemini_to_openai(clock=lambda: 0)`` run on events made by
:func:`~rxgem.testing.event` (``responseId`` ``"test"``, ``modelVersion``
``"gemini-test"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from ..core import ChatCompletionChunk
from ..core.chat import (
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    FinishReason,
)
from ._gemini_builders import MODEL, RESPONSE_ID

__all__ = ["CHUNK_ID", "chunk", "tool_delta", "usage_chunk"]

CHUNK_ID = f"chatcmpl-{RESPONSE_ID}"
"""The chunk ``id`` rxgem derives from :data:`RESPONSE_ID`, and :func:`chunk`'s default."""


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
