"""rxgem: Google Gemini's streams, from ``generateContent`` or the Interactions API, → OpenAI
Chat Completions or Responses, as a pipeline of small reactivex operators over sans-IO cores.

This module exports what application code uses: the entry points (``from_body``,
``from_gemini`` and ``from_interactions``, ``stream_chat``, ``chat_completions``,
``responses``, ``gemini_to_openai`` and ``gemini_to_responses`` with their Interactions
twins ``interactions_to_openai`` and ``interactions_to_responses``, ``sse_encode``,
``iterate``, ``aiterate``, ``assemble``, ``to_gemini_request``), :class:`Converter`,
the chunks and completions it gives (:class:`ChatCompletionChunk`,
:class:`ChatCompletion`), the errors, ``RetryPolicy`` and :class:`SlotPolicy` (to write
your own), and the subpackages. Each other name has
one home: :mod:`rxgem.core` for the cores, the Gemini and OpenAI models, the slot policies and
the mapping functions (``map_usage``, ...); :mod:`rxgem.items` for the item types;
:mod:`rxgem.converter` for the pipeline's options (``PipelineOptions``).

The pipeline::

    bytes ─decode_sse→ SSEEvent ─parse→ GenerateContentResponse ─group_by_slot→
    items ─latest_args→ items ─flush_on_finish→ items ─to_openai→ ChatCompletionChunk

The layers, each importing only from the ones above it in this list (and from a
package's face, its ``__init__``, never from another package's private modules):

- :mod:`rxgem.bridge`: ``iterate``/``aiterate``, which bridge Observables to plain
  iterators, and the flow gate a slow consumer holds the transport's reads with.
  Imports nothing of rxgem.
- :mod:`rxgem.core`: the sans-IO cores (``SSEDecoder``, ``ResponseParser``,
  ``SlotTable``, ``ArgsTable``, ``FinishBuffer``, ``ChunkBuilder``), the Gemini and
  OpenAI models and the errors. No Rx, no I/O.
- :mod:`rxgem.converter`: :class:`Converter`, the six cores composed (bytes in,
  chunks out, no Rx), and the pipeline's options.
- :mod:`rxgem.operators`: one reactivex operator per core, ``gemini_to_openai()``
  and ``sse_encode()``.
- :mod:`rxgem.transport`: Gemini's endpoint over httpx (``from_gemini``, the model
  list), HTTP only. Beside it, :mod:`rxgem.request`: OpenAI Chat Completions requests
  → Gemini requests (``to_gemini_request``), sans-IO.
- :mod:`rxgem.upstreams`: one object per upstream API (``generateContent`` on the Gemini
  API or on Vertex AI, Interactions) holding its request writers, credentials, exchange
  and reader, and the registry that chooses one from the options.
- :mod:`rxgem.client`: the one place the transport meets the pipeline: ``stream_chat``
  (a Gemini request to chunks), and ``chat_completions`` and ``responses``, an OpenAI
  request answered by Gemini (the request translation, the transport and the pipeline
  in one call).
- :mod:`rxgem.viz`, :mod:`rxgem.testing`, :mod:`rxgem.inprocess` (:class:`OpenAITransport`:
  rxgem inside an OpenAI client, as an httpx transport) and the ``rxgem`` command, at the
  edges (``viz`` and ``testing`` load on first use).

``import rxgem`` loads neither httpx nor Starlette: the names that need httpx
(``from_gemini``, ``from_interactions``, ``stream_chat``, ``RetryPolicy``, ``chat_completions``,
``responses``, ``OpenAITransport``) load it on first use, and ``to_gemini_request`` loads the
request translation then.

Every stream error is an :class:`RxGemError`.

Installed with a C compiler at hand, the hot modules of the core are compiled with
mypyc (:data:`COMPILED` is true); ``RXGEM_PURE_PYTHON=1`` in the environment at import
runs the pure-Python sources instead (they behave the same).
"""

from typing import TYPE_CHECKING, Any

# `_build` first: it chooses between the compiled and the pure-Python modules (RXGEM_PURE_PYTHON)
from . import _build, core, items, operators, samples
from ._version import __version__
from .bridge import aiterate, iterate
from .converter import Converter
from .core import (
    ChatCompletion,
    ChatCompletionChunk,
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    RxGemError,
    SlotPolicy,
    TruncatedStreamError,
)
from .core.chat import assemble
from .operators import (
    from_body,
    gemini_to_openai,
    gemini_to_responses,
    interactions_to_openai,
    interactions_to_responses,
    sse_encode,
)

if TYPE_CHECKING:
    from . import testing, viz
    from .client import chat_completions, responses, stream_chat
    from .inprocess import OpenAITransport
    from .request import to_gemini_request
    from .transport import RetryPolicy, from_gemini, from_interactions

COMPILED: bool = _build.compiled()
"""Whether the modules compiled by mypyc are in use (false: the pure-Python sources)."""

__all__ = [
    "COMPILED",
    "ChatCompletion",
    "ChatCompletionChunk",
    "Converter",
    "GeminiAPIError",
    "GeminiTransportError",
    "InvalidRequestError",
    "MalformedStreamError",
    "MissingCredentialsError",
    "OpenAITransport",
    "RetryPolicy",
    "RxGemError",
    "SlotPolicy",
    "TruncatedStreamError",
    "__version__",
    "aiterate",
    "assemble",
    "chat_completions",
    "core",
    "from_body",
    "from_gemini",
    "from_interactions",
    "gemini_to_openai",
    "gemini_to_responses",
    "interactions_to_openai",
    "interactions_to_responses",
    "items",
    "iterate",
    "operators",
    "responses",
    "samples",
    "sse_encode",
    "stream_chat",
    "testing",
    "to_gemini_request",
    "viz",
]

# Tracebacks and reprs name the errors where users import them, not a private module
# (``rxgem.MissingCredentialsError``, not ``rxgem.core._errors.MissingCredentialsError``);
# pickling finds them there too.
for _error in (
    RxGemError,
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    TruncatedStreamError,
):
    _error.__module__ = __name__
del _error

_LAZY_MODULES = frozenset({"testing", "viz"})
_LAZY_TRANSPORT = frozenset({"RetryPolicy", "from_gemini", "from_interactions"})
_LAZY_ELSEWHERE = {
    "to_gemini_request": ".request",
    "chat_completions": ".client",
    "stream_chat": ".client",
    "responses": ".client",
    "OpenAITransport": ".inprocess",
}


def __getattr__(name: str) -> Any:
    # Imported on first use, so that `import rxgem` stays light: `viz` (diagrams) and
    # `testing` (a loopback server, marbles) are not needed to translate a stream, and
    # the transport brings httpx, which code converting bytes it already has never uses.
    import importlib

    if name in _LAZY_MODULES:
        value: Any = importlib.import_module(f".{name}", __name__)
    elif name in _LAZY_TRANSPORT:
        value = getattr(importlib.import_module(".transport", __name__), name)
    elif name in _LAZY_ELSEWHERE:
        value = getattr(importlib.import_module(_LAZY_ELSEWHERE[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
