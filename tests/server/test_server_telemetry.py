"""``rxgem.server.observe._telemetry``: Prometheus metrics and OpenTelemetry spans of the gateway
(``_metrics``, ``_tracing``, ``_labels``).

Real prometheus_client registries, read back through its own exposition parser; the
multiprocess mode in real subprocesses sharing one ``PROMETHEUS_MULTIPROC_DIR``;
OpenTelemetry through the SDK's in-memory exporter and reader, on providers given to
the :class:`Telemetry` (the global ones are never touched).
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
import timeit
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import HistogramDataPoint, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from prometheus_client import REGISTRY, CollectorRegistry, Histogram, generate_latest
from prometheus_client import values as prometheus_values
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from rxgem import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    TruncatedStreamError,
)
from rxgem.server.observe import _metrics, _telemetry, _tracing
from rxgem.server.observe._metrics import CHUNK_INTERVAL_BUCKETS
from rxgem.server.observe._telemetry import (
    MAX_MODELS,
    RequestTelemetry,
    Telemetry,
    upstream_error_kind,
    worker_exited,
)

CHAT = "/v1/chat/completions"
MODEL = "gemini-2.5-flash"
GEMINI = "https://generativelanguage.googleapis.com/v1beta"
VERTEX = "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google"
ROOT = Path(__file__).resolve().parents[2]


# --- helpers -----------------------------------------------------------------------------


def samples(telemetry: Telemetry, accept: str | None = None) -> list[Sample]:
    """Every sample of the exposition, through prometheus_client's own parser."""
    body, _ = telemetry.render(accept)
    return [s for f in text_string_to_metric_families(body.decode()) for s in f.samples]


def value(found: list[Sample], name: str, **labels: str) -> float:
    """The one sample ``name`` whose labels include ``labels`` (0 if there is none)."""
    matches = [s for s in found if s.name == name and labels.items() <= s.labels.items()]
    assert len(matches) <= 1, matches
    return matches[0].value if matches else 0.0


def label_values(found: list[Sample], name: str, label: str) -> set[str]:
    return {s.labels[label] for s in found if s.name == name and label in s.labels}


def stream(
    telemetry: Telemetry,
    gaps: list[float],
    *,
    model: str | None = MODEL,
    first_after: float = 0.25,
    status: int = 200,
    end: bool = True,
) -> RequestTelemetry:
    """A streamed chat completion: the first chunk ``first_after`` s after it went
    upstream, then one chunk after each gap."""
    request = telemetry.start(CHAT, "POST")
    request.chat(model, upstream=GEMINI, stream=True)
    request.stream_opened()
    now = time.perf_counter() + first_after
    request.chunk(now)
    for gap in gaps:
        now += gap
        request.chunk(now)
    if end:
        request.end(status)
    return request


# --- Prometheus ----------------------------------------------------------------------------


def test_a_streamed_chat_completion_is_counted_by_route_method_status_and_model() -> None:
    telemetry = Telemetry(metrics=True)
    request = stream(telemetry, [0.00002, 0.003, 0.003, 0.04], end=False)
    request.usage(input_tokens=12, output_tokens=80, reasoning_tokens=30, cached_tokens=4)
    request.finish_reasons(["stop"])
    assert value(samples(telemetry), "rxgem_streams_in_flight") == 1
    request.end(200)

    found = samples(telemetry)
    labels = {"route": CHAT, "method": "POST", "status": "200", "model": MODEL}
    assert value(found, "rxgem_requests_total", **labels) == 1
    assert value(found, "rxgem_request_duration_seconds_count", route=CHAT, status="200") == 1
    assert value(found, "rxgem_streams_in_flight") == 0
    # the first chunk came 0.25 s (and a few µs) after chat()
    first = "rxgem_time_to_first_chunk_seconds_bucket"
    assert value(found, first, model=MODEL, le="0.2") == 0
    assert value(found, first, model=MODEL, le="0.3") == 1
    interval = "rxgem_chunk_interval_seconds_bucket"
    assert value(found, interval, model=MODEL, le="0.0001") == 1
    assert value(found, interval, model=MODEL, le="0.0025") == 1
    assert value(found, interval, model=MODEL, le="0.005") == 3
    assert value(found, interval, model=MODEL, le="0.05") == 4
    assert value(found, interval, model=MODEL, le="+Inf") == 4
    total = value(found, "rxgem_chunk_interval_seconds_sum", model=MODEL)
    assert total == pytest.approx(0.04602, abs=1e-9)
    for direction, count in (("input", 12), ("output", 80), ("reasoning", 30), ("cached", 4)):
        assert value(found, "rxgem_tokens_total", model=MODEL, direction=direction) == count


def test_the_metric_names() -> None:
    telemetry = Telemetry(metrics=True)
    stream(telemetry, [0.01]).upstream_error("timeout")
    body, _ = telemetry.render()
    names = {f.name for f in text_string_to_metric_families(body.decode())}
    assert {
        "rxgem_requests",
        "rxgem_request_duration_seconds",
        "rxgem_streams_in_flight",
        "rxgem_time_to_first_chunk_seconds",
        "rxgem_chunk_interval_seconds",
        "rxgem_upstream_errors",
        "rxgem_tokens",
    } <= names
    assert all(name.startswith("rxgem_") for name in names)
    other = Telemetry(metrics=True, service_name="gateway")
    other.start("/healthz", "GET").end(200)
    assert value(samples(other), "gateway_requests_total", route="/healthz") == 1


def test_chunk_intervals_added_per_stream_equal_one_observe_per_interval() -> None:
    # The bulk path writes prometheus_client's per-bucket values directly (private):
    # the same intervals observed one by one must give the same exposition.
    telemetry = Telemetry(metrics=True)
    request = telemetry.start(CHAT, "POST")
    assert type(request) is _telemetry._MeteredRequest, "the bulk path no longer fits"
    times = [2.0, 2.00001, 2.0001, 2.0003, 2.0007, 2.0016, 2.0046, 2.0136, 2.0336, 2.3336,
             3.2336, 7.2336, 18.2336, 18.2336]  # fmt: skip
    request.chat(MODEL, upstream=GEMINI, stream=True)
    for now in times:
        request.chunk(now)
    request.end(200)

    registry = CollectorRegistry()
    reference = Histogram(
        "rxgem_chunk_interval_seconds",
        "",
        ("model",),
        buckets=CHUNK_INTERVAL_BUCKETS,
        registry=registry,
    )
    gaps = [b - a for a, b in itertools.pairwise(times)]
    for gap in gaps:
        reference.labels(MODEL).observe(gap)
    expected = [
        s
        for f in text_string_to_metric_families(generate_latest(registry).decode())
        for s in f.samples
        if s.name.endswith(("_bucket", "_count"))
    ]
    assert len({s.value for s in expected}) > 10  # the intervals spread over the buckets
    found = samples(telemetry)
    got = [s for s in found if s.name.startswith("rxgem_chunk_interval_seconds")]
    for want in expected:
        assert value(got, want.name, **want.labels) == want.value, want
    assert value(got, "rxgem_chunk_interval_seconds_sum", model=MODEL) == pytest.approx(
        sum(gaps), abs=1e-9
    )


def test_without_the_bulk_path_each_interval_is_observed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_metrics, "_bulk_add", lambda series, bounds: None)
    telemetry = Telemetry(metrics=True)
    assert type(telemetry.start(CHAT, "POST")) is _telemetry._ObservingRequest
    stream(telemetry, [0.003, 0.02])
    found = samples(telemetry)
    assert value(found, "rxgem_chunk_interval_seconds_bucket", model=MODEL, le="0.005") == 1
    assert value(found, "rxgem_chunk_interval_seconds_count", model=MODEL) == 2


def test_hostile_paths_methods_and_statuses_make_no_new_series() -> None:
    telemetry = Telemetry(metrics=True)
    telemetry.start("/v1/models/{model_id:path}", "GET").end(200)
    for route in ("/v1/models/gemini-2.5-flash", "/../../etc/passwd", "/x" * 500, "", "/v1/chat"):
        telemetry.start(route, "GET").end(404)
    for method in ("BREW", "post", "GET\r\nX-Evil: 1"):
        telemetry.start(CHAT, method).end(405)
    for status in (99, 600, 12345, -1):
        telemetry.start(CHAT, "POST").end(status)

    found = samples(telemetry)
    assert label_values(found, "rxgem_requests_total", "route") == {
        "/v1/models/{model_id}",
        "other",
        CHAT,
    }
    assert value(found, "rxgem_requests_total", route="other", status="404") == 5
    assert label_values(found, "rxgem_requests_total", "method") == {"GET", "POST", "other"}
    assert value(found, "rxgem_requests_total", method="other") == 3
    assert label_values(found, "rxgem_requests_total", "status") == {"200", "404", "405", "other"}
    assert value(found, "rxgem_requests_total", route=CHAT, status="other") == 4


def test_the_model_label_is_a_model_id_and_its_values_are_capped() -> None:
    telemetry = Telemetry(metrics=True)
    hostile = ["a" * 65, "x y", "../../v1/evil", 'gemini"}', "gemini\n", "é", ""]
    for model in hostile:
        request = telemetry.start(CHAT, "POST")
        request.chat(model, upstream=GEMINI)
        request.end(400)
    for i in range(MAX_MODELS + 50):
        request = telemetry.start(CHAT, "POST")
        request.chat(f"models/gemini-{i}", upstream=GEMINI)
        request.end(200)
    no_model = telemetry.start("/v1/models", "GET")
    no_model.end(200)

    found = samples(telemetry)
    models = label_values(found, "rxgem_requests_total", "model")
    assert len(models) == MAX_MODELS + 2  # the first MAX_MODELS, other, and "" (none named)
    assert {"gemini-0", f"gemini-{MAX_MODELS - 1}", "other", ""} <= models
    assert f"gemini-{MAX_MODELS}" not in models
    assert not any("/" in m or " " in m or len(m) > 64 for m in models)
    # "" (an empty model) names none; the others are "other", as are the models past the cap
    assert value(found, "rxgem_requests_total", model="other", status="400") == len(hostile) - 1
    assert value(found, "rxgem_requests_total", model="other", status="200") == 50


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (GeminiAPIError("quota", code=429, status="RESOURCE_EXHAUSTED", http_status=429),
         "http_429"),
        (GeminiAPIError("in a 200 stream", code=503, status="UNAVAILABLE"), "http_503"),
        (GeminiAPIError("bad", code=400, status="INVALID_ARGUMENT", http_status=400), "http_400"),
        (GeminiTransportError("slow", cause=httpx.ReadTimeout("slow")), "timeout"),
        (GeminiTransportError("no", cause=httpx.ConnectError("refused")), "connect"),
        (GeminiTransportError("cut", cause=httpx.RemoteProtocolError("eof")), "transport"),
        (MalformedStreamError("not JSON"), "malformed"),
        (TruncatedStreamError("no finish"), "truncated"),
        (InvalidRequestError("no messages"), None),
        (RuntimeError("a bug"), None),
    ],
)  # fmt: skip
def test_upstream_error_kinds(error: BaseException, kind: str | None) -> None:
    assert upstream_error_kind(error) == kind
    telemetry = Telemetry(metrics=True)
    request = telemetry.start(CHAT, "POST")
    request.upstream_error(error)
    request.end(502)
    kinds = label_values(samples(telemetry), "rxgem_upstream_errors_total", "kind")
    assert kinds == ({kind} if kind else set())


def test_an_unknown_upstream_error_kind_is_other() -> None:
    telemetry = Telemetry(metrics=True)
    request = telemetry.start(CHAT, "POST")
    for kind in ("http_429", "http_999", "timeout", "x" * 300, "http_429\n"):
        request.upstream_error(kind)
    request.end(429)
    found = samples(telemetry)
    assert label_values(found, "rxgem_upstream_errors_total", "kind") == {
        "http_429",
        "timeout",
        "other",
    }
    assert value(found, "rxgem_upstream_errors_total", kind="other") == 3


def test_end_is_idempotent_and_the_stream_leaves_the_in_flight_gauge_once() -> None:
    telemetry = Telemetry(metrics=True)
    a = stream(telemetry, [0.01], end=False)
    b = stream(telemetry, [0.01], end=False)
    b.stream_opened()  # twice: still one stream
    assert value(samples(telemetry), "rxgem_streams_in_flight") == 2
    a.end(200)
    a.end(500)
    a.chunk(time.perf_counter())
    found = samples(telemetry)
    assert value(found, "rxgem_streams_in_flight") == 1
    assert value(found, "rxgem_requests_total", route=CHAT) == 1
    assert value(found, "rxgem_chunk_interval_seconds_count", model=MODEL) == 1
    b.end(499)
    found = samples(telemetry)
    assert value(found, "rxgem_streams_in_flight") == 0
    assert value(found, "rxgem_requests_total", status="499") == 1


def test_a_request_that_never_opened_a_stream_leaves_the_gauge_alone() -> None:
    telemetry = Telemetry(metrics=True)
    opened = stream(telemetry, [], end=False)
    request = telemetry.start(CHAT, "POST")
    request.chat(MODEL, upstream=GEMINI, stream=True)
    request.end(429)  # refused before the 200
    request.chunk(time.perf_counter())  # too late: ignored
    assert value(samples(telemetry), "rxgem_streams_in_flight") == 1
    opened.end(200)
    found = samples(telemetry)
    assert value(found, "rxgem_streams_in_flight") == 0
    # nor is there a time to the first chunk for a request without chunks, or not streamed
    plain = telemetry.start(CHAT, "POST")
    plain.chat(MODEL, upstream=GEMINI, stream=False)
    plain.chunk(time.perf_counter())
    plain.end(200)
    found = samples(telemetry)
    assert value(found, "rxgem_time_to_first_chunk_seconds_count", model=MODEL) == 1


def test_token_counts_ignore_what_is_not_a_count() -> None:
    telemetry = Telemetry(metrics=True)
    request = stream(telemetry, [], end=False)
    request.usage(input_tokens=1, output_tokens=2)
    request.usage(input_tokens=7, output_tokens=-3, reasoning_tokens=True, cached_tokens=None)
    request.end(200)
    found = samples(telemetry)
    assert label_values(found, "rxgem_tokens_total", "direction") == {"input"}
    assert value(found, "rxgem_tokens_total", direction="input") == 7


def test_each_telemetry_has_its_own_registry_and_the_global_one_is_untouched() -> None:
    before = {f.name for f in REGISTRY.collect()}
    one, two = Telemetry(metrics=True), Telemetry(metrics=True)
    stream(one, [0.01])
    stream(one, [0.01])
    stream(two, [0.01])
    assert value(samples(one), "rxgem_requests_total", route=CHAT) == 2
    assert value(samples(two), "rxgem_requests_total", route=CHAT) == 1
    assert {f.name for f in REGISTRY.collect()} == before
    assert not any(name.startswith("rxgem") for name in before)


def test_metrics_off_keeps_no_prometheus_state() -> None:
    telemetry = Telemetry(metrics=False)
    request = stream(telemetry, [0.01, 0.02], end=False)
    assert type(request) is RequestTelemetry
    request.upstream_error("timeout")
    request.usage(1, 2)
    request.end(200)
    assert list(telemetry.registry.collect()) == []
    with pytest.raises(RuntimeError, match="metrics are off"):
        telemetry.render()


def test_render_negotiates_the_exposition_format() -> None:
    telemetry = Telemetry(metrics=True)
    stream(telemetry, [0.01])
    body, content_type = telemetry.render()
    assert content_type.startswith("text/plain; version=0.0.4")
    assert b"rxgem_requests_total{" in body
    body, content_type = telemetry.render("application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert body.endswith(b"# EOF\n")
    families = list(text_string_to_metric_families(telemetry.render()[0].decode()))
    assert families


# --- several worker processes ----------------------------------------------------------

_WORKER = """
import json, os, sys, time
from rxgem.server.observe._telemetry import Telemetry

requests, model = int(sys.argv[1]), sys.argv[2]
telemetry = Telemetry(metrics=True)
for _ in range(requests):
    request = telemetry.start("/v1/chat/completions", "POST")
    request.chat(model, upstream="https://generativelanguage.googleapis.com/v1beta", stream=True)
    request.stream_opened()
    now = time.perf_counter()
    for i in range(3):
        request.chunk(now + 0.01 * i)
    request.usage(input_tokens=10, output_tokens=5)
    request.end(200)
open_stream = telemetry.start("/v1/chat/completions", "POST")  # still streaming at exit
open_stream.chat(model, upstream="https://generativelanguage.googleapis.com/v1beta", stream=True)
open_stream.stream_opened()
print(json.dumps({"pid": os.getpid(), "multiprocess": telemetry.multiprocess}))
"""

_RENDER = """
import sys
from rxgem.server.observe._telemetry import Telemetry

sys.stdout.write(Telemetry(metrics=True).render()[0].decode())
"""


def _python(script: str, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def multiproc_env(tmp_path: Path) -> dict[str, str]:
    directory = tmp_path / "prometheus"
    directory.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "prometheus_multiproc_dir"}
    env["PROMETHEUS_MULTIPROC_DIR"] = str(directory)
    return env


def test_workers_write_files_that_any_worker_renders_added_up(
    multiproc_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = json.loads(_python(_WORKER, "3", MODEL, env=multiproc_env))
    second = json.loads(_python(_WORKER, "2", MODEL, env=multiproc_env))
    assert first["multiprocess"]
    assert second["multiprocess"]
    assert first["pid"] != second["pid"]

    text = _python(_RENDER, env=multiproc_env)
    found = [s for f in text_string_to_metric_families(text) for s in f.samples]
    labels = {"route": CHAT, "method": "POST", "status": "200", "model": MODEL}
    assert value(found, "rxgem_requests_total", **labels) == 5
    assert value(found, "rxgem_request_duration_seconds_count", route=CHAT, status="200") == 5
    assert value(found, "rxgem_tokens_total", model=MODEL, direction="input") == 50
    assert value(found, "rxgem_time_to_first_chunk_seconds_count", model=MODEL) == 5
    assert value(found, "rxgem_chunk_interval_seconds_count", model=MODEL) == 10
    assert value(found, "rxgem_chunk_interval_seconds_sum", model=MODEL) == pytest.approx(0.1)
    assert value(found, "rxgem_streams_in_flight") == 2  # one left open by each worker

    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", multiproc_env["PROMETHEUS_MULTIPROC_DIR"])
    worker_exited(first["pid"])
    text = _python(_RENDER, env=multiproc_env)
    found = [s for f in text_string_to_metric_families(text) for s in f.samples]
    assert value(found, "rxgem_streams_in_flight") == 1  # livesum: the dead worker's left
    assert value(found, "rxgem_requests_total", **labels) == 5  # counters stay


def test_the_multiprocess_mode_must_be_chosen_before_prometheus_client_is_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if getattr(prometheus_values.ValueClass, "_multiprocess", False):
        pytest.skip("this test process imported prometheus_client in multiprocess mode")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    with pytest.raises(RuntimeError, match="before prometheus_client is imported"):
        Telemetry(metrics=True)
    Telemetry(metrics=False)  # no metrics, no files: fine


def test_a_multiprocess_directory_that_is_not_one_is_refused(
    multiproc_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**multiproc_env, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "missing")}
    script = """
    from rxgem.server.observe._telemetry import Telemetry
    try:
        Telemetry(metrics=True)
    except ValueError as exc:
        print("refused:", exc)
    """
    assert _python(script, env=env).startswith("refused:")


# --- OpenTelemetry -----------------------------------------------------------------------


class Otel:
    """A Telemetry on SDK providers of its own, with the spans and metrics they received."""

    def __init__(self, *, metrics: bool = False) -> None:
        self.spans = InMemorySpanExporter()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.telemetry = Telemetry(
            metrics=metrics,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
        )

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def points(self, name: str) -> list[HistogramDataPoint]:
        data = self.reader.get_metrics_data()
        if data is None:
            return []
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == name
            for point in metric.data.data_points
            if isinstance(point, HistogramDataPoint)
        ]


@pytest.fixture
def otel() -> Iterator[Otel]:
    harness = Otel()
    yield harness
    harness.tracer_provider.shutdown()
    harness.meter_provider.shutdown()


def test_a_chat_span_follows_the_genai_conventions(otel: Otel) -> None:
    request = stream(otel.telemetry, [0.01, 0.01], end=False)
    request.usage(input_tokens=12, output_tokens=80, reasoning_tokens=30, cached_tokens=4)
    request.finish_reasons(["stop", None])
    request.response_model("gemini-2.5-flash-001")
    request.end(200)

    (span,) = otel.finished()
    assert span.name == f"chat {MODEL}"
    assert span.kind is SpanKind.CLIENT
    assert span.status.status_code is StatusCode.UNSET
    attributes = dict(span.attributes or {})
    first_chunk = attributes.pop("gen_ai.response.time_to_first_chunk")
    assert isinstance(first_chunk, float)
    assert 0.25 <= first_chunk < 0.3
    assert attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "gcp.gemini",
        "gen_ai.request.model": MODEL,
        "gen_ai.request.stream": True,
        "gen_ai.response.model": "gemini-2.5-flash-001",
        "gen_ai.usage.input_tokens": 12,
        "gen_ai.usage.output_tokens": 80,
        "gen_ai.usage.reasoning.output_tokens": 30,
        "gen_ai.usage.cache_read.input_tokens": 4,
        "gen_ai.response.finish_reasons": ("stop", "error"),
        "server.address": "generativelanguage.googleapis.com",
        "server.port": 443,
    }
    assert otel.telemetry.metrics is False  # spans without Prometheus


def test_a_failed_chat_span_has_the_error_type_and_status(otel: Otel) -> None:
    request = otel.telemetry.start(CHAT, "POST")
    request.chat("models/" + MODEL, upstream=VERTEX)
    request.upstream_error(GeminiAPIError("quota", code=429, http_status=429))
    request.end(429)
    refused = otel.telemetry.start(CHAT, "POST")
    refused.chat(MODEL, upstream="http://127.0.0.1:8123/v1beta")
    refused.end(502, "server_error:bad_gateway")
    odd = otel.telemetry.start(CHAT, "POST")
    odd.chat("not a model", upstream=GEMINI)
    odd.end(400, "a type\nwith a newline")

    quota, bad_gateway, hostile = otel.finished()
    assert quota.name == "chat models/gemini-2.5-flash"
    assert quota.status.status_code is StatusCode.ERROR
    assert quota.attributes is not None
    assert quota.attributes["error.type"] == "http_429"
    assert quota.attributes["gen_ai.provider.name"] == "gcp.vertex_ai"
    assert quota.attributes["server.address"] == "us-central1-aiplatform.googleapis.com"
    assert quota.attributes["gen_ai.request.model"] == "models/" + MODEL
    assert "gen_ai.request.stream" not in quota.attributes
    assert bad_gateway.attributes is not None
    assert bad_gateway.attributes["error.type"] == "server_error:bad_gateway"
    assert bad_gateway.attributes["server.port"] == 8123
    assert bad_gateway.attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert hostile.name == "chat"
    assert hostile.attributes is not None
    assert hostile.attributes["error.type"] == "_OTHER"


def test_the_error_type_given_to_end_comes_before_the_upstream_error_kind(otel: Otel) -> None:
    given = otel.telemetry.start(CHAT, "POST")
    given.chat(MODEL, upstream=GEMINI, stream=True)
    given.upstream_error("truncated")
    given.end(200, "client_gone")
    upstream = otel.telemetry.start(CHAT, "POST")
    upstream.chat(MODEL, upstream=GEMINI)
    upstream.upstream_error("timeout")
    upstream.end(504)
    status_only = otel.telemetry.start(CHAT, "POST")
    status_only.chat(MODEL, upstream=GEMINI)
    status_only.end(503)
    fine = otel.telemetry.start(CHAT, "POST")
    fine.chat(MODEL, upstream=GEMINI)
    fine.end(200)
    types = [(s.attributes or {}).get("error.type") for s in otel.finished()]
    assert types == ["client_gone", "timeout", "503", None]


def test_a_chat_span_is_a_child_of_the_current_span(otel: Otel) -> None:
    tracer = otel.tracer_provider.get_tracer("the ASGI server")
    with tracer.start_as_current_span("POST /v1/chat/completions") as server_span:
        request = otel.telemetry.start(CHAT, "POST")
        request.chat(MODEL, upstream=GEMINI)
        assert request.span is not None
    request.end(200)
    chat = next(s for s in otel.finished() if s.name.startswith("chat"))
    assert chat.parent is not None
    assert chat.parent.span_id == server_span.get_span_context().span_id


def test_requests_that_are_not_chat_completions_make_no_span(otel: Otel) -> None:
    for route in ("/v1/models", "/healthz"):
        otel.telemetry.start(route, "GET").end(200)
    assert otel.finished() == []
    assert otel.points("gen_ai.client.operation.duration") == []


def test_the_genai_metrics(otel: Otel) -> None:
    request = stream(otel.telemetry, [0.01], end=False)
    request.usage(input_tokens=12, output_tokens=80)
    request.end(200)
    failed = otel.telemetry.start(CHAT, "POST")
    failed.chat(MODEL, upstream=GEMINI)
    failed.upstream_error("timeout")
    failed.end(504)

    durations = otel.points("gen_ai.client.operation.duration")
    assert sorted(p.count for p in durations) == [1, 1]
    assert list(durations[0].explicit_bounds)[:3] == [0.01, 0.02, 0.04]
    errors = [dict(p.attributes or {}) for p in durations if "error.type" in (p.attributes or {})]
    assert errors == [
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "gcp.gemini",
            "gen_ai.request.model": MODEL,
            "gen_ai.response.model": MODEL,
            "server.address": "generativelanguage.googleapis.com",
            "server.port": 443,
            "error.type": "timeout",
        }
    ]
    tokens = {
        (p.attributes or {}).get("gen_ai.token.type"): p.sum
        for p in otel.points("gen_ai.client.token.usage")
    }
    assert tokens == {"input": 12, "output": 80}
    (first_chunk,) = otel.points("gen_ai.client.operation.time_to_first_chunk")
    assert first_chunk.count == 1  # the stream only
    assert 0.25 <= first_chunk.sum < 0.3


def test_the_genai_metric_attributes_are_bounded(otel: Otel) -> None:
    for i in range(MAX_MODELS + 20):
        request = otel.telemetry.start(CHAT, "POST")
        request.chat(f"gemini-{i}", upstream=GEMINI)
        request.end(200)
    models = {
        (p.attributes or {}).get("gen_ai.request.model")
        for p in otel.points("gen_ai.client.operation.duration")
    }
    assert len(models) == MAX_MODELS + 1
    assert "other" in models


def test_the_convention_names_are_the_semantic_conventions_package_ones() -> None:
    gen_ai = pytest.importorskip(
        "opentelemetry.semconv._incubating.attributes.gen_ai_attributes",
        reason="OpenTelemetry's semantic conventions are missing (pip install opentelemetry-sdk)",
    )
    gen_ai_metrics = pytest.importorskip(
        "opentelemetry.semconv._incubating.metrics.gen_ai_metrics",
        reason="OpenTelemetry's semantic conventions are missing (pip install opentelemetry-sdk)",
    )
    from opentelemetry.semconv.attributes import error_attributes, server_attributes

    packages: dict[str, Any] = {
        "GEN_AI_CLIENT_": gen_ai_metrics,
        "GEN_AI_": gen_ai,
        "ERROR_": error_attributes,
        "SERVER_": server_attributes,
    }
    checked = 0
    for name in dir(_tracing):
        prefix = next((p for p in packages if name.startswith(p)), None)
        if prefix is None:
            continue
        assert getattr(_tracing, name) == getattr(packages[prefix], name), name
        checked += 1
    assert checked == 18
    providers = gen_ai.GenAiProviderNameValues
    assert (
        providers.GCP_GEMINI.value,
        providers.GCP_VERTEX_AI.value,
    ) == (_tracing.PROVIDER_GEMINI, _tracing.PROVIDER_VERTEX_AI)


# --- the hot path -------------------------------------------------------------------------

ROUNDS = 9
ATTEMPTS = 3


def _per_call(function: Callable[[float], None], values: list[float]) -> float:
    def run() -> None:
        for v in values:
            function(v)

    return min(timeit.repeat(run, number=20, repeat=3)) / (20 * len(values))


def _ratio(
    measured: Callable[[], Callable[[float], None]], floor: Callable[[float], None]
) -> float:
    """The median over interleaved rounds of (``measured`` ÷ ``floor``) per call."""
    values = [1.0 + 0.003 * i for i in range(1000)]
    ratios = []
    for _ in range(ROUNDS):
        ratios.append(_per_call(measured(), values) / _per_call(floor, values))
    return statistics.median(ratios)


class _Empty:
    __slots__ = ()

    def chunk(self, now: float) -> None:
        pass


def _chunk_of(telemetry: Telemetry) -> Callable[[], Callable[[float], None]]:
    def make() -> Callable[[float], None]:
        request = telemetry.start(CHAT, "POST")
        request.chat(MODEL, upstream=GEMINI, stream=True)
        request.chunk(0.5)
        return request.chunk

    return make


def test_a_chunk_costs_a_fraction_of_one_histogram_observe() -> None:
    # Compared with what it replaces, in the same process and run: no wall-clock limit.
    observe = Histogram(
        "x_seconds", "", buckets=CHUNK_INTERVAL_BUCKETS, registry=CollectorRegistry()
    ).observe
    for _ in range(ATTEMPTS):
        ratio = _ratio(_chunk_of(Telemetry(metrics=True)), observe)
        if ratio < 0.5:
            break
    assert ratio < 0.5, f"chunk() costs {ratio:.2f} of a Histogram.observe()"


def test_a_chunk_with_metrics_off_costs_about_an_empty_method_call() -> None:
    empty = _Empty().chunk
    for _ in range(ATTEMPTS):
        ratio = _ratio(_chunk_of(Telemetry(metrics=False)), empty)
        if ratio < 2.0:
            break
    assert ratio < 2.0, f"chunk() with metrics off costs {ratio:.2f} empty calls"
