"""One call for application code: an OpenAI Chat Completions request, answered by Gemini."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Unpack

from reactivex import Observable
from reactivex import operators as ops

from ..converter import StreamOptions
from ..core import ChatCompletion, ChatCompletionChunk, InvalidRequestError
from ..core.chat import completion
from ..request import Unsupported
from ..transport import InteractionsTransportOptions
from ..upstreams import Upstream
from ._split_options import chosen_upstream
from ._stream_chat import stream_on

__all__ = ["ChatCompletionsOptions", "chat_completions", "chat_completions_on"]


class ChatCompletionsOptions(InteractionsTransportOptions, StreamOptions, total=False):
    """:func:`chat_completions`'s options: the transport's, and the pipeline's but
    ``include_usage`` (which the request's ``stream_options`` says)."""


def chat_completions(
    body: dict[str, Any],
    *,
    include_thoughts: bool | None = None,
    unsupported: Unsupported = "error",
    **options: Unpack[ChatCompletionsOptions],
) -> Observable[ChatCompletionChunk] | Observable[ChatCompletion]:
    """Answer an OpenAI Chat Completions request body with Gemini.

    The body is translated by :func:`~rxgem.to_gemini_request` (``body["model"]`` is
    the Gemini model), sent with :func:`~rxgem.stream_chat`, and answered as OpenAI
    would: with ``"stream": true``, an Observable of ``chat.completion.chunk``
    (the usage chunk only with ``stream_options.include_usage``); without, an
    Observable of one :class:`~rxgem.ChatCompletion`, the same stream assembled.
    Iterate it (``rxgem.iterate``/``aiterate``), ``.run()`` it, or ``await`` it.

    Args:
        include_thoughts: ask Gemini for thought summaries (they arrive in the
            ``reasoning_field``); ``None`` leaves Gemini's default.
        unsupported: ``"error"`` (default) refuses a field that has no Gemini
            counterpart; ``"warn"`` leaves it out with a warning.
        options: the transport's (``api_key``, ``base_url``, ``client``, ``retry``,
            ...) and the pipeline's (``reasoning_field``, ``slot_policy``, ...).
            ``api`` defaults to the one the base URL names. ``upstream="interactions"``
            asks Gemini's Interactions API instead (:func:`~rxgem.request.chat_to_interaction`,
            stateless: Google keeps nothing), whose transport takes ``resume`` too.

    Raises:
        InvalidRequestError: at call time, for a request that cannot be translated.
    """
    return chat_completions_on(
        chosen_upstream(options),
        body,
        include_thoughts=include_thoughts,
        unsupported=unsupported,
        options=options,
    )


def chat_completions_on(
    upstream: Upstream,
    body: dict[str, Any],
    *,
    include_thoughts: bool | None = None,
    unsupported: Unsupported = "error",
    options: Mapping[str, Any],
) -> Observable[ChatCompletionChunk] | Observable[ChatCompletion]:
    """:func:`chat_completions` on an upstream already chosen (a gateway's)."""
    if "include_usage" in options:
        raise TypeError("include_usage comes from the request's stream_options")
    settings: dict[str, Any] = dict(options)
    request = upstream.chat_request(
        body, include_thoughts=include_thoughts, unsupported=unsupported
    )
    stream = body.get("stream")
    if stream not in (None, True, False):
        raise InvalidRequestError("must be true or false", where="stream")
    stream_options = body.get("stream_options") or {}
    if type(stream_options) is not dict:
        raise InvalidRequestError("must be an object", where="stream_options")
    include_usage = bool(stream_options.get("include_usage")) if stream else True
    settings["include_usage"] = include_usage
    chunks = stream_on(upstream, request, body["model"], settings)
    if stream:
        return chunks
    return chunks.pipe(ops.to_list(), ops.map(completion))
