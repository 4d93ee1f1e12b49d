"""One call from a Gemini request to OpenAI chunks: the transport and the pipeline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from reactivex import Observable

from ..converter import StreamOptions
from ..core import ChatCompletionChunk
from ..operators import gemini_to_openai
from ..transport import InteractionsTransportOptions
from ..upstreams import Upstream
from ._split_options import chosen_upstream, split_options

__all__ = ["StreamChatOptions", "stream_chat", "stream_on"]


class StreamChatOptions(InteractionsTransportOptions, StreamOptions, total=False):
    """:func:`stream_chat`'s options: the transport's and the pipeline's (but ``model``)."""


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

    With ``upstream="interactions"``, ``request`` is an Interactions create body
    (:func:`~rxgem.request.chat_to_interaction` makes one; without ``model`` it gets
    ``model``), sent by :func:`~rxgem.transport.from_interactions` (which also takes
    ``resume``: a cut stream of a stored interaction is resumed) and read by the
    Interactions stages.

    Returns:
        ``Observable[ChatCompletionChunk]``.
    """
    return stream_on(chosen_upstream(options), request, model, options)


def stream_on(
    upstream: Upstream, request: Mapping[str, Any], model: str, options: Mapping[str, Any]
) -> Observable[ChatCompletionChunk]:
    """:func:`stream_chat` on an upstream already chosen."""
    transport, pipeline = split_options(upstream, options)
    operator = gemini_to_openai(model=model.removeprefix("models/"), **pipeline)
    return upstream.source(request, model, **transport).pipe(operator)
