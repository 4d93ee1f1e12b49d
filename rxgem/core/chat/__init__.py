"""The Chat Completions output: items → :class:`~rxgem.core.ChatCompletionChunk`.

:class:`~rxgem.core.ChunkBuilder`, the Gemini → OpenAI field mapping
(:func:`~rxgem.core.map_finish_reason`, :func:`~rxgem.core.map_usage`,
:func:`~rxgem.core.map_logprobs`; the Responses output maps through it too), the chat
models, their SSE framing (:class:`~rxgem.core.SSEEncoder`) and
:class:`~rxgem.core.ChunkAccumulator` (the ``openai`` SDK's merge of chunks).
"""

from ._assemble import ChunkAccumulator, assemble, completion
from ._chunk_builder import ChunkBuilder, ReasoningField
from ._mapping import created_seconds, map_finish_reason, map_logprobs, map_usage, random_id
from ._models import (
    ChatCompletion,
    ChatCompletionChunk,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    FinishReason,
)
from ._sse import DONE_FRAME, SSEEncoder, encode_chunk

__all__ = [
    "DONE_FRAME",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChoiceDelta",
    "ChoiceDeltaToolCall",
    "ChoiceDeltaToolCallFunction",
    "ChunkAccumulator",
    "ChunkBuilder",
    "ChunkChoice",
    "CompletionUsage",
    "FinishReason",
    "ReasoningField",
    "SSEEncoder",
    "assemble",
    "completion",
    "created_seconds",
    "encode_chunk",
    "map_finish_reason",
    "map_logprobs",
    "map_usage",
    "random_id",
]
