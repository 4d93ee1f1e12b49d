"""Gemini over httpx: its streaming endpoints (``streamGenerateContent``, Interactions) as
``Observable[bytes]``, its model list, and the Interactions resources (create, get, cancel,
delete); httpx transports for its connections (:class:`AiohttpTransport`, which needs the
``server`` extra and loads on first use, and the :func:`ack_head` hook).

HTTP only: :mod:`rxgem.client` composes it with the pipeline (``stream_chat``).
"""

from typing import TYPE_CHECKING, Any

from ._cassette import (
    CassetteDir,
    CassetteError,
    CassetteSink,
    cassette_bytes,
    cassette_json,
    read_cassette,
)
from ._exchange import from_gemini
from ._http import RetryPolicy
from ._interactions_exchange import from_interactions

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._cassette import sniff_cassette as sniff_cassette
from ._exchange import (
    DEFAULT_MAX_LINE_BYTES as DEFAULT_MAX_LINE_BYTES,
    TransportOptions as TransportOptions,
)
from ._http import (
    DEFAULT_BASE_URL as DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    api_of as api_of,
    interactions_url as interactions_url,
    is_google_interaction_id as is_google_interaction_id,
    model_segment as model_segment,
    stream_url as stream_url,
)
from ._interactions_api import (
    cancel_interaction as cancel_interaction,
    create_interaction as create_interaction,
    get_interaction as get_interaction,
)
from ._interactions_exchange import InteractionsTransportOptions as InteractionsTransportOptions
from ._models_api import (
    get_model as get_model,
    list_models as list_models,
    models_status as models_status,
)
from ._transports.quick_ack import ack_head as ack_head
from ._redact import MIN_SECRET as MIN_SECRET, REDACTED as REDACTED, secret_forms as secret_forms
# isort: on

if TYPE_CHECKING:
    from ._transports.aiohttp import AiohttpTransport as AiohttpTransport

__all__ = [
    "CassetteDir",
    "CassetteError",
    "CassetteSink",
    "RetryPolicy",
    "cassette_bytes",
    "cassette_json",
    "from_gemini",
    "from_interactions",
    "read_cassette",
]


_RETIRED = {
    "CASSETTE_FORMAT": "._cassette",
    "DEFAULT_MAX_RESUMES": "._machine",
    "DEFAULT_RESUME": "._interactions_exchange",
    "MAX_MODEL_PAGES": "._models_api",
    "delete_interaction": "._interactions_api",
    "http_error": "._http",
    "model_url": "._http",
    "redact": "._redact",
    "resolve_headers": "._http",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    # aiohttp comes with the server extra: imported on use, and left out of __all__ so
    # that a star import works without it.
    if name == "AiohttpTransport":
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
