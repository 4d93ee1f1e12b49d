"""rxgem's sans-IO cores: the whole translation in plain classes, no Rx and no I/O.

Gemini side: :class:`SSEDecoder` (bytes → :class:`SSEEvent`), the Gemini models
(:class:`GenerateContentResponse` and its parts), :class:`ResponseParser` and the
tables of enums sent as integers (:data:`ENUM_TABLES`, per :data:`GeminiApi`).
Between the two: :class:`SlotTable` (responses → items, tool-call slots and their
:class:`SlotPolicy`), :class:`ArgsTable` (latest and streamed arguments) and
:class:`FinishBuffer` (what waits for the end). OpenAI side: :class:`ChunkBuilder`
(items → :class:`ChatCompletionChunk`), the OpenAI models, OpenAI SSE framing
(:func:`encode_chunk`) and :class:`ChunkAccumulator`.

Every core has the shape of :class:`Core` (``feed``, ``close``, ``error``), with
one rule for errors; see :mod:`rxgem.core._protocol`.
"""

from ._args_table import ArgsTable
from ._chunk_builder import (
    ChunkBuilder,
    ReasoningField,
    map_finish_reason,
    map_logprobs,
    map_usage,
    random_id,
)
from ._errors import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    RxGemError,
    TruncatedStreamError,
    snippet,
)
from ._finish_buffer import Announce, FinishBuffer
from ._gemini_enums import ENUM_TABLES, EnumTable, EnumTables, GeminiApi, enum_name, normalize_enums
from ._gemini_models import (
    Candidate,
    Content,
    ErrorBody,
    FunctionCall,
    GenerateContentResponse,
    ModalityTokenCount,
    Part,
    PartialArg,
    PromptFeedback,
    UsageMetadata,
)
from ._gemini_parser import ResponseParser, api_error
from ._gemini_sse import DONE, SSEDecoder, SSEEvent
from ._items import (
    Batch,
    Blocked,
    CallPart,
    DataPart,
    Details,
    End,
    Feedback,
    Finish,
    Item,
    Logprobs,
    Meta,
    SlotUpdate,
    Sources,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    Usage,
)
from ._json_growth import grows, grows_from, same_args
from ._json_path import MAX_ARRAY_GAP, MAX_PATH_DEPTH, parse_json_path
from ._openai_assemble import ChunkAccumulator, assemble, completion
from ._openai_models import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
    Choice,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    FinishReason,
)
from ._openai_parts import ID_MARK, render_code
from ._openai_sse import DONE_FRAME, SSEEncoder, encode_chunk, encode_error, error_payload
from ._protocol import Core
from ._slot_policies import (
    EveryPartPolicy,
    LatestArgsPolicy,
    PositionalPolicy,
    SlotInfo,
    SlotPolicy,
    SlotPolicyName,
    resolve_policy,
)
from ._slot_table import MAX_CANDIDATES, SlotTable

__all__ = [
    "DONE",
    "DONE_FRAME",
    "ENUM_TABLES",
    "ID_MARK",
    "MAX_ARRAY_GAP",
    "MAX_CANDIDATES",
    "MAX_PATH_DEPTH",
    "Announce",
    "ArgsTable",
    "Batch",
    "Blocked",
    "CallPart",
    "Candidate",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatCompletionMessage",
    "Choice",
    "ChoiceDelta",
    "ChoiceDeltaToolCall",
    "ChoiceDeltaToolCallFunction",
    "ChunkAccumulator",
    "ChunkBuilder",
    "ChunkChoice",
    "CompletionUsage",
    "Content",
    "Core",
    "DataPart",
    "Details",
    "End",
    "EnumTable",
    "EnumTables",
    "ErrorBody",
    "EveryPartPolicy",
    "Feedback",
    "Finish",
    "FinishBuffer",
    "FinishReason",
    "FunctionCall",
    "GeminiAPIError",
    "GeminiApi",
    "GeminiTransportError",
    "GenerateContentResponse",
    "InvalidRequestError",
    "Item",
    "LatestArgsPolicy",
    "Logprobs",
    "MalformedStreamError",
    "Meta",
    "MissingCredentialsError",
    "ModalityTokenCount",
    "Part",
    "PartialArg",
    "PositionalPolicy",
    "PromptFeedback",
    "ReasoningField",
    "ResponseParser",
    "RxGemError",
    "SSEDecoder",
    "SSEEncoder",
    "SSEEvent",
    "SlotInfo",
    "SlotPolicy",
    "SlotPolicyName",
    "SlotTable",
    "SlotUpdate",
    "Sources",
    "Text",
    "TextSignature",
    "ToolCall",
    "ToolCallHeader",
    "TruncatedStreamError",
    "Usage",
    "UsageMetadata",
    "api_error",
    "assemble",
    "completion",
    "encode_chunk",
    "encode_error",
    "enum_name",
    "error_payload",
    "grows",
    "grows_from",
    "map_finish_reason",
    "map_logprobs",
    "map_usage",
    "normalize_enums",
    "parse_json_path",
    "random_id",
    "render_code",
    "resolve_policy",
    "same_args",
    "snippet",
]
