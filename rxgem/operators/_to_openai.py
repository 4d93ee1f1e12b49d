from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from reactivex import Observable

from ..core import ChatCompletionChunk
from ..core.pipeline import ToOpenAIOptions
from ..core.slots import Batch
from ._stage_operator import documented, stage_operator

__all__ = ["to_openai"]


@documented(ToOpenAIOptions)
def to_openai(
    **options: Unpack[ToOpenAIOptions],
) -> Callable[[Observable[Batch]], Observable[ChatCompletionChunk]]:
    """Turn pipeline items into OpenAI ``chat.completion.chunk`` objects.

    .. code::

        ---[Meta, Text("Hi")]---[Header(0)]---[ToolCall(0), End(STOP), Usage]---|
        [                           to_openai()                                 ]
        ---c{role,content}------c{tool 0 hdr}--c{args}---------(c{tool_calls},c{usage})|

    Each choice's finish and the usage chunk wait for the end of input (completion, or an
    error: they came before it), so an operator before this one may hold content until
    its source completes and the stream stays valid: content, then the finishes, then
    the usage, last.

    Chunks carry the ``openai`` SDK's attribute paths and ``to_dict()``/``to_json()``.
    ``id`` is ``chatcmpl-<responseId>`` (or a random id), ``model`` the option or
    Gemini's ``modelVersion``; both, and ``created``, are the same on every chunk.

    Returns:
        An operator from ``Observable[Batch]`` to ``Observable[ChatCompletionChunk]``.
    """
    return stage_operator("to_openai", options)
