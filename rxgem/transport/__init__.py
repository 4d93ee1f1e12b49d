"""Gemini over httpx: its streaming endpoints (``streamGenerateContent``, Interactions) as
``Observable[bytes]``, its model list, and the Interactions resources (create, get, cancel,
delete); httpx transports for its connections (:class:`AiohttpTransport`, which needs the
``server`` extra and loads on first use, and the :func:`ack_head` hook).

HTTP only: :mod:`rxgem.client` composes it with the pipeline (``stream_chat``).
"""

from typing import TYPE_CHECKING, Any

from ._cassette import (
    CASSETTE_FORMAT,
    CassetteDir,
    CassetteError,
    CassetteSink,
    cassette_bytes,
    cassette_json,
    read_cassette,
    sniff_cassette,
)
from ._exchange import DEFAULT_MAX_LINE_BYTES, TransportOptions, from_gemini
from ._http import (
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    RetryPolicy,
    api_of,
    http_error,
    interactions_url,
    is_google_interaction_id,
    model_segment,
    model_url,
    resolve_headers,
    stream_url,
)
from ._interactions_api import (
    cancel_interaction,
    create_interaction,
    delete_interaction,
    get_interaction,
)
from ._interactions_exchange import (
    DEFAULT_MAX_RESUMES,
    DEFAULT_RESUME,
    InteractionsTransportOptions,
    from_interactions,
)
from ._models_api import MAX_MODEL_PAGES, get_model, list_models, models_status
from ._redact import MIN_SECRET, REDACTED, redact, secret_forms
from ._transports.quick_ack import ack_head

if TYPE_CHECKING:
    from ._transports.aiohttp import AiohttpTransport

__all__ = [
    "CASSETTE_FORMAT",
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_RESUMES",
    "DEFAULT_RESUME",
    "DEFAULT_TIMEOUT",
    "MAX_MODEL_PAGES",
    "MIN_SECRET",
    "REDACTED",
    "AiohttpTransport",
    "CassetteDir",
    "CassetteError",
    "CassetteSink",
    "InteractionsTransportOptions",
    "RetryPolicy",
    "TransportOptions",
    "ack_head",
    "api_of",
    "cancel_interaction",
    "cassette_bytes",
    "cassette_json",
    "create_interaction",
    "delete_interaction",
    "from_gemini",
    "from_interactions",
    "get_interaction",
    "get_model",
    "http_error",
    "interactions_url",
    "is_google_interaction_id",
    "list_models",
    "model_segment",
    "model_url",
    "models_status",
    "read_cassette",
    "redact",
    "resolve_headers",
    "secret_forms",
    "sniff_cassette",
    "stream_url",
]


def __getattr__(name: str) -> Any:
    if name == "AiohttpTransport":  # aiohttp comes with the server extra: imported on use
        from ._transports.aiohttp import AiohttpTransport

        return AiohttpTransport
    # The old name of CassetteSink, kept for one release: `rxgem.viz.Recorder` is the
    # recorder of a diagram, and one public name has one meaning.
    if name == "Recorder":
        import warnings

        warnings.warn(
            "rxgem.transport.Recorder is deprecated: it is now rxgem.transport.CassetteSink",
            DeprecationWarning,
            stacklevel=2,
        )
        return CassetteSink
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
