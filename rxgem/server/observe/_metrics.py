"""Prometheus metrics for ``GET /metrics``.

The metrics (``rxgem_`` is the ``service_name``; in a registry of the
:class:`~rxgem.server.observe._telemetry.Telemetry` object, never prometheus_client's global
one):

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
rxgem_signatures_total              counter   outcome
rxgem_signature_placeholders_total  counter
=================================== ========= =============================

The time to the first chunk counts from
:meth:`~rxgem.server.observe._telemetry.RequestTelemetry.chat` (the request going upstream), for
streams; the chunk interval is the time between consecutive chunks sent in one stream.
An upstream error's ``kind`` is ``http_<status>``, ``timeout``, ``connect``,
``transport``, ``malformed`` or ``truncated`` (see
:func:`~rxgem.server.observe._labels.upstream_error_kind`). A token ``direction`` is ``input``
or ``output``, and of those ``reasoning`` (part of output) and ``cached`` (part of
input): do not add all four up. A signature ``outcome`` is ``remembered`` (kept by
signature memory) or ``restored`` (a tool call's put back in a request that lacked it);
a placeholder is a tool call sent to Gemini with Google's placeholder, its signature
lost (the client dropped it and nothing kept it: see docs/server.md).

Several worker processes: when ``PROMETHEUS_MULTIPROC_DIR`` is set (``rxgem serve
--workers N`` sets it to a fresh directory), every worker writes its metrics to files
there and :meth:`~rxgem.server.observe._telemetry.Telemetry.render` in any worker adds up all of
them (prometheus_client's ``MultiProcessCollector``). prometheus_client chooses the mode
when it is *imported*, so the variable must be set before that; a
:class:`~rxgem.server.observe._telemetry.Telemetry` made in a process where the two disagree
raises ``RuntimeError`` rather than lose the counts. The in-flight gauge sums the live
workers only once the supervisor calls :func:`worker_exited` for a worker that died.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client import values as prometheus_values
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead

from ._labels import OTHER

__all__ = [
    "CHUNK_INTERVAL_BUCKETS",
    "DURATION_BUCKETS",
    "FIRST_CHUNK_BUCKETS",
    "MULTIPROC_ENV",
    "BulkAdd",
    "Prometheus",
    "prometheus_for",
    "worker_exited",
]

MULTIPROC_ENV: Final = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable that puts prometheus_client in multiprocess mode."""

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


def worker_exited(pid: int) -> None:
    """Tell the metrics of other workers that worker ``pid`` is gone (multiprocess mode).

    Its in-flight streams then leave ``rxgem_streams_in_flight``; its counters stay
    counted. Without ``PROMETHEUS_MULTIPROC_DIR``: nothing.
    """
    if os.environ.get(MULTIPROC_ENV):
        mark_process_dead(pid)  # type: ignore[no-untyped-call]


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


class Prometheus:
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
        self.signatures = Counter(
            "signatures",
            "Gemini thought signatures remembered by the server, and tool calls' restored.",
            ("outcome",),
            **common,
        )
        self.placeholders = Counter(
            "signature_placeholders",
            "Tool calls sent to Gemini with Google's placeholder: their signature was lost.",
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


_SHARED: dict[str, Prometheus] = {}
"""Multiprocess mode: the process's metrics by namespace."""


def prometheus_for(namespace: str, registry: CollectorRegistry) -> tuple[Prometheus, bool]:
    """The metrics a telemetry exposes through ``registry``, and whether they are in
    multiprocess mode.

    Outside that mode, new metrics in ``registry``. In it, the process's metrics of
    ``namespace`` (made once), and the workers' files collected into ``registry``.

    Raises:
        RuntimeError: ``PROMETHEUS_MULTIPROC_DIR`` was set after prometheus_client was
            imported, or unset after.
        ValueError: ``PROMETHEUS_MULTIPROC_DIR`` is not a directory.
    """
    directory = os.environ.get(MULTIPROC_ENV)
    imported_multiprocess = bool(getattr(prometheus_values.ValueClass, "_multiprocess", False))
    if bool(directory) != imported_multiprocess:
        raise RuntimeError(
            f"{MULTIPROC_ENV} must be set before prometheus_client is imported, and stay"
            f" set: it is {'set' if directory else 'unset'} now, but prometheus_client"
            f" was imported {'with' if imported_multiprocess else 'without'} it"
        )
    if not directory:
        return Prometheus(namespace, registry), False
    # raises ValueError if not a directory
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    shared = _SHARED.get(namespace)
    if shared is None:
        shared = _SHARED[namespace] = Prometheus(namespace, None)
    return shared, True
