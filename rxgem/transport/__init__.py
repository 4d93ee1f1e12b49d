"""Gemini over httpx: its streaming endpoints (``streamGenerateContent``, Interactions) as
``Observable[bytes]``, its model list, and the Interactions resources (create, get, cancel,
delete).

HTTP only: :mod:`rxgem.client` composes it with the pipeline (``stream_chat``).
"""

from typing import Any

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
    "CassetteDir",
    "CassetteError",
    "CassetteSink",
    "InteractionsTransportOptions",
    "RetryPolicy",
    "TransportOptions",
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
