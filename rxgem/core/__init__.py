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
- ``openai/``: what both outputs share and neither owns (citations, code parts) and the
  one mapping of rxgem's errors to OpenAI's error objects (``openai_error``).
- Here: the errors, the core protocol (:class:`Core`: ``feed``, ``close``, ``error``) and
  the options' checks.
- ``pipeline/``: the options, each declared once for every stage, and the stages in order
  (it assembles the other sides; none imports it).

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
the mapping functions stay in their folders. Other rxgem packages
take what else they need from the side's face (``rxgem.core.slots``, ``rxgem.core.chat``,
...), never from a side's private modules; the options and stages are the ``pipeline/``
side's.
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
from .chat import ChatCompletion, ChatCompletionChunk, ChunkBuilder, SSEEncoder
from .gemini import GenerateContentResponse, ResponseParser
from .interactions import Interaction, InteractionsParser, StepReader, interaction_items
from .responses import assemble_response
from .slots import ArgsTable, FinishBuffer, SlotPolicy, SlotTable
from .sse import SSEDecoder, SSEEvent

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
    "ChoiceDelta": ".chat._models",
    "ChoiceDeltaToolCall": ".chat._models",
    "ChoiceDeltaToolCallFunction": ".chat._models",
    "ChunkAccumulator": ".chat._assemble",
    "ChunkChoice": ".chat._models",
    "CompletionUsage": ".chat._models",
    "Content": ".gemini._models",
    "ErrorBody": ".gemini._models",
    "EveryPartPolicy": ".slots._policies",
    "FinishReason": ".chat._models",
    "FunctionCall": ".gemini._models",
    "GeminiApi": ".gemini._enums",
    "InteractionEvent": ".interactions._models",
    "InteractionUsage": ".interactions._models",
    "LatestArgsPolicy": ".slots._policies",
    "ModalityTokenCount": ".gemini._models",
    "Part": ".gemini._models",
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
