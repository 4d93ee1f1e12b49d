"""Gemini's streaming endpoint over httpx, as an ``Observable[bytes]`` (and of chunks)."""

from ._exchange import DEFAULT_MAX_LINE_BYTES, TransportOptions, from_gemini
from ._http import (
    DEFAULT_BASE_URL,
    DEFAULT_TIMEOUT,
    RetryPolicy,
    http_error,
    model_segment,
    model_url,
    resolve_headers,
    stream_url,
)
from ._stream_chat import StreamChatOptions, api_of, stream_chat

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_TIMEOUT",
    "RetryPolicy",
    "StreamChatOptions",
    "TransportOptions",
    "api_of",
    "from_gemini",
    "http_error",
    "model_segment",
    "model_url",
    "resolve_headers",
    "stream_chat",
    "stream_url",
]
