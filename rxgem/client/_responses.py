"""One call for application code: an OpenAI Responses request, answered by Gemini."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Unpack

from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.disposable import CompositeDisposable, SingleAssignmentDisposable

from ..converter import CoreResponsesConverter, ResponsesConverter
from ..core import (
    RESPONSES_STAGES,
    PipelineSettings,
    Response,
    ResponsesEvent,
    ResponsesPipelineOptions,
    assemble_response,
)
from ..request import Resolve, ResponsesRequest, Unsupported, responses_to_gemini_request
from ..transport import TransportOptions, api_of, from_gemini
from ._split_options import split_options

__all__ = ["ResponsesOptions", "response_events", "responses"]

_FROM_REQUEST: Final = ("model", "request", "include_encrypted_reasoning", "namespaced")
_ENCRYPTED: Final = "reasoning.encrypted_content"


class ResponsesOptions(TransportOptions, ResponsesPipelineOptions, total=False):
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
            ``api`` defaults to the one the base URL names.

    Raises:
        InvalidRequestError: at call time, for a request that cannot be translated.
    """
    for name in _FROM_REQUEST:
        if name in options:
            raise TypeError(f"{name} comes from the request body")
    api = options.get("api") or api_of(options.get("base_url"))
    request = responses_to_gemini_request(
        body, api=api, unsupported=unsupported, history=history, resolve=resolve
    )
    settings: dict[str, Any] = {**options, "api": api}
    events = response_events(request, **settings)
    if request.stream:
        return events
    return events.pipe(ops.to_list(), ops.map(assemble_response))


def response_events(
    request: ResponsesRequest,
    *,
    on_start: Callable[[ResponsesConverter], None] | None = None,
    **options: Any,
) -> Observable[ResponsesEvent]:
    """The Responses events of a translated request: ``from_gemini`` through a
    :class:`~rxgem.converter.ResponsesConverter` made for each subscription.

    ``on_start(converter)`` is called with it at subscription: a server reads its
    ``signatures`` at the end, to store them whether or not the client sees them.
    ``options``: the transport's and the pipeline's, as :func:`responses` takes them
    (``response_id`` too: a server gives a stored response its own id); ``model``,
    ``request``, ``include_encrypted_reasoning`` and ``namespaced`` come from ``request``.
    """
    transport, pipeline = split_options(options)
    pipeline.update(
        model=request.model.removeprefix("models/"),
        request={**request.echo, "store": request.store},
        include_encrypted_reasoning=_ENCRYPTED in request.include,
        namespaced=request.namespaced,
    )
    settings = PipelineSettings(pipeline, RESPONSES_STAGES)  # checked now, once
    body = from_gemini(request.gemini, model=request.model, **transport)

    def subscribe(
        observer: abc.ObserverBase[ResponsesEvent], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        converter = CoreResponsesConverter(settings)
        if on_start is not None:
            on_start(converter)
        upstream = SingleAssignmentDisposable()
        feed = _Feed(converter, observer, upstream)
        upstream.disposable = body.subscribe(feed, scheduler=scheduler)
        return CompositeDisposable(upstream, feed)

    return Observable(subscribe)


class _Feed(abc.ObserverBase[bytes], abc.DisposableBase):
    """Body bytes into one converter, its events out; the stream ends at the response's
    end (``data: [DONE]`` too), a failure's owed events first, then its error."""

    __slots__ = ("_converter", "_observer", "_stopped", "_upstream")

    def __init__(
        self,
        converter: CoreResponsesConverter,
        observer: abc.ObserverBase[ResponsesEvent],
        upstream: abc.DisposableBase,
    ) -> None:
        self._converter = converter
        self._observer = observer
        self._upstream = upstream
        self._stopped = False

    def _emit(self, events: Sequence[ResponsesEvent]) -> None:
        for event in events:
            self._observer.on_next(event)

    def _end(self, error: Exception | None) -> None:
        self._stopped = True
        if error is None:
            self._observer.on_completed()
        else:
            self._observer.on_error(error)

    def on_next(self, value: bytes) -> None:
        if self._stopped:
            return
        converter = self._converter
        try:
            events = converter.feed(value)
        except Exception as error:
            self._emit(getattr(error, "chunks", ()))
            self._end(error)
            self._upstream.dispose()
            return
        self._emit(events)
        if converter.done:  # the response ended (a failure too): stop reading
            self._end(converter.error)
            self._upstream.dispose()

    def on_error(self, error: Exception) -> None:
        if self._stopped:
            return
        self._emit(self._converter.close(error))
        self._end(error)

    def on_completed(self) -> None:
        if self._stopped:
            return
        converter = self._converter
        self._emit(converter.close())
        self._end(converter.error)

    def dispose(self) -> None:
        self._stopped = True
