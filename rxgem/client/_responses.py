"""One call for application code: an OpenAI Responses request, answered by Gemini."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Unpack

from reactivex import Observable
from reactivex import operators as ops

from ..converter import ResponsesConverter
from ..core import assemble_response
from ..core.pipeline import ResponsesPipelineOptions
from ..core.responses import Response, ResponsesEvent
from ..operators import responses_operator
from ..request import InteractionRequest, Resolve, ResponsesRequest, Unsupported
from ..transport import InteractionsTransportOptions
from ..upstreams import Upstream
from ._split_options import chosen_upstream, split_options

__all__ = ["ResponsesOptions", "response_events", "response_events_on", "responses"]

_FROM_REQUEST: Final = ("model", "request", "include_encrypted_reasoning", "namespaced")
_ENCRYPTED: Final = "reasoning.encrypted_content"


class ResponsesOptions(InteractionsTransportOptions, ResponsesPipelineOptions, total=False):
    """:func:`responses`'s options: the transport's, and the Responses pipeline's but
    ``model``, ``request``, ``include_encrypted_reasoning`` and ``namespaced`` (the
    request says them)."""


def responses(
    body: Mapping[str, Any],
    *,
    unsupported: Unsupported = "error",
    history: Sequence[Mapping[str, Any]] | None = None,
    resolve: Resolve | None = None,
    **options: Unpack[ResponsesOptions],
) -> Observable[ResponsesEvent] | Observable[Response]:
    """Answer an OpenAI Responses request body with Gemini.

    The body is translated by :func:`~rxgem.request.responses_to_gemini_request`
    (``body["model"]`` is the Gemini model), sent with :func:`~rxgem.from_gemini`, and
    answered as OpenAI would: with ``"stream": true``, an Observable of the Responses
    streaming events (``response.created`` ... ``response.completed``; a stream that
    fails after it started ends with ``response.failed``, then the Observable errors);
    without, an Observable of one :class:`~rxgem.core.Response`, the terminal event's.
    Iterate it (``rxgem.iterate``/``aiterate``), ``.run()`` it, or ``await`` it.

    Gemini's thought signatures are in the ``reasoning`` items' ``encrypted_content``
    when ``include`` asks for ``"reasoning.encrypted_content"``: send those items back
    on the next turn. Nothing is stored here (``store`` is for a server):
    ``previous_response_id`` needs the conversation in ``history``, and
    ``item_reference`` a ``resolve`` (see ``responses_to_gemini_request``).

    Args:
        unsupported: ``"error"`` (default) refuses a field that has no Gemini
            counterpart; ``"warn"`` leaves it out with a warning.
        history: the items ``previous_response_id`` stands for, oldest first.
        resolve: the stored item of an ``item_reference`` id, or ``None``.
        options: the transport's (``api_key``, ``base_url``, ``client``, ``retry``,
            ...) and the Responses pipeline's (``slot_policy``, ``id_factory``, ...).
            ``api`` defaults to the one the base URL names. ``upstream="interactions"``
            asks Gemini's Interactions API instead
            (:func:`~rxgem.request.responses_to_interaction`; Google keeps nothing, so
            the conversation is replayed from ``history``), whose transport takes
            ``resume`` too.

    Raises:
        InvalidRequestError: at call time, for a request that cannot be translated.
    """
    for name in _FROM_REQUEST:
        if name in options:
            raise TypeError(f"{name} comes from the request body")
    upstream = chosen_upstream(options)
    request = upstream.responses_request(
        body, unsupported=unsupported, history=history, resolve=resolve
    )
    events = _events_on(upstream, request, None, dict(options))
    if request.stream:
        return events
    return events.pipe(ops.to_list(), ops.map(assemble_response))


def response_events(
    request: ResponsesRequest | InteractionRequest,
    *,
    on_start: Callable[[ResponsesConverter], None] | None = None,
    **options: Any,
) -> Observable[ResponsesEvent]:
    """The Responses events of a translated request: ``from_gemini`` (an
    :class:`~rxgem.request.InteractionRequest`: ``from_interactions``, with
    ``upstream="interactions"``) through :func:`~rxgem.operators.gemini_to_responses`,
    whose converter (one per subscription) ``on_start`` gets at subscription: a server
    reads its ``signatures`` at the end, to store them whether or not the client sees
    them.

    ``options``: the transport's and the pipeline's, as :func:`responses` takes them
    (``response_id`` too: a server gives a stored response its own id); ``model``,
    ``request``, ``include_encrypted_reasoning`` and ``namespaced`` come from ``request``.
    """
    return response_events_on(chosen_upstream(options, writes=request), request, on_start, options)


def response_events_on(
    upstream: Upstream,
    request: ResponsesRequest | InteractionRequest,
    on_start: Callable[[ResponsesConverter], None] | None,
    options: Mapping[str, Any],
) -> Observable[ResponsesEvent]:
    """:func:`response_events` on an upstream already chosen (a gateway's).

    Raises:
        TypeError: ``request`` was written for another upstream's stream.
    """
    if not isinstance(request, upstream.responses_type):
        wanted = chosen_upstream({}, writes=request)
        raise TypeError(f"{type(request).__name__} is sent with upstream={wanted.name!r}")
    return _events_on(upstream, request, on_start, options)


def _events_on(
    upstream: Upstream,
    request: ResponsesRequest | InteractionRequest,
    on_start: Callable[[ResponsesConverter], None] | None,
    options: Mapping[str, Any],
) -> Observable[ResponsesEvent]:
    """:func:`response_events` on the upstream that wrote ``request``."""
    transport, pipeline = split_options(upstream, options)
    pipeline.update(
        model=request.model.removeprefix("models/"),
        request={**request.echo, "store": request.store},
        include_encrypted_reasoning=_ENCRYPTED in request.include,
        namespaced=request.namespaced,
    )
    operator = responses_operator(pipeline, on_start)  # the options checked now, once
    body = request.body if isinstance(request, InteractionRequest) else request.gemini
    return upstream.source(body, request.model, **transport).pipe(operator)
