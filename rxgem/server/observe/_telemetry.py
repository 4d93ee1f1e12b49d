"""The gateway's metrics and traces: Prometheus for ``GET /metrics``, OpenTelemetry for the rest.

One :class:`Telemetry` per app, one :class:`RequestTelemetry` per HTTP request::

    telemetry = Telemetry(metrics=settings.metrics)

    request = telemetry.start("/v1/chat/completions", "POST")  # every request (a middleware)
    request.chat(model, upstream=settings.upstream, stream=True)  # once the body is read
    request.stream_opened()                   # the 200 headers of a stream went out
    request.chunk(time.perf_counter())        # per chunk sent
    request.upstream_error(exc)               # an upstream failure: the exception, or a kind
    request.usage(input_tokens=12, output_tokens=80, reasoning_tokens=30)
    request.finish_reasons(["stop"])
    request.signatures(restored=1)            # signature memory (and placeholders sent)
    request.end(200)                          # in a ``finally``; idempotent

    body, content_type = telemetry.render(request_headers.get("accept"))

``start`` takes the route *template* (``/v1/models/{model_id}``), never the raw path:
a path is chosen by the client and would make a new series per request. A template
the telemetry does not know (:data:`ROUTES` by default) counts as ``other``; so does
a method outside the HTTP verbs, and a status outside 100..599.

The metrics, their names and the multiprocess mode are described in
:mod:`~rxgem.server.observe._metrics`; the spans and GenAI metrics in
:mod:`~rxgem.server.observe._tracing`; the bounded label values in
:mod:`~rxgem.server.observe._labels`.

The ``model`` label is the model id the client named (``models/`` dropped) when it
looks like one (``[A-Za-z0-9._@-]{1,64}``), among the first :data:`MAX_MODELS` seen
by the process; anything else is ``other``, and ``""`` is a request that named none.

The hot path. A prometheus_client ``observe()`` costs about what sending the chunk
costs, so :meth:`RequestTelemetry.chunk` does not observe: it counts the interval in
the stream's own bucket array (a ``bisect`` and an addition; the intervals' sum is the
last chunk's time minus the first's), and :meth:`~RequestTelemetry.end` adds the array
to the model's series at once, through the series' per-bucket values (``_buckets``,
``_sum``: private to prometheus_client, so their shape is checked when the telemetry
is made, with one ``observe()`` per chunk as the fallback, and a test compares the
two). The costs are measured in ``benchmarks/README.md``.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterable
from typing import Final

from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, TracerProvider
from opentelemetry.util.types import AttributeValue
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.exposition import choose_encoder

from ._labels import (
    CHAT_ROUTE,
    ERROR_KINDS,
    MAX_MODELS,
    METHODS,
    OTHER,
    ROUTES,
    TEMPLATE_PARAM,
    count,
    http_kind,
    looks_like_error_type,
    looks_like_model,
    route_labels,
    status_label,
    upstream_error_kind,
)
from ._metrics import (
    CHUNK_INTERVAL_BUCKETS,
    MULTIPROC_ENV,
    Prometheus,
    prometheus_for,
    worker_exited,
)
from ._tracing import GenAI, Usage

__all__ = [
    "CHAT_ROUTE",
    "MAX_MODELS",
    "MULTIPROC_ENV",
    "ROUTES",
    "RequestTelemetry",
    "Telemetry",
    "upstream_error_kind",
    "worker_exited",
]

_MAX_MODEL_ATTRIBUTE: Final = 256
_MAX_ROUTES: Final = 64


class Telemetry:
    """An app's metrics and traces (see the module's docstring).

    Args:
        metrics: keep Prometheus metrics (for ``GET /metrics``). Without them,
            :meth:`start` still gives the OpenTelemetry spans and metrics.
        service_name: the metric names' prefix (a Prometheus namespace).
        routes: the route templates counted by name (others are ``other``).
        tracer_provider: where spans go (default: OpenTelemetry's global provider).
        meter_provider: where GenAI metrics go (default: the global provider).

    Raises:
        RuntimeError: ``PROMETHEUS_MULTIPROC_DIR`` was set after prometheus_client was
            imported, or unset after (the process would lose its counts).
        ValueError: ``PROMETHEUS_MULTIPROC_DIR`` is not a directory.
    """

    def __init__(
        self,
        *,
        metrics: bool,
        service_name: str = "rxgem",
        routes: Iterable[str] = ROUTES,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self.metrics = metrics
        self.service_name = service_name
        self._routes = route_labels(routes)
        self._models: set[str] = set()
        self.multiprocess = False
        self.registry = CollectorRegistry(auto_describe=True)
        """What :meth:`render` exposes (the multiprocess files' collector in that mode)."""
        self._prometheus: Prometheus | None = None
        self._request_class: type[RequestTelemetry] = RequestTelemetry
        if metrics:
            self._prometheus, self.multiprocess = prometheus_for(service_name, self.registry)
            self._request_class = _MeteredRequest if self._prometheus.bulk else _ObservingRequest
        self._gen_ai = GenAI(tracer_provider, meter_provider)

    def start(self, route: str, method: str) -> RequestTelemetry:
        """The telemetry of one request, from now; end it with :meth:`RequestTelemetry.end`.

        ``route`` is the matched route's template (``other`` if not known), never the
        raw path.
        """
        label = self._routes.get(route)
        if label is None:
            label = self._route_label(route)
        return self._request_class(self, label, method if method in METHODS else OTHER)

    def _route_label(self, route: str) -> str:
        """A template written with converters (``{model_id:path}``): its label, remembered."""
        if "{" not in route or len(route) > 256:
            return OTHER
        label = self._routes.get(TEMPLATE_PARAM.sub(r"{\1}", route))
        if label is None:
            return OTHER
        if len(self._routes) < _MAX_ROUTES:
            self._routes[route] = label
        return label

    def render(self, accept: str | None = None) -> tuple[bytes, str]:
        """The Prometheus exposition of all metrics (of all workers in multiprocess mode)
        and its content type, chosen from the request's ``Accept`` header (OpenMetrics
        when asked, else the text format 0.0.4).

        Raises:
            RuntimeError: the telemetry was made with ``metrics=False``.
        """
        if not self.metrics:
            raise RuntimeError("metrics are off: Telemetry(metrics=False)")
        encoder, content_type = choose_encoder(accept or "")
        return encoder(self.registry), content_type

    def model_label(self, model: str | None) -> str:
        """``model`` as a label value: bounded (see the module's docstring)."""
        if not model:
            return ""
        model = model.removeprefix("models/")
        if model in self._models:
            return model
        if len(self._models) >= MAX_MODELS or not looks_like_model(model):
            return OTHER
        self._models.add(model)
        return model


class RequestTelemetry:
    """One request's telemetry (made by :meth:`Telemetry.start`).

    The calls after :meth:`end` do nothing. This class serves ``metrics=False``;
    its subclasses also keep the Prometheus metrics.
    """

    __slots__ = (
        "_began",
        "_chat_began",
        "_ended",
        "_error_kind",
        "_finish_reasons",
        "_first",
        "_last",
        "_method",
        "_model",
        "_opened",
        "_request_model",
        "_response_model",
        "_route",
        "_server",
        "_span",
        "_stream",
        "_telemetry",
        "_usage",
    )

    def __init__(self, telemetry: Telemetry, route: str, method: str) -> None:
        self._telemetry = telemetry
        self._route = route
        self._method = method
        self._began = self._chat_began = time.perf_counter()
        self._model = ""
        self._request_model: str | None = None
        self._response_model: str | None = None
        self._server: dict[str, AttributeValue] | None = None
        self._span: Span | None = None
        self._stream = False
        self._opened = False
        self._ended = False
        self._first: float | None = None
        self._last: float | None = None
        self._error_kind: str | None = None
        self._usage: Usage | None = None
        self._finish_reasons: tuple[str, ...] | None = None

    @property
    def span(self) -> Span | None:
        """The chat completion's span (after :meth:`chat`), to parent other spans."""
        return self._span

    def chat(self, model: str | None, *, upstream: str | None = None, stream: bool = False) -> None:
        """This request is a chat completion with ``model``, about to go ``upstream`` (a
        base URL): the span starts, and the time to the first chunk counts from now."""
        if self._span is not None or self._ended:
            return
        telemetry = self._telemetry
        self._chat_began = time.perf_counter()
        self._model = telemetry.model_label(model)
        self._request_model = model[:_MAX_MODEL_ATTRIBUTE] if model else None
        self._stream = stream
        self._server = telemetry._gen_ai.server(upstream)
        self._span = telemetry._gen_ai.start_chat(model, self._request_model, self._server, stream)

    def stream_opened(self) -> None:
        """The stream's response started: it counts in flight until :meth:`end`."""
        if not self._opened and not self._ended:
            self._opened = True
            self._on_open()

    def _on_open(self) -> None:
        pass

    def chunk(self, now: float) -> None:
        """A chunk was sent at ``now`` (``time.perf_counter()``)."""
        if self._first is None:
            self._first = now

    def signatures(self, *, remembered: int = 0, restored: int = 0, placeholders: int = 0) -> None:
        """Thought signatures this request remembered, got back from memory, or sent
        Gemini as Google's placeholder because none was kept (``_signature_memory``)."""

    def upstream_error(self, error: BaseException | str) -> None:
        """An upstream failure: an exception (see :func:`upstream_error_kind`) or a kind.

        A kind outside the known ones is ``other``; an exception that is not an
        upstream failure is ignored.
        """
        if isinstance(error, BaseException):
            kind = upstream_error_kind(error)
            if kind is None:
                return
        else:
            kind = error if error in ERROR_KINDS or http_kind(error) else OTHER
        if not self._ended:
            self._error_kind = kind
            self._on_upstream_error(kind)

    def _on_upstream_error(self, kind: str) -> None:
        pass

    def usage(
        self,
        input_tokens: int | None,
        output_tokens: int | None,
        reasoning_tokens: int | None = None,
        cached_tokens: int | None = None,
    ) -> None:
        """The tokens of the completion (the last call counts, at :meth:`end`).

        ``reasoning_tokens`` are part of ``output_tokens``, ``cached_tokens`` of
        ``input_tokens``, as in OpenAI's usage.
        """
        counts = (
            count(input_tokens),
            count(output_tokens),
            count(reasoning_tokens),
            count(cached_tokens),
        )
        self._usage = counts

    def finish_reasons(self, reasons: Iterable[str | None]) -> None:
        """Why each choice ended (``stop``, ``length``, ...; None: it did not, ``error``)."""
        self._finish_reasons = tuple(str(r)[:32] if r else "error" for r in reasons)[:64]

    def response_model(self, model: str) -> None:
        """The model that answered, if not the one asked for."""
        self._response_model = model[:_MAX_MODEL_ATTRIBUTE]

    def end(self, status: int, error_type: str | None = None) -> None:
        """The request ended with ``status`` (499 when the client left), ``error_type`` if
        it failed: it is counted, the span ends, the stream leaves the in-flight gauge.

        Idempotent: only the first call counts.
        """
        if self._ended:
            return
        self._ended = True
        now = time.perf_counter()
        if error_type is not None and not looks_like_error_type(error_type):
            error_type = "_OTHER"
        error = error_type or self._error_kind or (str(status) if status >= 400 else None)
        try:
            self._record(status, now)
        finally:
            if self._span is not None:
                self._end_chat(now, error)

    def _record(self, status: int, now: float) -> None:
        pass

    def _end_chat(self, now: float, error: str | None) -> None:
        telemetry = self._telemetry
        assert self._span is not None
        assert self._server is not None
        first_chunk = (
            self._first - self._chat_began if self._stream and self._first is not None else None
        )
        labels = None
        if self._request_model:
            response = self._response_model
            labels = (self._model, telemetry.model_label(response) if response else self._model)
        telemetry._gen_ai.end_chat(
            self._span,
            self._server,
            seconds=now - self._chat_began,
            error=error,
            usage=self._usage,
            finish_reasons=self._finish_reasons,
            first_chunk=first_chunk,
            response_model=self._response_model or self._request_model,
            labels=labels,
        )


class _MeteredRequest(RequestTelemetry):
    """A request with the Prometheus metrics: the chunk intervals counted per stream."""

    __slots__ = ("_counts",)

    def __init__(self, telemetry: Telemetry, route: str, method: str) -> None:
        super().__init__(telemetry, route, method)
        self._counts = [0] * (len(CHUNK_INTERVAL_BUCKETS) + 1)

    @property
    def _metrics(self) -> Prometheus:
        metrics = self._telemetry._prometheus
        assert metrics is not None
        return metrics

    def _on_open(self) -> None:
        self._metrics.in_flight.inc()

    def chunk(self, now: float) -> None:
        last = self._last
        self._last = now
        if last is None:
            self._first_chunk(now)
            return
        # the bucket of Prometheus's observe(): the first whose bound is >= the interval
        self._counts[bisect_left(CHUNK_INTERVAL_BUCKETS, now - last)] += 1

    def _first_chunk(self, now: float) -> None:
        self._first = now
        if self._stream and not self._ended:
            self._metrics.first_chunk_of(self._model).observe(now - self._chat_began)

    def _on_upstream_error(self, kind: str) -> None:
        self._metrics.upstream_errors.labels(kind).inc()

    def signatures(self, *, remembered: int = 0, restored: int = 0, placeholders: int = 0) -> None:
        metrics = self._metrics
        if remembered:
            metrics.signatures.labels("remembered").inc(remembered)
        if restored:
            metrics.signatures.labels("restored").inc(restored)
        if placeholders:
            metrics.placeholders.inc(placeholders)

    def _record(self, status: int, now: float) -> None:
        metrics = self._metrics
        if self._opened:
            metrics.in_flight.dec()
        label = status_label(status)
        metrics.request(self._route, self._method, label, self._model).inc()
        metrics.duration_of(self._route, label).observe(now - self._began)
        self._add_intervals(metrics)
        if self._usage is not None:
            for direction, count in zip(
                ("input", "output", "reasoning", "cached"), self._usage, strict=True
            ):
                if count:
                    metrics.tokens_of(self._model, direction).inc(count)

    def _add_intervals(self, metrics: Prometheus) -> None:
        if self._first is None or self._last is None or not any(self._counts):
            return
        adder = metrics.interval_of(self._model)
        assert not isinstance(adder, Histogram)
        adder(self._counts, self._last - self._first)  # the intervals add up to that


class _ObservingRequest(_MeteredRequest):
    """The fallback when :func:`~rxgem.server.observe._metrics._bulk_add` does not fit
    prometheus_client: one ``observe()`` per chunk interval."""

    __slots__ = ()

    def chunk(self, now: float) -> None:
        last = self._last
        self._last = now
        if last is None:
            self._first_chunk(now)
            return
        series = self._metrics.interval_of(self._model)
        assert isinstance(series, Histogram)
        series.observe(now - last)

    def _add_intervals(self, metrics: Prometheus) -> None:
        pass
