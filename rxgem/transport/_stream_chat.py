"""One call from a Gemini request to OpenAI chunks: the transport and the pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack
from urllib.parse import urlsplit

from reactivex import Observable

from ..converter import StreamOptions
from ..core import ChatCompletionChunk, GeminiApi
from ..operators import gemini_to_openai
from ._exchange import TransportOptions, from_gemini
from ._http import DEFAULT_BASE_URL

__all__ = ["StreamChatOptions", "api_of", "stream_chat"]

_VERTEX_HOST = "aiplatform.googleapis.com"


class StreamChatOptions(TransportOptions, StreamOptions, total=False):
    """:func:`stream_chat`'s options: the transport's and the pipeline's (but ``model``)."""


_TRANSPORT = TransportOptions.__optional_keys__


def api_of(base_url: str | None) -> GeminiApi:
    """The API behind ``base_url``: ``"vertex"`` for a host ending with
    ``aiplatform.googleapis.com``, else ``"gemini"`` (the default base URL's)."""
    host = urlsplit(base_url or DEFAULT_BASE_URL).hostname or ""
    return "vertex" if host.endswith(_VERTEX_HOST) else "gemini"


def stream_chat(
    request: Mapping[str, Any], *, model: str, **options: Unpack[StreamChatOptions]
) -> Observable[ChatCompletionChunk]:
    """``from_gemini(request, model=model, ...)`` piped through ``gemini_to_openai(...)``.

    Options of :func:`from_gemini` (``api_key``, ``access_token``, ``base_url``,
    ``client``, ``timeout``, ``headers``, ``retry``, ``scheduler``, ``max_line_bytes``)
    go to the request; the others (``include_usage``, ``reasoning_field``,
    ``slot_policy``, ...) to :func:`~rxgem.gemini_to_openai`. ``model`` is both the
    Gemini model and the ``model`` of every chunk. Without ``api``, the enum numbering
    follows the base URL: ``"vertex"`` for an ``aiplatform.googleapis.com`` host, else
    ``"gemini"``.

    Returns:
        ``Observable[ChatCompletionChunk]``.
    """
    transport: dict[str, Any] = {k: v for k, v in options.items() if k in _TRANSPORT}
    pipeline: dict[str, Any] = {k: v for k, v in options.items() if k not in _TRANSPORT}
    pipeline.setdefault("api", api_of(transport.get("base_url")))
    operator = gemini_to_openai(model=model.removeprefix("models/"), **pipeline)
    return from_gemini(request, model=model, **transport).pipe(operator)
