"""The measurements: per-event cost, the ``json.loads`` floor, peak memory, latency,
async throughput over loopback, and LiteLLM (in a subprocess).

Every timing function here is a plain function of prepared input, so the test
``tests/integration/test_perf_regression.py`` and the CLI (``python -m benchmarks``) share them.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import msgspec
from reactivex import Observable
from reactivex.subject import Subject

import rxgem
from rxgem.core import GenerateContentResponse
from rxgem.operators import gemini_to_responses

from .captures import MODEL, Capture

__all__ = [
    "H2_STREAMS_PER_CLIENT",
    "HAVE_H2",
    "HAVE_LITELLM",
    "AsyncPhase",
    "AsyncResult",
    "CaptureResult",
    "Hotspot",
    "LatencyResult",
    "Stats",
    "async_phase",
    "async_throughput",
    "floor_runner",
    "latency",
    "litellm_results",
    "machine_facts",
    "measure_capture",
    "paired_ratio",
    "peak_memory",
    "pipeline_runner",
    "profile_pipeline",
    "responses_runner",
    "subscribe_runner",
    "time_interleaved",
    "time_per_event",
]

ROOT = Path(__file__).resolve().parents[1]
PIECE_16K = 16 * 1024

HAVE_LITELLM: bool = importlib.util.find_spec("litellm") is not None
"""Whether LiteLLM is importable in this interpreter (checked once, at import time)."""


# --------------------------------------------------------------------------- timing


@dataclass
class Stats:
    """Repeated measurements of one thing, in µs per Gemini event."""

    samples: list[float]
    number: int = 1  # runs per sample (short captures are run several times per sample)

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def min(self) -> float:
        return min(self.samples)

    @property
    def max(self) -> float:
        return max(self.samples)

    @property
    def iqr(self) -> float:
        """Interquartile range (0 with fewer than 4 samples: use min–max then)."""
        if len(self.samples) < 4:
            return 0.0
        q1, _, q3 = statistics.quantiles(self.samples, n=4, method="inclusive")
        return q3 - q1


def _calibrate(run: Callable[[], object], min_time: float) -> tuple[float, int]:
    """One untimed warm-up run: ``(its seconds, runs per repetition for min_time)``."""
    gc.collect()
    start = time.perf_counter()
    run()
    once = time.perf_counter() - start
    number = max(1, int(min_time / once) + 1) if once < min_time else 1
    return once, number


def _timed(run: Callable[[], object], number: int, events: int, collect: bool = True) -> float:
    """µs per event of ``number`` back-to-back runs, after emptying the GC.

    Without ``collect``, the garbage collector is also switched off while timing
    (as ``timeit`` does), so that the cost does not depend on how big the rest of
    the process's heap is (a test suite's is much bigger than this harness's).
    """
    perf = time.perf_counter_ns
    if collect:
        gc.collect()
    else:
        gc.collect(0)  # cheap: a full collection of a test suite's heap takes long
        gc.disable()
    try:
        t0 = perf()
        for _ in range(number):
            run()
        elapsed = perf() - t0
    finally:
        if not collect:
            gc.enable()
    return elapsed / 1000 / number / events


def paired_ratio(a: Stats, b: Stats) -> float:
    """The median over the rounds of ``a ÷ b`` (for samples taken interleaved)."""
    pairs = zip(a.samples, b.samples, strict=True)
    return statistics.median(x / y for x, y in pairs)


def time_per_event(
    run: Callable[[], object],
    events: int,
    repeat: int = 7,
    min_time: float = 0.2,
    budget: float | None = None,
) -> Stats:
    """Time ``run()`` ``repeat`` times and return µs per event for each repetition.

    One untimed warm-up run first; it also calibrates ``number``, the runs per
    repetition, so that one repetition lasts at least ``min_time`` seconds (short
    captures). The garbage collector stays on (it is part of the real cost) but
    is emptied before every repetition, so that no repetition pays for another's
    garbage. With a ``budget`` (seconds), fewer repetitions are made when
    ``repeat`` of them would take longer, and a warm-up run that alone exceeds
    the budget is the only sample (for slow comparators on big captures).
    """
    once, number = _calibrate(run, min_time)
    if budget is not None:
        if once >= budget:
            return Stats([once * 1e6 / events], 1)
        repeat = max(1, min(repeat, int(budget / once)))
    return Stats([_timed(run, number, events) for _ in range(repeat)], number)


def time_interleaved(
    runs: dict[str, tuple[Callable[[], object], int]],
    repeat: int = 7,
    min_time: float = 0.2,
    *,
    budget: float | None = None,
    min_repeat: int = 3,
    gc_on: bool = True,
) -> dict[str, Stats]:
    """Like :func:`time_per_event` for several ``name: (function, events)``, interleaved.

    Round ``i`` times every function once (each calibrated on its own), so that a
    burst of load from elsewhere on the machine hits all of them alike and the
    ratios between them stay meaningful. With a ``budget`` (seconds), fewer rounds
    (at least ``min_repeat``) are made when ``repeat`` of them would take longer.
    ``gc_on=False`` switches the garbage collector off while timing.
    """
    numbers: dict[str, int] = {}
    round_time = 0.0
    for name, (run, _) in runs.items():
        once, numbers[name] = _calibrate(run, min_time)
        round_time += once * numbers[name]
    if budget is not None and round_time * repeat > budget:
        repeat = max(min_repeat, int(budget / round_time))
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, (run, events) in runs.items():
            samples[name].append(_timed(run, numbers[name], events, gc_on))
    return {name: Stats(samples[name], numbers[name]) for name in runs}


def pipeline_runner(pieces: Sequence[bytes], **options: Any) -> Callable[[], list[Any]]:
    """``from_body(pieces) | gemini_to_openai() | subscribe``; returns the chunks.

    The operator is built once (as an application would) and subscribed per run; a
    stream error is raised.
    """
    return subscribe_runner(rxgem.from_body(pieces).pipe(rxgem.gemini_to_openai(**options)))


def responses_runner(pieces: Sequence[bytes], **options: Any) -> Callable[[], list[Any]]:
    """``from_body(pieces) | gemini_to_responses() | subscribe``; returns the events.

    The Responses output over the same cores: each subscription runs a
    ``ResponsesConverter`` (the five cores, then ``ResponsesBuilder``), as
    :func:`pipeline_runner` runs a ``Converter``.
    """
    return subscribe_runner(rxgem.from_body(pieces).pipe(gemini_to_responses(**options)))


def subscribe_runner(source: Observable[Any]) -> Callable[[], list[Any]]:
    """Subscribe to ``source`` per call; returns the chunks, raises the stream's error."""

    def run() -> list[Any]:
        chunks: list[Any] = []
        errors: list[Exception] = []
        source.subscribe(chunks.append, errors.append)
        if errors:
            raise errors[0]
        return chunks

    return run


def floor_runner(payloads: Sequence[str]) -> Callable[[], None]:
    """The floor: ``json.loads`` of every (already split) ``data:`` payload string."""
    loads = json.loads

    def run() -> None:
        for payload in payloads:
            loads(payload)

    return run


def decode_runner(payloads: Sequence[bytes]) -> Callable[[], None]:
    """rxgem's own decode alone: msgspec into the typed models, of every payload's bytes
    (the share of the pipeline that no translation on top can avoid)."""
    decode = msgspec.json.Decoder(GenerateContentResponse).decode

    def run() -> None:
        for payload in payloads:
            decode(payload)

    return run


def peak_memory(run: Callable[[], object]) -> tuple[int, int]:
    """``(peak, retained)`` bytes that ``run()`` allocated, traced with ``tracemalloc``.

    Its input was allocated before tracing began and is not counted; ``retained``
    is what its result (the list of chunks) still holds at the end.
    """
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = run()
        current, peak = tracemalloc.get_traced_memory()
        del result
    finally:
        tracemalloc.stop()
    return peak - base, current - base


# --------------------------------------------------------------------------- per capture


@dataclass
class CaptureResult:
    name: str
    description: str
    events: int
    body_bytes: int
    chunks: int
    rxgem: Stats
    rxgem_16k: Stats
    floor: Stats
    peak_bytes: int
    retained_bytes: int
    decode: Stats | None = None  # msgspec's typed decode alone
    responses: Stats | None = None  # the Responses output (gemini_to_responses) per event
    responses_events: int = 0  # the Responses events it gives
    digest: str = ""  # sha256 of the body (first 16 hex digits): same digest, same input
    litellm: Stats | None = None
    half: CaptureResult | None = None

    @property
    def mb_per_s(self) -> float:
        return self.body_bytes / (self.rxgem.median * self.events)  # bytes/µs = MB/s

    @property
    def ratio_floor(self) -> float:
        return self.rxgem.median / self.floor.median

    def to_json(self) -> dict[str, Any]:
        out = {
            "description": self.description,
            "sha256": self.digest,
            "events": self.events,
            "body_bytes": self.body_bytes,
            "chunks": self.chunks,
            "rxgem_us": self.rxgem.median,
            "rxgem_samples_us": self.rxgem.samples,
            "rxgem_16k_us": self.rxgem_16k.median,
            "rxgem_16k_samples_us": self.rxgem_16k.samples,
            "floor_us": self.floor.median,
            "floor_samples_us": self.floor.samples,
            "decode_us": self.decode.median if self.decode is not None else None,
            "ratio_floor": self.ratio_floor,
            "paired_ratio_floor": self.paired_floor,
            "mb_per_s": self.mb_per_s,
            "peak_bytes": self.peak_bytes,
            "retained_bytes": self.retained_bytes,
        }
        if self.responses is not None:
            out["responses_us"] = self.responses.median
            out["responses_samples_us"] = self.responses.samples
            out["responses_events"] = self.responses_events
            out["responses_ratio_floor"] = self.responses_ratio_floor
            out["responses_paired_ratio_floor"] = self.responses_paired_floor
            out["responses_paired_ratio_chat"] = self.responses_paired_chat
        if self.litellm is not None:
            out["litellm_us"] = self.litellm.median
            out["litellm_samples_us"] = self.litellm.samples
        if self.half is not None:
            half = self.half
            out["half"] = {
                "name": half.name,
                "sha256": half.digest,
                "events": half.events,
                "body_bytes": half.body_bytes,
                "rxgem_us": half.rxgem.median,
                "rxgem_samples_us": half.rxgem.samples,
            }
            out["linearity"] = self.linearity
            out["floor_linearity"] = self.floor_linearity
        return out

    @property
    def linearity(self) -> float | None:
        """Time of a whole run of this capture ÷ that of its half-size variant: the
        median over the rounds of that ratio within each round (they are interleaved)."""
        if self.half is None:
            return None
        scale = self.events / self.half.events
        return paired_ratio(self.rxgem, self.half.rxgem) * scale

    @property
    def floor_linearity(self) -> float | None:
        """:attr:`linearity` of the floor (``json.loads`` alone), for reference."""
        if self.half is None:
            return None
        scale = self.events / self.half.events
        return paired_ratio(self.floor, self.half.floor) * scale

    @property
    def paired_floor(self) -> float:
        """The median over the rounds of rxgem ÷ floor within each round."""
        return paired_ratio(self.rxgem, self.floor)

    @property
    def responses_ratio_floor(self) -> float | None:
        """The Responses output's median ÷ the floor's (per Gemini event, both)."""
        return None if self.responses is None else self.responses.median / self.floor.median

    @property
    def responses_paired_floor(self) -> float | None:
        """The median over the rounds of Responses ÷ floor within each round."""
        return None if self.responses is None else paired_ratio(self.responses, self.floor)

    @property
    def responses_paired_chat(self) -> float | None:
        """The median over the rounds of Responses ÷ the chunk pipeline within each round."""
        return None if self.responses is None else paired_ratio(self.responses, self.rxgem)


def measure_capture(
    capture: Capture,
    *,
    half: Capture | None = None,
    repeat: int = 7,
    min_time: float = 0.2,
    budget: float | None = None,
) -> CaptureResult:
    """Everything the table shows for one capture (LiteLLM aside).

    The pipeline with one event per piece and with 16 KB pieces, the Responses output
    (one event per piece), the floor, and the half-size variant ``half`` (if any) are
    timed interleaved, round by round; then the peak memory in a separate traced run.
    """
    run = pipeline_runner(capture.pieces())
    chunks = len(run())  # also proves the capture converts without an error
    responses = responses_runner(capture.pieces())
    responses_events = len(responses())
    events = capture.event_count
    runs: dict[str, tuple[Callable[[], object], int]] = {
        "rxgem": (run, events),
        "rxgem_16k": (pipeline_runner(capture.pieces(PIECE_16K)), events),
        "responses": (responses, events),
        "floor": (floor_runner(capture.payloads), events),
        "decode": (decode_runner([p.encode() for p in capture.payloads]), events),
    }
    if half is not None:
        runs["half"] = (pipeline_runner(half.pieces()), half.event_count)
        runs["half_floor"] = (floor_runner(half.payloads), half.event_count)
    stats = time_interleaved(runs, repeat, min_time, budget=budget)
    del runs
    peak, retained = peak_memory(run)
    result = CaptureResult(
        name=capture.name,
        description=capture.description,
        events=events,
        body_bytes=len(capture.body),
        chunks=chunks,
        rxgem=stats["rxgem"],
        rxgem_16k=stats["rxgem_16k"],
        floor=stats["floor"],
        decode=stats["decode"],
        responses=stats["responses"],
        responses_events=responses_events,
        peak_bytes=peak,
        retained_bytes=retained,
        digest=hashlib.sha256(capture.body).hexdigest()[:16],
    )
    if half is not None:
        nan = Stats([math.nan])
        result.half = CaptureResult(
            name=half.name,
            description=half.description,
            events=half.event_count,
            body_bytes=len(half.body),
            chunks=0,
            rxgem=stats["half"],
            rxgem_16k=nan,
            floor=stats["half_floor"],
            peak_bytes=0,
            retained_bytes=0,
            digest=hashlib.sha256(half.body).hexdigest()[:16],
        )
    return result


# --------------------------------------------------------------------------- profile


@dataclass
class Hotspot:
    function: str
    where: str  # file:line, the path relative to site-packages or the repo
    calls: int
    tottime: float
    share: float  # of the total tottime


def profile_pipeline(capture: Capture, *, runs: int = 5, top: int = 10) -> list[Hotspot]:
    """cProfile the pipeline over ``capture`` (one event per piece); top by own time."""
    import cProfile
    import pstats

    run = pipeline_runner(capture.pieces())
    run()
    profiler = cProfile.Profile()
    gc.collect()
    profiler.enable()
    for _ in range(runs):
        run()
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(value[2] for value in entries.values()) or 1.0
    rows: list[Hotspot] = []
    for (filename, line, name), (_, calls, tottime, _, _) in entries.items():
        rows.append(
            Hotspot(
                function=name,
                where=f"{_short_path(filename)}:{line}" if line else "(built-in)",
                calls=calls,
                tottime=tottime,
                share=tottime / total,
            )
        )
    rows.sort(key=lambda row: row.tottime, reverse=True)
    return rows[:top]


def _short_path(filename: str) -> str:
    path = filename.replace("\\", "/")
    for marker in ("/site-packages/", f"{ROOT.as_posix()}/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path.rsplit("/lib/python", 1)[-1] if "/lib/python" in path else path


# --------------------------------------------------------------------------- latency


@dataclass
class LatencyResult:
    """µs from ``subject.on_next(event bytes)`` to the first chunk it produced."""

    capture: str
    samples: int
    runs: int
    no_output: int  # events that produced no chunk in their own on_next
    p50: float
    p90: float
    p99: float
    p999: float
    max: float
    over_50us: float  # share of events above 50 µs

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def latency(capture: Capture, *, runs: int = 7) -> LatencyResult:
    """Feed a ``Subject`` one event's bytes at a time and time each event to its chunk.

    One warm-up run is discarded; the latencies of ``runs`` runs are pooled. The
    garbage collector stays on, so its pauses show up in the tail as they would in
    a server.
    """
    perf = time.perf_counter_ns
    operator = rxgem.gemini_to_openai()
    pooled: list[int] = []
    no_output = 0
    for number in range(runs + 1):
        gc.collect()
        subject: Subject[bytes] = Subject()
        arrived = [0]

        def on_next(_chunk: object, arrived: list[int] = arrived) -> None:
            if not arrived[0]:
                arrived[0] = perf()

        subject.pipe(operator).subscribe(on_next)
        out: list[int] = []
        missing = 0
        for piece in capture.events:
            arrived[0] = 0
            t0 = perf()
            subject.on_next(piece)
            if arrived[0]:
                out.append(arrived[0] - t0)
            else:
                missing += 1
        subject.on_completed()
        if number:
            pooled.extend(out)
            no_output += missing
    pooled.sort()

    def pct(q: float) -> float:
        return pooled[min(len(pooled) - 1, int(q * len(pooled)))] / 1000

    return LatencyResult(
        capture=capture.name,
        samples=len(pooled),
        runs=runs,
        no_output=no_output,
        p50=pct(0.50),
        p90=pct(0.90),
        p99=pct(0.99),
        p999=pct(0.999),
        max=pooled[-1] / 1000,
        over_50us=sum(1 for v in pooled if v > 50_000) / len(pooled),
    )


# --------------------------------------------------------------------------- async

HAVE_H2: bool = importlib.util.find_spec("h2") is not None
"""Whether ``h2`` is importable (``pip install 'rxgem[http2]'``): the HTTP/2 runs need it."""

H2_STREAMS_PER_CLIENT = 100
"""Concurrent streams per HTTP/2 client: httpcore 1.0 announces ``MAX_CONCURRENT_STREAMS``
100 and runs at most that many streams on a connection, and its pool never opens a second
connection to the same origin while the first one is usable (the 101st request waits for a
free stream), so N open streams over HTTP/2 need ``ceil(N / 100)`` clients."""


@dataclass
class AsyncPhase:
    """One run of N concurrent streams (rxgem, or raw httpx for comparison)."""

    client: str  # "rxgem" or "httpx"
    streams: int
    events_per_stream: int
    pause_s: float
    ok: int
    failed: int
    errors: list[str]
    wall_s: float
    cpu_s: float  # this process only
    server_cpu_s: float  # the FakeGemini child process
    chunks: int
    max_open: int
    peak_bytes: int | None = None  # tracemalloc peak minus the baseline (memory runs)
    protocol: str = "HTTP/1.1"  # or "HTTP/2"
    clients: int = 1  # httpx.AsyncClient objects the streams share
    steady_bytes: int | None = None  # median traced memory while all streams are open
    steady_samples: int = 0  # how many samples that median is of

    @property
    def events(self) -> int:
        return self.ok * self.events_per_stream

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s

    @property
    def cpu_us_per_event(self) -> float:
        return self.cpu_s / max(1, self.events) * 1e6

    @property
    def bytes_per_stream(self) -> float | None:
        """The peak per stream (memory runs)."""
        return None if self.peak_bytes is None else self.peak_bytes / self.streams

    @property
    def steady_per_stream(self) -> float | None:
        """The steady state per open stream (memory runs, when all streams were open)."""
        return None if self.steady_bytes is None else self.steady_bytes / self.streams

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(
            events_per_s=self.events_per_s,
            cpu_us_per_event=self.cpu_us_per_event,
            bytes_per_stream=self.bytes_per_stream,
            steady_per_stream=self.steady_per_stream,
        )
        return out


@dataclass
class AsyncResult:
    """Throughput and memory of N concurrent streams, rxgem and raw httpx.

    The first four over HTTP/1.1 (one connection per stream); the ``h2_`` ones over
    HTTP/2 (when ``h2`` is installed).
    """

    throughput: AsyncPhase
    memory: AsyncPhase
    raw_throughput: AsyncPhase | None = None
    raw_memory: AsyncPhase | None = None
    h2_throughput: AsyncPhase | None = None
    h2_memory: AsyncPhase | None = None
    h2_raw_throughput: AsyncPhase | None = None
    h2_raw_memory: AsyncPhase | None = None
    notes: list[str] = field(default_factory=list)

    def phases(self) -> list[AsyncPhase]:
        every = (
            self.throughput,
            self.raw_throughput,
            self.h2_throughput,
            self.h2_raw_throughput,
            self.memory,
            self.raw_memory,
            self.h2_memory,
            self.h2_raw_memory,
        )
        return [phase for phase in every if phase is not None]

    def best_memory(self) -> tuple[AsyncPhase, AsyncPhase | None]:
        """The rxgem memory run with the lowest peak per stream, and its httpx-only twin."""
        pairs = [(self.memory, self.raw_memory)]
        if self.h2_memory is not None and self.h2_memory.failed == 0:
            pairs.append((self.h2_memory, self.h2_raw_memory))
        return min(pairs, key=lambda pair: pair[0].peak_bytes or math.inf)

    def to_json(self) -> dict[str, Any]:
        def dump(phase: AsyncPhase | None) -> dict[str, Any] | None:
            return phase.to_json() if phase is not None else None

        return {
            "throughput": self.throughput.to_json(),
            "memory": self.memory.to_json(),
            "raw_throughput": dump(self.raw_throughput),
            "raw_memory": dump(self.raw_memory),
            "h2_throughput": dump(self.h2_throughput),
            "h2_memory": dump(self.h2_memory),
            "h2_raw_throughput": dump(self.h2_raw_throughput),
            "h2_raw_memory": dump(self.h2_raw_memory),
            "notes": self.notes,
        }


class _Server:
    """``benchmarks._server`` (a FakeGemini) in a child process."""

    def __init__(self, events: int, pause: float, http2: bool = False) -> None:
        command = [sys.executable, "-m", "benchmarks._server", "--events", str(events)]
        command += ["--pause", str(pause)]
        if http2:
            command.append("--http2")
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.close()
            raise RuntimeError(f"benchmark server did not start: {line!r}")
        self.base_url = f"http://127.0.0.1:{int(line)}/v1beta"

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Write a long answer."}]}]}
# Over HTTP/1.1 each stream asks for its own connection to be closed after the response.
# With keep-alive, httpcore 1.0.x's pool does O(idle connections x connections) work per
# request once hundreds of connections sit idle in it (connection_pool.py,
# _assign_requests_to_connections), which would dominate the client's CPU time. (HTTP/2
# forbids the header, and its streams share a few connections anyway.)
HEADERS = {"connection": "close"}
SAMPLE_EVERY = 0.02  # seconds between samples of traced memory in a memory run


@dataclass
class _StreamsOutcome:
    ok: int
    errors: list[str]
    chunks: int
    max_open: int
    clients: int
    steady: list[int]  # traced memory, sampled while every stream was open


async def _run_streams(
    base_url: str, streams: int, client_kind: str, *, http2: bool = False, sample: bool = False
) -> _StreamsOutcome:
    """Run ``streams`` concurrent consumers, over HTTP/1.1 or HTTP/2 (prior knowledge).

    HTTP/1.1: one client whose pool allows ``streams`` connections. HTTP/2:
    ``ceil(streams / H2_STREAMS_PER_CLIENT)`` clients, stream ``i`` on client
    ``i % clients`` (each client one connection). With ``sample``, the traced memory is
    sampled every ``SAMPLE_EVERY`` s while all streams are open.
    """
    import contextlib

    import httpx

    timeout = httpx.Timeout(300.0)
    chunks = 0
    errors: list[str] = []
    open_now = max_open = 0
    steady: list[int] = []
    done = False
    url = f"{base_url}/models/{MODEL}:streamGenerateContent"
    headers = {} if http2 else HEADERS

    async with contextlib.AsyncExitStack() as stack:
        if http2:
            count = -(-streams // H2_STREAMS_PER_CLIENT)
            clients = [
                await stack.enter_async_context(
                    httpx.AsyncClient(http2=True, http1=False, timeout=timeout)
                )
                for _ in range(count)
            ]
        else:
            limits = httpx.Limits(max_connections=streams, max_keepalive_connections=streams)
            clients = [
                await stack.enter_async_context(httpx.AsyncClient(limits=limits, timeout=timeout))
            ]

        async def consume(number: int) -> bool:
            nonlocal chunks, open_now, max_open
            client = clients[number % len(clients)]
            count = 0
            opened = False
            try:
                if client_kind == "rxgem":
                    source = rxgem.stream_chat(
                        REQUEST,
                        model=MODEL,
                        client=client,
                        api_key="bench",
                        base_url=base_url,
                        headers=headers,
                        timeout=timeout,
                    )
                    stream = rxgem.aiterate(source)
                    async for _chunk in stream:
                        if not opened:
                            opened = True
                            open_now += 1
                            max_open = max(max_open, open_now)
                        count += 1
                else:
                    async with client.stream(
                        "POST", url, params={"alt": "sse"}, json=REQUEST, headers=headers
                    ) as response:
                        async for _piece in response.aiter_bytes():
                            if not opened:
                                opened = True
                                open_now += 1
                                max_open = max(max_open, open_now)
                            count += 1
            except Exception as exc:
                if len(errors) < 5:
                    errors.append(f"{type(exc).__name__}: {exc}")
                return False
            finally:
                if opened:
                    open_now -= 1
                chunks += count
            return True

        async def sampler() -> None:
            while not done:
                if open_now >= streams:
                    steady.append(tracemalloc.get_traced_memory()[0])
                await asyncio.sleep(SAMPLE_EVERY)

        watch = asyncio.create_task(sampler()) if sample and tracemalloc.is_tracing() else None
        try:
            results = await asyncio.gather(*(consume(i) for i in range(streams)))
        finally:
            done = True
            if watch is not None:
                await watch
    return _StreamsOutcome(sum(results), errors, chunks, max_open, len(clients), steady)


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def async_phase(
    streams: int,
    events: int,
    *,
    pause: float = 0.0,
    client: str = "rxgem",
    memory: bool = False,
    http2: bool = False,
) -> AsyncPhase:
    """One run of ``streams`` concurrent streams against a fresh FakeGemini child process.

    With ``memory``, ``tracemalloc`` traces this process during the run and the
    phase records the peak of traced memory minus what was allocated before, and the
    steady state: the median of the traced memory sampled while every stream was
    open, minus the same baseline. ``http2``: over HTTP/2 (see :func:`_run_streams`).
    """
    children0 = _children_cpu()
    server = _Server(events, pause, http2)
    peak: int | None = None
    steady: int | None = None
    try:
        if memory:  # lazy imports and first-use caches are not per-stream memory
            asyncio.run(_run_streams(server.base_url, 2, client, http2=http2))
        gc.collect()
        if memory:
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            outcome = asyncio.run(
                _run_streams(server.base_url, streams, client, http2=http2, sample=memory)
            )
            if memory:
                peak = tracemalloc.get_traced_memory()[1] - base
                if outcome.steady:
                    steady = int(statistics.median(outcome.steady)) - base
        finally:
            if memory:
                tracemalloc.stop()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    finally:
        server.close()
    return AsyncPhase(
        client=client,
        streams=streams,
        events_per_stream=events,
        pause_s=pause,
        ok=outcome.ok,
        failed=streams - outcome.ok,
        errors=outcome.errors,
        wall_s=wall,
        cpu_s=cpu,
        server_cpu_s=_children_cpu() - children0,
        chunks=outcome.chunks,
        max_open=outcome.max_open,
        peak_bytes=peak,
        protocol="HTTP/2" if http2 else "HTTP/1.1",
        clients=outcome.clients,
        steady_bytes=steady,
        steady_samples=len(outcome.steady),
    )


def async_throughput(
    streams: int = 1000,
    events: int = 200,
    *,
    mem_events: int = 10,
    mem_pause: float = 0.1,
    raw: bool = True,
    http2: bool | None = None,
) -> AsyncResult:
    """Events/s of ``streams`` concurrent streams, then memory per open stream.

    FakeGemini runs in a child process (so that its threads neither share this
    process's GIL nor show up in its CPU time and memory) and sends a text capture one
    HTTP chunk (HTTP/2: one DATA frame) per event. All consumers run on one asyncio
    loop, each ``async for chunk in rxgem.aiterate(rxgem.stream_chat(...))``: over
    HTTP/1.1 through one shared ``httpx.AsyncClient`` whose pool allows ``streams``
    connections; over HTTP/2 (``http2``, default: when ``h2`` is installed) through
    ``httpx.AsyncClient(http2=True, http1=False)`` clients shared by 100 streams each.

    Throughput: ``events`` events per stream, sent as fast as the server can.
    Memory: a paced server (``mem_pause`` s between ``mem_events`` events) keeps all
    streams open at once while ``tracemalloc`` traces this process; memory per
    stream is the traced peak (and the steady state) minus the baseline, divided by
    ``streams``. With ``raw``, the runs are repeated with plain ``httpx``
    (``aiter_bytes()``, no rxgem) so that rxgem's share can be told from the HTTP
    client's.
    """
    if http2 is None:
        http2 = HAVE_H2
    result = AsyncResult(
        throughput=async_phase(streams, events),
        memory=async_phase(streams, mem_events, pause=mem_pause, memory=True),
    )
    if raw:
        result.raw_throughput = async_phase(streams, events, client="httpx")
        result.raw_memory = async_phase(
            streams, mem_events, pause=mem_pause, client="httpx", memory=True
        )
    if http2:
        result.h2_throughput = async_phase(streams, events, http2=True)
        result.h2_memory = async_phase(
            streams, mem_events, pause=mem_pause, memory=True, http2=True
        )
        if raw:
            result.h2_raw_throughput = async_phase(streams, events, client="httpx", http2=True)
            result.h2_raw_memory = async_phase(
                streams, mem_events, pause=mem_pause, client="httpx", memory=True, http2=True
            )
    else:
        result.notes.append("HTTP/2 runs skipped: h2 not installed (pip install 'rxgem[http2]')")
    for phase in result.phases():
        what = "memory" if phase.peak_bytes is not None else "throughput"
        where = f"{phase.client} {phase.protocol} {what} run"
        if phase.failed:
            result.notes.append(
                f"{where}: {phase.failed} of {phase.streams} streams failed"
                f" ({phase.errors[0] if phase.errors else '?'})"
            )
        if phase.peak_bytes is not None and phase.max_open < streams:
            result.notes.append(
                f"{where}: only {phase.max_open} of {streams} streams were open at once"
                " (no steady state)"
            )
    return result


# --------------------------------------------------------------------------- LiteLLM


def litellm_results(
    names: Sequence[str],
    *,
    repeat: int,
    min_time: float,
    budget: float | None = None,
    python: str | None = None,
) -> tuple[dict[str, Stats], str, str | None]:
    """LiteLLM's Gemini iterator on the named captures, measured in a child process.

    Returns ``({name: Stats}, note, version)``; the note says why there are no
    results (not installed, failed) or which LiteLLM version was measured and how.
    """
    if python is None:
        if not HAVE_LITELLM:
            return {}, "litellm not installed: pip install 'rxgem[bench]' (column skipped)", None
        python = sys.executable
    command = [python, "-m", "benchmarks._litellm", "--repeat", str(repeat)]
    command += ["--min-time", str(min_time), *names]
    if budget is not None:
        command += ["--budget", str(budget)]
    env = dict(os.environ, LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_LOG="ERROR")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {}, f"litellm run failed ({tail}); column skipped", None
    data = json.loads(lines[-1])
    if "error" in data:
        return {}, f"litellm not importable ({data['error']}); column skipped", None
    stats = {name: Stats(value["samples_us"]) for name, value in data["captures"].items()}
    note = f"litellm {data['version']} (Python {data['python']}), in its own process"
    for name, value in data["captures"].items():
        if value.get("prefix_events"):
            note += (
                f"; {name}: time-boxed to {budget:g} s, measured on its first"
                f" {value['prefix_events']:,} of {value['events']:,} events"
            )
    return stats, note, data["version"]


# --------------------------------------------------------------------------- machine


def _version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "-"


def machine_facts() -> dict[str, str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    return {
        "cpu": cpu,
        "cores": f"{os.cpu_count()} logical, {usable} usable",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "rxgem": _version("rxgem"),
        "reactivex": _version("reactivex"),
        "msgspec": _version("msgspec"),
        "httpx": _version("httpx"),
        "litellm": _version("litellm") if HAVE_LITELLM else "not installed",
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "load": load_average(),
    }


def load_average() -> str:
    """The 1/5/15-minute load averages: other work on the machine skews timings."""
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "-"
