"""Gemini over httpx: its streaming endpoint as an ``Observable[bytes]``, and its model list.

HTTP only: :mod:`rxgem.client` composes it with the pipeline (``stream_chat``).
"""

from ._exchange import DEFAULT_MAX_LINE_BYTES, TransportOptions, from_gemini
from ._http import (
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    RetryPolicy,
    api_of,
    http_error,
    model_segment,
    model_url,
    resolve_headers,
    stream_url,
)
from ._models_api import MAX_MODEL_PAGES, get_model, list_models, models_status

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_TIMEOUT",
    "MAX_MODEL_PAGES",
    "RetryPolicy",
    "TransportOptions",
    "api_of",
    "from_gemini",
    "get_model",
    "http_error",
    "list_models",
    "model_segment",
    "model_url",
    "models_status",
    "resolve_headers",
    "stream_url",
]
