"""rxgem's sans-IO cores: the whole translation in plain classes, no Rx and no I/O.

One folder per side, data flowing one way (readers → items → outputs):

- ``sse/``: :class:`SSEDecoder`, bytes → :class:`SSEEvent` (any SSE upstream).
- ``gemini/``: the ``generateContent`` reader: :class:`ResponseParser` (events →
  :class:`GenerateContentResponse`, enums numbered per :data:`GeminiApi`) and the models.
- ``slots/``: the items (public as :mod:`rxgem.items`) and the stages on them:
  :class:`SlotTable` (responses → items, per :class:`SlotPolicy`), :class:`ArgsTable`,
  :class:`FinishBuffer`.
- ``chat/``: :class:`ChunkBuilder` (items → :class:`ChatCompletionChunk`), the field
  mapping (:func:`map_finish_reason`, :func:`map_usage`, :func:`map_logprobs`), the chat
  models, :class:`SSEEncoder`, :class:`ChunkAccumulator`.
- ``responses/``: ``ResponsesBuilder`` (items → Responses events), its models and
  framing; it maps finish reasons and usage through ``chat/``'s mapping.
- ``openai/``: what both outputs share and neither owns (citations, code parts).
- Here: the errors and the one mapping of them to OpenAI's error objects
  (``openai_error``), the core protocol (:class:`Core`: ``feed``, ``close``, ``error``)
  and the options, declared once for every stage.

- ``interactions/``: the reader of Google's Interactions API: :class:`InteractionsParser`
  (events → typed events), :class:`StepReader` (typed events → items, straight to the
  outputs) and :func:`interaction_items` (a non-streamed Interaction object → items).

An upstream is a reader folder: a core that turns its stream into the items of
:mod:`rxgem.items` (text, tool calls with their ids and arguments, a finish, usage), so
that every output takes it unchanged.

``__all__`` is what this package offers: the cores, their protocol, what they read and
write (:class:`SSEEvent`, :class:`GenerateContentResponse`, :class:`Interaction`,
:class:`ChatCompletionChunk`, :class:`ChatCompletion`, :func:`assemble_response`),
:class:`SlotPolicy` and the errors. The models inside those, the other slot policies and
the mapping functions stay in their folders. The face also imports, outside ``__all__``,
what other rxgem packages take from here (they import through faces, never private
modules): the item types, whose public home is :mod:`rxgem.items`, and a few internal
helpers.
"""

from typing import Any

from ._errors import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    RxGemError,
    TruncatedStreamError,
)
from ._protocol import Core
from .chat._assemble import ChunkAccumulator as ChunkAccumulator
from .chat._chunk_builder import ChunkBuilder
from .chat._models import (
    ChatCompletion,
    ChatCompletionChunk,
)
from .chat._models import (
    ChoiceDelta as ChoiceDelta,
)
from .chat._models import (
    ChoiceDeltaToolCall as ChoiceDeltaToolCall,
)
from .chat._models import (
    ChoiceDeltaToolCallFunction as ChoiceDeltaToolCallFunction,
)
from .chat._models import (
    ChunkChoice as ChunkChoice,
)
from .chat._models import (
    CompletionUsage as CompletionUsage,
)
from .chat._models import (
    FinishReason as FinishReason,
)
from .chat._sse import SSEEncoder
from .gemini._enums import GeminiApi as GeminiApi
from .gemini._models import GenerateContentResponse
from .gemini._models import Part as Part
from .gemini._parser import ResponseParser
from .interactions._models import Interaction
from .interactions._models import InteractionEvent as InteractionEvent
from .interactions._object import interaction_items
from .interactions._parser import InteractionsParser
from .interactions._reader import StepReader
from .responses._assemble import assemble_response
from .slots._args_table import ArgsTable
from .slots._finish_buffer import FinishBuffer
from .slots._policies import SlotPolicy
from .slots._table import SlotTable
from .sse._decoder import SSEDecoder, SSEEvent

# Not public here, so not in `__all__`; imported (`x as x` marks them re-exported for mypy
# and ruff) because other rxgem packages take them from this face. Grouped by purpose, so
# kept out of the import sorting.
# isort: off

# The item types the cores make and take: their public home is `rxgem.items` (which takes
# them from here), and the operators type their batches with them.
from .slots._items import (
    ArgsDelta as ArgsDelta,
    Batch as Batch,
    Blocked as Blocked,
    CallPart as CallPart,
    DataPart as DataPart,
    Details as Details,
    End as End,
    Feedback as Feedback,
    Finish as Finish,
    Item as Item,
    Logprobs as Logprobs,
    Meta as Meta,
    SlotUpdate as SlotUpdate,
    Sources as Sources,
    Text as Text,
    TextSignature as TextSignature,
    ToolCall as ToolCall,
    ToolCallHeader as ToolCallHeader,
    UnknownStep as UnknownStep,
    Usage as Usage,
)

# Public as `rxgem.assemble` (an entry point); `rxgem`, `rxgem.cli.demo` and
# `rxgem.testing` take it from here. `completion` is its typed form, for `rxgem.client`.
from .chat._assemble import assemble as assemble, completion as completion

# Helpers of other packages: the converter's and `to_openai`'s default chunk ids
# (`random_id`), `group_by_slot`'s policy names (`resolve_policy`), the request
# translation's code parts and thought-signature ids (`render_code`, `ID_MARK`), the
# server's chat frames (`DONE_FRAME`, `encode_chunk`).
from .chat._mapping import random_id as random_id
from .slots._policies import resolve_policy as resolve_policy
from .openai._parts import ID_MARK as ID_MARK, render_code as render_code
from .chat._sse import DONE_FRAME as DONE_FRAME, encode_chunk as encode_chunk

# The one error vocabulary (an exception → OpenAI's error object), for the replies of
# `rxgem.replies` and the command's error lines.
from ._openai_error import (
    OpenAIError as OpenAIError,
    openai_error as openai_error,
    type_of as type_of,
)

# The pipeline's options, each declared once, and its stages: for the operators, the
# converter and the transport (the option types' public home is `rxgem.converter`).
from ._options import (
    FlushOnFinishOptions as FlushOnFinishOptions,
    GroupBySlotOptions as GroupBySlotOptions,
    InteractionsPipelineOptions as InteractionsPipelineOptions,
    InteractionsResponsesOptions as InteractionsResponsesOptions,
    ParseOptions as ParseOptions,
    PipelineOptions as PipelineOptions,
    ReadStepsOptions as ReadStepsOptions,
    ResponsesPipelineOptions as ResponsesPipelineOptions,
    StreamOptions as StreamOptions,
    ToOpenAIOptions as ToOpenAIOptions,
    ToResponsesOptions as ToResponsesOptions,
    Upstream as Upstream,
    UpstreamOptions as UpstreamOptions,
    options_doc as options_doc,
)
from ._stages import (
    INTERACTIONS_RESPONSES_STAGES as INTERACTIONS_RESPONSES_STAGES,
    INTERACTIONS_STAGES as INTERACTIONS_STAGES,
    RESPONSES_STAGES as RESPONSES_STAGES,
    STAGES as STAGES,
    Output as Output,
    PipelineSettings as PipelineSettings,
    Reader as Reader,
    Stage as Stage,
    reader_of as reader_of,
    stages_of as stages_of,
)

# The Responses output (the `to_responses` stage's core, its events and the assembled
# response): for the operators, the converter and the server.
from .responses._builder import ResponsesBuilder as ResponsesBuilder
from .responses._models import (
    Response as Response,
    ResponsesEvent as ResponsesEvent,
    ResponseUsage as ResponseUsage,
)
from .responses._sse import (
    ResponsesSSEEncoder as ResponsesSSEEncoder,
    encode_event as encode_event,
    encode_stream_error as encode_stream_error,
)

# Gemini's thought signatures in a Responses reasoning item's `encrypted_content`:
# written by the Responses output, read back by the request translation.
from .responses._reasoning_carrier import (
    CarriedSignature as CarriedSignature,
    decode_signatures as decode_signatures,
    encode_signatures as encode_signatures,
)

# isort: on

__all__ = [
    "ArgsTable",
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChunkBuilder",
    "Core",
    "FinishBuffer",
    "GeminiAPIError",
    "GeminiTransportError",
    "GenerateContentResponse",
    "Interaction",
    "InteractionsParser",
    "InvalidRequestError",
    "MalformedStreamError",
    "MissingCredentialsError",
    "ResponseParser",
    "RxGemError",
    "SSEDecoder",
    "SSEEncoder",
    "SSEEvent",
    "SlotPolicy",
    "SlotTable",
    "StepReader",
    "TruncatedStreamError",
    "assemble_response",
    "interaction_items",
]


_RETIRED = {
    "Announce": ".slots._finish_buffer",
    "Candidate": ".gemini._models",
    "ChatCompletionMessage": ".chat._models",
    "Choice": ".chat._models",
    "Content": ".gemini._models",
    "ErrorBody": ".gemini._models",
    "EveryPartPolicy": ".slots._policies",
    "FunctionCall": ".gemini._models",
    "InteractionUsage": ".interactions._models",
    "LatestArgsPolicy": ".slots._policies",
    "ModalityTokenCount": ".gemini._models",
    "PartialArg": ".gemini._models",
    "PositionalPolicy": ".slots._policies",
    "PromptFeedback": ".gemini._models",
    "ReasoningField": ".chat._chunk_builder",
    "SlotInfo": ".slots._policies",
    "SlotPolicyName": ".slots._policies",
    "UsageMetadata": ".gemini._models",
    "map_finish_reason": ".chat._mapping",
    "map_logprobs": ".chat._mapping",
    "map_usage": ".chat._mapping",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    if name in _RETIRED:
        import importlib
        import warnings

        warnings.warn(
            f"{__name__}.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
