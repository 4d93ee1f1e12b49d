"""Metrics and traces of a running ``rxgem serve``: Prometheus at ``/metrics`` (one
process and ``--workers 2``), OpenTelemetry spans with the GenAI conventions.

The telemetry module's own tests are in ``test_server_telemetry.py``; these check that
the server feeds it what happened: requests by route, status and model, streams in
flight, first-chunk times, tokens, upstream errors, and one span per chat completion.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families
from server_harness import (
    HELLO,
    KEY,
    MODEL,
    QUOTA_PER_MINUTE,
    TOKEN,
    sdk,
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.server.observe._telemetry import Telemetry
from rxgem.testing import FakeGemini, FakeResponse


def _samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def _value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return sum(
        value
        for (sample, sample_labels), value in samples.items()
        if sample == name and set(labels.items()) <= sample_labels
    )


def test_metrics_count_what_the_server_did() -> None:
    quota = FakeResponse(status=429, error=QUOTA_PER_MINUTE)
    with (
        FakeGemini(samples.read("text"), samples.read("text"), quota) as fake,
        serving(settings_for(fake, metrics=True)) as url,
        sdk(url) as client,
    ):
        client.chat.completions.create(model=MODEL, messages=HELLO)
        chunks = list(
            client.chat.completions.create(
                model=MODEL, messages=HELLO, stream=True, stream_options={"include_usage": True}
            )
        )
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model=MODEL, messages=HELLO)
        httpx.get(f"{url}/v1/../../etc/passwd%00{'x' * 50}")
        deadline = time.monotonic() + 5
        while True:  # a request is counted just after its answer went out
            text = httpx.get(f"{url}/metrics").text
            metrics = _samples(text)
            if _value(metrics, "rxgem_requests_total", route="other") or (
                time.monotonic() > deadline
            ):
                break
            time.sleep(0.05)
    assert chunks[-1].usage is not None
    route = "/v1/chat/completions"
    assert _value(metrics, "rxgem_requests_total", route=route, status="200", model=MODEL) == 2
    assert _value(metrics, "rxgem_requests_total", route=route, status="429", model=MODEL) == 1
    assert _value(metrics, "rxgem_requests_total", route="other") == 1
    assert _value(metrics, "rxgem_upstream_errors_total", kind="http_429") == 1
    assert _value(metrics, "rxgem_tokens_total", model=MODEL, direction="input") > 0
    assert _value(metrics, "rxgem_tokens_total", model=MODEL, direction="output") > 0
    assert _value(metrics, "rxgem_time_to_first_chunk_seconds_count", model=MODEL) == 1
    assert _value(metrics, "rxgem_chunk_interval_seconds_count", model=MODEL) > 0
    assert _value(metrics, "rxgem_streams_in_flight") == 0
    assert "passwd" not in text  # a path is never a label
    assert KEY not in text
    assert TOKEN not in text


def test_no_metrics_route_unless_asked() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        assert httpx.get(f"{url}/metrics").status_code == 404


def _per_worker(copies: Path) -> dict[str, float]:
    """Each worker's chat requests, from its own multiprocess files alone (copied to
    ``copies``, next to the directory the workers write)."""
    directory = copies.parent
    counts = {}
    for pid in {path.stem.rpartition("_")[2] for path in directory.glob("*.db")}:
        alone = copies / pid
        alone.mkdir(parents=True)
        for path in directory.glob(f"*_{pid}.db"):
            shutil.copy(path, alone / path.name)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(alone))
        metrics = _samples(generate_latest(registry).decode())
        counts[pid] = _value(metrics, "rxgem_requests_total", route="/v1/chat/completions")
    return counts


def test_two_workers_add_up_their_metrics(tmp_path: Path) -> None:
    with (
        FakeGemini(samples.read("text")) as fake,
        serve_process(
            "--workers", "2", "--metrics", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--log-level", "warning",
            env={"RXGEM_API_KEY": KEY, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)},
        ) as (url, _),
    ):  # fmt: skip
        sent = 0
        while sent < 200:  # new connections, until the kernel gave both workers some
            for _ in range(10):
                with sdk(url) as client:
                    client.chat.completions.create(model=MODEL, messages=HELLO)
            sent += 10
            per_worker = _per_worker(tmp_path / str(sent))
            if len(per_worker) == 2 and min(per_worker.values()) > 0:
                break
        # a request is counted just after its answer went out: let the last ones land
        deadline = time.monotonic() + 5
        while sum(per_worker.values()) < sent and time.monotonic() < deadline:
            time.sleep(0.05)
            per_worker = _per_worker(tmp_path / f"{sent}-{time.monotonic()}")
        texts = [httpx.get(f"{url}/metrics").text for _ in range(4)]
    assert len(per_worker) == 2, per_worker
    assert min(per_worker.values()) > 0, per_worker
    assert sum(per_worker.values()) == sent
    for text in texts:  # whichever worker answers counts both
        metrics = _samples(text)
        assert _value(metrics, "rxgem_requests_total", route="/v1/chat/completions") == sent


def test_a_chat_completion_is_one_genai_span() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(metrics=False, tracer_provider=provider)
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake), telemetry=telemetry) as url,
        sdk(url) as client,
    ):
        list(client.chat.completions.create(model=MODEL, messages=HELLO, stream=True))
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert span.name == f"chat {MODEL}"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.request.model"] == MODEL
    assert attributes["gen_ai.provider.name"] == "gcp.gemini"
    assert attributes["gen_ai.usage.input_tokens"] > 0
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert attributes["server.address"] == "127.0.0.1"
