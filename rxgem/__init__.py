"""rxgem: Gemini ``streamGenerateContent?alt=sse`` → OpenAI ``chat.completion.chunk``,
as a pipeline of small reactivex operators.

The pipeline::

    bytes ─decode_sse→ SSEEvent ─parse→ GenerateContentResponse ─group_by_slot→
    items ─latest_args→ items ─flush_on_finish→ items ─to_openai→ ChatCompletionChunk

``gemini_to_openai()`` composes all six (they live in :mod:`rxgem.operators`);
``sse_encode()`` frames chunks as OpenAI's SSE. The sans-IO cores under the
operators (``SSEDecoder``, ``ResponseParser``, ``SlotTable``, ``ArgsTable``,
``FinishBuffer``, ``ChunkBuilder``) are exported too, for use without Rx.
Every stream error is an :class:`RxGemError`.
"""

from . import items, operators, samples, viz
from ._args import ArgsTable
from ._assemble import ChunkAccumulator, assemble
from ._bridge import aiterate, iterate
from ._chunks import (
    ChatCompletionChunk,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
)
from ._errors import (
    GeminiAPIError,
    GeminiTransportError,
    MalformedStreamError,
    MissingCredentialsError,
    RxGemError,
    TruncatedStreamError,
)
from ._finish import FinishBuffer
from ._openai import ChunkBuilder, map_finish_reason, map_usage
from ._parse import ResponseParser
from ._pipeline import gemini_to_openai
from ._slots import (
    EveryPartPolicy,
    LatestArgsPolicy,
    PositionalPolicy,
    SlotInfo,
    SlotPolicy,
    SlotTable,
)
from ._sse import SSEDecoder, SSEEvent
from ._transport import RetryPolicy, from_gemini, stream_chat
from ._wire import GenerateContentResponse
from .operators import sse_encode

__version__ = "0.1.0"

__all__ = [
    "ArgsTable",
    "ChatCompletionChunk",
    "ChoiceDelta",
    "ChoiceDeltaToolCall",
    "ChoiceDeltaToolCallFunction",
    "ChunkAccumulator",
    "ChunkBuilder",
    "ChunkChoice",
    "CompletionUsage",
    "EveryPartPolicy",
    "FinishBuffer",
    "GeminiAPIError",
    "GeminiTransportError",
    "GenerateContentResponse",
    "LatestArgsPolicy",
    "MalformedStreamError",
    "MissingCredentialsError",
    "PositionalPolicy",
    "ResponseParser",
    "RetryPolicy",
    "RxGemError",
    "SSEDecoder",
    "SSEEvent",
    "SlotInfo",
    "SlotPolicy",
    "SlotTable",
    "TruncatedStreamError",
    "__version__",
    "aiterate",
    "assemble",
    "from_gemini",
    "gemini_to_openai",
    "items",
    "iterate",
    "map_finish_reason",
    "map_usage",
    "operators",
    "samples",
    "sse_encode",
    "stream_chat",
    "viz",
]
