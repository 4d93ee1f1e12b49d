from __future__ import annotations

import time
from collections.abc import Callable

from reactivex import Observable

from ..core import Batch, ChatCompletionChunk, ChunkBuilder, ReasoningField, random_id
from ._core_operator import core_operator

__all__ = ["to_openai"]


def to_openai(
    model: str | None = None,
    include_usage: bool = True,
    reasoning_field: ReasoningField = "reasoning_content",
    render_code: bool = True,
    signature_in_id: bool = False,
    id_factory: Callable[[], str] = random_id,
    clock: Callable[[], float] = time.time,
) -> Callable[[Observable[Batch]], Observable[ChatCompletionChunk]]:
    """Turn pipeline items into OpenAI ``chat.completion.chunk`` objects.

    .. code::

        ---[Meta, Text("Hi")]---[Header(0)]---[ToolCall(0), End(STOP), Usage]--|
        [                           to_openai()                                ]
        ---c{role,content}------c{tool 0 hdr}--c{args}--c{tool_calls}--c{usage}--|

    Chunks carry the ``openai`` SDK's attribute paths and ``to_dict()``/``to_json()``.
    ``id`` is ``chatcmpl-<responseId>`` (or a random id), ``model`` the option or
    Gemini's ``modelVersion``; both, and ``created``, are the same on every chunk.

    Args:
        model: the ``model`` field; default: Gemini's ``modelVersion``.
        include_usage: send the final ``choices: []`` usage chunk.
        reasoning_field: ``"reasoning_content"`` (default), ``"reasoning"``, or
            ``None`` to drop thought text.
        render_code: also show code execution as fenced Markdown blocks in the
            content (its parts are in ``extra_content.google.parts`` either way).
        signature_in_id: also put each call's thought signature in its id.
        id_factory: returns the random part of minted ids.
        clock: returns the time in seconds used for ``created``.

    Returns:
        An operator from ``Observable[Batch]`` to ``Observable[ChatCompletionChunk]``.
    """

    def builder() -> ChunkBuilder:
        return ChunkBuilder(
            model=model,
            include_usage=include_usage,
            reasoning_field=reasoning_field,
            render_code=render_code,
            signature_in_id=signature_in_id,
            id_factory=id_factory,
            clock=clock,
        )

    builder()  # the options are checked now, not at subscription
    return core_operator(builder)
