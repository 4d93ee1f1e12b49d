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
    request.end(200)                          # in a ``finally``; idempotent

    body, content_type = telemetry.render(request_headers.get("accept"))

``start`` takes the route *template* (``/v1/models/{model_id}``), never the raw path:
a path is chosen by the client and would make a new series per request. A template
the telemetry does not know (:data:`ROUTES` by default) counts as ``other``; so does
a method outside the HTTP verbs, and a status outside 100..599.

Prometheus (``rxgem_`` is the ``service_name``; in a registry of the :class:`Telemetry`
object, never prometheus_client's global one):

=================================== ========= =============================
metric                              type      labels
=================================== ========= =============================
rxgem_requests_total                counter   route, method, status, model
rxgem_request_duration_seconds      histogram route, status
rxgem_streams_in_flight             gauge     (multiprocess mode ``livesum``)
rxgem_time_to_first_chunk_seconds   histogram model
rxgem_chunk_interval_seconds        histogram model
rxgem_upstream_errors_total         counter   kind
rxgem_tokens_total                  counter   model, direction
=================================== ========= =============================

The time to the first chunk counts from :meth:`~RequestTelemetry.chat` (the request
going upstream), for streams; the chunk interval is the time between consecutive
chunks sent in one stream. An upstream error's ``kind`` is ``http_<status>``,
``timeout``, ``connect``, ``transport``, ``malformed`` or ``truncated`` (see
:func:`upstream_error_kind`). A token ``direction`` is ``input`` or ``output``, and
of those ``reasoning`` (part of output) and ``cached`` (part of input): do not add
all four up.

The ``model`` label is the model id the client named (``models/`` dropped) when it
looks like one (``[A-Za-z0-9._@-]{1,64}``), among the first :data:`MAX_MODELS` seen
by the process; anything else is ``other``, and ``""`` is a request that named none.

Several worker processes: when ``PROMETHEUS_MULTIPROC_DIR`` is set (``rxgem serve
--workers N`` sets it to a fresh directory), every worker writes its metrics to files
there and :meth:`Telemetry.render` in any worker adds up all of them
(prometheus_client's ``MultiProcessCollector``). prometheus_client chooses the mode
when it is *imported*, so the variable must be set before that; a :class:`Telemetry`
made in a process where the two disagree raises ``RuntimeError`` rather than lose
the counts. The in-flight gauge sums the live workers only once the supervisor
calls :func:`worker_exited` for a worker that died.

The hot path. One ``observe()`` of a prometheus_client histogram costs 1 to 2 µs (4
to 5 µs in multiprocess mode, where it writes to a memory-mapped file): about what
sending the chunk costs. So :meth:`RequestTelemetry.chunk` does not observe: it
counts the interval in the stream's own bucket array (a ``bisect`` and an addition;
the intervals' sum is the last chunk's time minus the first's), and
:meth:`~RequestTelemetry.end` adds the array to the model's series at once, through
the series' per-bucket values (``_buckets``, ``_sum``: private to prometheus_client,
so their shape is checked when the telemetry is made, with one ``observe()`` per
chunk as the fallback, and a test compares the two). Measured with ``timeit``
(CPython 3.11, best of 15 rounds of 50,000 calls, loop included): ``chunk()`` costs
0.18 µs with metrics on (in both modes), 0.045 µs with them off (it notes the first
chunk's time only), where an empty method costs 0.04 µs. The chunk-interval
histogram is therefore updated when a stream ends. A whole streamed request of 10
chunks costs about 25 µs with metrics on (40 µs in multiprocess mode), 8 µs with
them off (OpenTelemetry's no-op span and instruments).

OpenTelemetry, through the API only (a no-op until the application installs an SDK;
or pass ``tracer_provider=`` / ``meter_provider=``), after the GenAI semantic
conventions v1.41.0 (the last release inside open-telemetry/semantic-conventions,
which opentelemetry-semantic-conventions 0.66b2 mirrors; they now evolve in
open-telemetry/semantic-conventions-genai, whose unreleased draft renames the
client metrics ``gen_ai.client.inference.*``):

- a span per chat completion, ``chat {model}``, kind ``CLIENT`` (toward the model),
  with ``gen_ai.operation.name`` = ``chat``, ``gen_ai.provider.name`` (``gcp.gemini``,
  or ``gcp.vertex_ai`` for an ``aiplatform.googleapis.com`` upstream),
  ``gen_ai.request.model``, ``gen_ai.request.stream``, ``gen_ai.response.model``,
  ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.reasoning.output_tokens``, ``gen_ai.usage.cache_read.input_tokens``,
  ``gen_ai.response.finish_reasons``, ``gen_ai.response.time_to_first_chunk``,
  ``server.address`` and ``server.port`` of the upstream; on failure ``error.type``
  and the status ``ERROR``. No message text and no exception is recorded (they may
  hold the prompt or a secret).
- the histograms ``gen_ai.client.operation.duration`` (with ``error.type`` on
  failure), ``gen_ai.client.token.usage`` (``gen_ai.token.type`` ``input`` or
  ``output``) and, for streams, ``gen_ai.client.operation.time_to_first_chunk``,
  with the bucket boundaries the conventions advise. ``gen_ai.server.*`` is left out:
  those describe a model server, and the gateway is the model's client here (its span
  is ``CLIENT``); ``gen_ai.client.operation.time_per_output_chunk`` is left out because
  it is recorded per chunk, a few µs each with an SDK: the Prometheus chunk-interval
  histogram measures the same.

``error.type`` is the ``error_type`` given to :meth:`~RequestTelemetry.end`, else the
last upstream error's kind, else the status (``"429"``) when it is 400 or more.
"""

from __future__ import annotations

import math
import os
import re
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

import httpx
from opentelemetry import metrics as otel_metrics
from opentelemetry import trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.util.types import AttributeValue
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client import values as prometheus_values
from prometheus_client.exposition import choose_encoder
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from .. import __version__
from ..core import GeminiAPIError, GeminiTransportError, MalformedStreamError, TruncatedStreamError
from ..transport import api_of
from ._errors import error_reply

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

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable that puts prometheus_client in multiprocess mode."""

CHAT_ROUTE: Final = "/v1/chat/completions"
ROUTES: Final = (
    CHAT_ROUTE,
    "/v1/models",
    "/v1/models/{model_id}",
    "/healthz",
    "/readyz",
    "/metrics",
)
"""The route templates counted under their own name by default; any other is ``other``."""

MAX_MODELS: Final = 100
"""The most distinct ``model`` label values a process gives; beyond, ``other``."""

OTHER: Final = "other"

# seconds; an LLM request lasts from milliseconds (a 4xx) to minutes (a long answer)
DURATION_BUCKETS: Final = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0,
    120.0, 300.0, 600.0,
)  # fmt: skip
FIRST_CHUNK_BUCKETS: Final = (
    0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 15.0, 20.0, 30.0,
    45.0, 60.0,
)  # fmt: skip
CHUNK_INTERVAL_BUCKETS: Final = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
)  # fmt: skip
# the boundaries the GenAI conventions advise
_OTEL_DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
_OTEL_TOKEN_BUCKETS: Final = tuple(float(4**i) for i in range(14))  # 1, 4, 16, ... 67108864

_SCOPE: Final = "rxgem.server"
_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.41.0"

# attribute and metric names of the GenAI semantic conventions (v1.41.0)
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
ERROR_TYPE: Final = "error.type"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
GEN_AI_CLIENT_OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
GEN_AI_CLIENT_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK: Final = "gen_ai.client.operation.time_to_first_chunk"
PROVIDER_GEMINI: Final = "gcp.gemini"
PROVIDER_VERTEX_AI: Final = "gcp.vertex_ai"

_looks_like_model = re.compile(r"[A-Za-z0-9._@-]{1,64}").fullmatch
_looks_like_error_type = re.compile(r"[A-Za-z0-9._:-]{1,64}").fullmatch
_http_kind = re.compile(r"http_[1-5][0-9][0-9]").fullmatch
_ERROR_KINDS: Final = frozenset({"timeout", "connect", "transport", "malformed", "truncated"})
_METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
_TEMPLATE_PARAM: Final = re.compile(r"\{(\w+):\w+\}")
_MAX_MODEL_ATTRIBUTE: Final = 256
_MAX_SERVERS: Final = 16
_MAX_ROUTES: Final = 64


def upstream_error_kind(error: BaseException) -> str | None:
    """The ``kind`` label of an upstream failure, or None for an error that is not one.

    ``http_<status>`` for Gemini's errors (the status the client is answered with,
    also for an error inside a 200 stream), ``timeout``, ``connect`` or
    ``transport`` for the connection, ``malformed`` or ``truncated`` for a stream
    that could not be read. A request refused before it left (``InvalidRequestError``,
    no credentials) and a bug are not upstream errors.
    """
    if isinstance(error, GeminiAPIError):
        return f"http_{error_reply(error).status}"
    if isinstance(error, GeminiTransportError):
        if isinstance(error.cause, httpx.TimeoutException):
            return "timeout"
        if isinstance(error.cause, httpx.ConnectError):
            return "connect"
        return "transport"
    if isinstance(error, TruncatedStreamError):
        return "truncated"
    if isinstance(error, MalformedStreamError):
        return "malformed"
    return None


def worker_exited(pid: int) -> None:
    """Tell the metrics of other workers that worker ``pid`` is gone (multiprocess mode).

    Its in-flight streams then leave ``rxgem_streams_in_flight``; its counters stay
    counted. Without ``PROMETHEUS_MULTIPROC_DIR``: nothing.
    """
    if os.environ.get(MULTIPROC_ENV):
        mark_process_dead(pid)  # type: ignore[no-untyped-call]


def _route_labels(routes: Iterable[str]) -> dict[str, str]:
    """Each template, and its form without converters (``{id:path}`` → ``{id}``), → its label."""
    labels: dict[str, str] = {}
    for route in routes:
        label = _TEMPLATE_PARAM.sub(r"{\1}", route)
        labels[route] = labels[label] = label
    return labels


def _status_label(status: int) -> str:
    return str(status) if 100 <= status <= 599 else OTHER


def _count(value: object) -> int | None:
    """A token count, or None for anything that is not a whole number ≥ 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


BulkAdd = Callable[[Sequence[int], float], None]
"""Adds per-bucket counts (the last for +Inf) and their sum to one histogram series."""


def _bulk_add(series: Histogram, bounds: Sequence[float]) -> BulkAdd | None:
    """The bulk adder of a histogram series, or None if prometheus_client's internals moved.

    A series keeps one value per bucket, *not* cumulative (``_buckets``, the last for
    +Inf), and one for the sum (``_sum``); ``observe(x)`` adds x to the sum and 1 to
    the first bucket whose bound is ≥ x. Adding n to a bucket is n such observations.
    """
    buckets: Any = getattr(series, "_buckets", None)
    total: Any = getattr(series, "_sum", None)
    upper: Any = getattr(series, "_upper_bounds", None)
    if not (
        isinstance(buckets, list)
        and upper == [*map(float, bounds), math.inf]
        and len(buckets) == len(upper)
        and all(callable(getattr(b, "inc", None)) for b in buckets)
        and callable(getattr(total, "inc", None))
    ):
        return None
    increments: list[Callable[[float], None]] = [b.inc for b in buckets]
    add_sum: Callable[[float], None] = total.inc

    def add(counts: Sequence[int], seconds: float) -> None:
        for increment, count in zip(increments, counts, strict=True):
            if count:
                increment(count)
        add_sum(seconds)

    return add


_M = TypeVar("_M", Counter, Histogram)


def _child(cache: dict[Any, _M], metric: _M, key: tuple[str, ...]) -> _M:
    """``metric.labels(*key)``, made once: ``labels()`` takes a lock and builds a key."""
    child = cache.get(key)
    if child is None:
        child = cache[key] = metric.labels(*key)
    return child


class _Prometheus:
    """The Prometheus metrics (shared by every :class:`Telemetry` of a process in
    multiprocess mode, where two objects for one series would overwrite each other)."""

    def __init__(self, namespace: str, registry: CollectorRegistry | None) -> None:
        common: dict[str, Any] = {"namespace": namespace, "registry": registry}
        self.requests = Counter(
            "requests",
            "HTTP requests answered, by route template, method, status and model.",
            ("route", "method", "status", "model"),
            **common,
        )
        self.duration = Histogram(
            "request_duration_seconds",
            "Time from a request's arrival to its last byte, by route template and status.",
            ("route", "status"),
            buckets=DURATION_BUCKETS,
            **common,
        )
        self.in_flight = Gauge(
            "streams_in_flight",
            "Streamed chat completions whose response has started and not ended.",
            multiprocess_mode="livesum",
            **common,
        )
        self.first_chunk = Histogram(
            "time_to_first_chunk_seconds",
            "Time from sending a streamed chat completion upstream to its first chunk sent.",
            ("model",),
            buckets=FIRST_CHUNK_BUCKETS,
            **common,
        )
        self.interval = Histogram(
            "chunk_interval_seconds",
            "Time between consecutive chunks sent in one stream (added when the stream ends).",
            ("model",),
            buckets=CHUNK_INTERVAL_BUCKETS,
            **common,
        )
        self.upstream_errors = Counter(
            "upstream_errors",
            "Failures of requests to Gemini, by kind (http_<status>, timeout, connect, ...).",
            ("kind",),
            **common,
        )
        self.tokens = Counter(
            "tokens",
            "Tokens by model and direction (input, output; reasoning is part of output,"
            " cached part of input).",
            ("model", "direction"),
            **common,
        )
        # the label children, looked up once per label set (all of them are bounded)
        self._requests: dict[tuple[str, str, str, str], Counter] = {}
        self._durations: dict[tuple[str, str], Histogram] = {}
        self._first_chunks: dict[tuple[str], Histogram] = {}
        self._tokens: dict[tuple[str, str], Counter] = {}
        self._intervals: dict[str, BulkAdd | Histogram] = {}
        # pre-made (a zero series, as Prometheus advises), and the check of _bulk_add
        self.bulk = _bulk_add(self.interval.labels(OTHER), CHUNK_INTERVAL_BUCKETS) is not None

    def request(self, route: str, method: str, status: str, model: str) -> Counter:
        return _child(self._requests, self.requests, (route, method, status, model))

    def duration_of(self, route: str, status: str) -> Histogram:
        return _child(self._durations, self.duration, (route, status))

    def tokens_of(self, model: str, direction: str) -> Counter:
        return _child(self._tokens, self.tokens, (model, direction))

    def first_chunk_of(self, model: str) -> Histogram:
        return _child(self._first_chunks, self.first_chunk, (model,))

    def interval_of(self, model: str) -> BulkAdd | Histogram:
        """The bulk adder of the model's chunk-interval series (its histogram when
        :attr:`bulk` is false)."""
        adder = self._intervals.get(model)
        if adder is None:
            series = self.interval.labels(model)
            adder = self._intervals[model] = (
                _bulk_add(series, CHUNK_INTERVAL_BUCKETS) if self.bulk else None
            ) or series
        return adder


_SHARED: dict[str, _Prometheus] = {}
"""Multiprocess mode: the process's metrics by namespace."""


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
        self._routes = _route_labels(routes)
        self._models: set[str] = set()
        self._servers: dict[str, dict[str, AttributeValue]] = {}
        self.multiprocess = False
        self.registry = CollectorRegistry(auto_describe=True)
        """What :meth:`render` exposes (the multiprocess files' collector in that mode)."""
        self._prometheus: _Prometheus | None = None
        self._request_class: type[RequestTelemetry] = RequestTelemetry
        if metrics:
            self._prometheus = self._make_prometheus(service_name)
            self._request_class = _MeteredRequest if self._prometheus.bulk else _ObservingRequest

        self._tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider, _SCHEMA_URL)
        meter = otel_metrics.get_meter(_SCOPE, __version__, meter_provider, _SCHEMA_URL)
        self._otel_duration = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_OTEL_DURATION_BUCKETS,
        )
        self._otel_tokens = meter.create_histogram(
            GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_OTEL_TOKEN_BUCKETS,
        )
        self._otel_first_chunk = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK,
            unit="s",
            description="Time to receive the first chunk of a streamed response.",
            explicit_bucket_boundaries_advisory=FIRST_CHUNK_BUCKETS,
        )

    def _make_prometheus(self, namespace: str) -> _Prometheus:
        directory = os.environ.get(MULTIPROC_ENV)
        imported_multiprocess = bool(getattr(prometheus_values.ValueClass, "_multiprocess", False))
        if bool(directory) != imported_multiprocess:
            raise RuntimeError(
                f"{MULTIPROC_ENV} must be set before prometheus_client is imported, and stay"
                f" set: it is {'set' if directory else 'unset'} now, but prometheus_client"
                f" was imported {'with' if imported_multiprocess else 'without'} it"
            )
        if not directory:
            return _Prometheus(namespace, self.registry)
        self.multiprocess = True
        # raises ValueError if not a directory
        MultiProcessCollector(self.registry, path=directory)  # type: ignore[no-untyped-call]
        shared = _SHARED.get(namespace)
        if shared is None:
            shared = _SHARED[namespace] = _Prometheus(namespace, None)
        return shared

    def start(self, route: str, method: str) -> RequestTelemetry:
        """The telemetry of one request, from now; end it with :meth:`RequestTelemetry.end`.

        ``route`` is the matched route's template (``other`` if not known), never the
        raw path.
        """
        label = self._routes.get(route)
        if label is None:
            label = self._route_label(route)
        return self._request_class(self, label, method if method in _METHODS else OTHER)

    def _route_label(self, route: str) -> str:
        """A template written with converters (``{model_id:path}``): its label, remembered."""
        if "{" not in route or len(route) > 256:
            return OTHER
        label = self._routes.get(_TEMPLATE_PARAM.sub(r"{\1}", route))
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
        if len(self._models) >= MAX_MODELS or not _looks_like_model(model):
            return OTHER
        self._models.add(model)
        return model

    def _server(self, upstream: str | None) -> dict[str, AttributeValue]:
        """``gen_ai.provider.name``, ``server.address`` and ``server.port`` of an upstream."""
        if upstream is None:
            return {GEN_AI_PROVIDER_NAME: PROVIDER_GEMINI}
        attributes = self._servers.get(upstream)
        if attributes is not None:
            return attributes
        attributes = {GEN_AI_PROVIDER_NAME: PROVIDER_GEMINI}
        try:  # urlsplit() raises for a malformed host or port
            split = urlsplit(upstream)
            if split.hostname:
                attributes[SERVER_ADDRESS] = split.hostname
                attributes[SERVER_PORT] = split.port or (443 if split.scheme == "https" else 80)
            if api_of(upstream) == "vertex":
                attributes[GEN_AI_PROVIDER_NAME] = PROVIDER_VERTEX_AI
        except ValueError:
            pass
        if len(self._servers) < _MAX_SERVERS:
            self._servers[upstream] = attributes
        return attributes


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
        self._usage: tuple[int | None, int | None, int | None, int | None] | None = None
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
        self._server = telemetry._server(upstream)
        attributes: dict[str, AttributeValue] = {
            GEN_AI_OPERATION_NAME: "chat",
            **self._server,
        }
        if self._request_model:
            attributes[GEN_AI_REQUEST_MODEL] = self._request_model
        if stream:
            attributes[GEN_AI_REQUEST_STREAM] = True
        named = model is not None and _looks_like_model(model.removeprefix("models/"))
        name = f"chat {model}" if named else "chat"
        self._span = telemetry._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)

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
            kind = error if error in _ERROR_KINDS or _http_kind(error) else OTHER
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
            _count(input_tokens),
            _count(output_tokens),
            _count(reasoning_tokens),
            _count(cached_tokens),
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
        if error_type is not None and not _looks_like_error_type(error_type):
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
        span = self._span
        assert span is not None
        assert self._server is not None
        input_tokens = output_tokens = reasoning = cached = None
        if self._usage is not None:
            input_tokens, output_tokens, reasoning, cached = self._usage
        first_chunk = (
            self._first - self._chat_began if self._stream and self._first is not None else None
        )
        response_model = self._response_model or self._request_model
        if span.is_recording():
            attributes: dict[str, AttributeValue] = {}
            if response_model:
                attributes[GEN_AI_RESPONSE_MODEL] = response_model
            for key, value in (
                (GEN_AI_USAGE_INPUT_TOKENS, input_tokens),
                (GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens),
                (GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, reasoning),
                (GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, cached),
            ):
                if value is not None:
                    attributes[key] = value
            if self._finish_reasons is not None:
                attributes[GEN_AI_RESPONSE_FINISH_REASONS] = self._finish_reasons
            if first_chunk is not None:
                attributes[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = first_chunk
            if error is not None:
                attributes[ERROR_TYPE] = error
                span.set_status(Status(StatusCode.ERROR, error))
            span.set_attributes(attributes)
        span.end()

        # the metric attributes: bounded, like the Prometheus labels
        common: dict[str, AttributeValue] = {GEN_AI_OPERATION_NAME: "chat", **self._server}
        if self._request_model:
            common[GEN_AI_REQUEST_MODEL] = self._model
            common[GEN_AI_RESPONSE_MODEL] = (
                telemetry.model_label(self._response_model) if self._response_model else self._model
            )
        duration = {**common, ERROR_TYPE: error} if error is not None else common
        telemetry._otel_duration.record(now - self._chat_began, duration)
        if input_tokens is not None:
            telemetry._otel_tokens.record(input_tokens, {**common, GEN_AI_TOKEN_TYPE: "input"})
        if output_tokens is not None:
            telemetry._otel_tokens.record(output_tokens, {**common, GEN_AI_TOKEN_TYPE: "output"})
        if first_chunk is not None:
            telemetry._otel_first_chunk.record(first_chunk, common)


class _MeteredRequest(RequestTelemetry):
    """A request with the Prometheus metrics: the chunk intervals counted per stream."""

    __slots__ = ("_counts",)

    def __init__(self, telemetry: Telemetry, route: str, method: str) -> None:
        super().__init__(telemetry, route, method)
        self._counts = [0] * (len(CHUNK_INTERVAL_BUCKETS) + 1)

    @property
    def _metrics(self) -> _Prometheus:
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

    def _record(self, status: int, now: float) -> None:
        metrics = self._metrics
        if self._opened:
            metrics.in_flight.dec()
        label = _status_label(status)
        metrics.request(self._route, self._method, label, self._model).inc()
        metrics.duration_of(self._route, label).observe(now - self._began)
        self._add_intervals(metrics)
        if self._usage is not None:
            for direction, count in zip(
                ("input", "output", "reasoning", "cached"), self._usage, strict=True
            ):
                if count:
                    metrics.tokens_of(self._model, direction).inc(count)

    def _add_intervals(self, metrics: _Prometheus) -> None:
        if self._first is None or self._last is None or not any(self._counts):
            return
        adder = metrics.interval_of(self._model)
        assert not isinstance(adder, Histogram)
        adder(self._counts, self._last - self._first)  # the intervals add up to that


class _ObservingRequest(_MeteredRequest):
    """The fallback when :func:`_bulk_add` does not fit prometheus_client: one
    ``observe()`` per chunk interval (about 2 µs each)."""

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

    def _add_intervals(self, metrics: _Prometheus) -> None:
        pass
