"""``python -m benchmarks``: rxgem's performance harness (see ``benchmarks/README.md``).

Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import shlex
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import captures, fixed_cost, interactions, measure, serve
from .measure import AsyncPhase, AsyncResult, CaptureResult, LatencyResult, Stats
from .serve import percentile

SECTIONS = ("interactions", "latency", "fixed", "async", "serve")
ON_REQUEST = frozenset({"serve"})  # run only when named in --only
LITELLM_TARGET = 20.0
FLOOR_TARGET = 1.0
STREAM_TARGET = 20 * 1024
P99_TARGET = 50.0
LINEAR_LIMIT = 2.3  # full ÷ half above this is called superlinear


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="rxgem performance harness: per-event cost against the json.loads floor"
        " (and LiteLLM), memory, latency and async throughput on generated captures.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 3 repeats, smaller big captures, 50 async streams (about a minute)",
    )
    parser.add_argument("--baseline", type=Path, help="compare with a file written by --save")
    parser.add_argument("--save", type=Path, help="write the results as JSON")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only these parts (repeatable or comma-separated): capture names"
        f" ({', '.join(s.name for s in captures.CAPTURES)}), {', '.join(SECTIONS)}",
    )
    parser.add_argument("--repeat", type=int, help="timed repetitions per measurement (7)")
    parser.add_argument(
        "--budget",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds of timing per capture before repetitions are cut (to 3 at least; 30)",
    )
    parser.add_argument(
        "--min-time", type=float, help="seconds per repetition at least (0.2; quick 0.05)"
    )
    parser.add_argument("--streams", type=int, help="concurrent async streams (1000; quick 50)")
    parser.add_argument(
        "--serve-clients",
        default="1,20,200",
        metavar="C,...",
        help="concurrent clients of the serve part's saturated runs; the paced run uses the"
        " largest (1,20,200; run the part with --only serve)",
    )
    parser.add_argument(
        "--serve-paced-clients",
        default="20,200",
        metavar="C,...",
        help="concurrent clients of the serve part's paced runs (20,200: 200 and 2,000"
        " chunks/s offered)",
    )
    parser.add_argument(
        "--serve-seconds",
        type=float,
        default=3.0,
        metavar="S",
        help="seconds of load per run in the serve part (3)",
    )
    parser.add_argument(
        "--serve-workers",
        type=int,
        default=1,
        metavar="N",
        help="rxgem serve --workers in the serve part (1)",
    )
    parser.add_argument(
        "--serve-open",
        type=int,
        default=1000,
        metavar="N",
        help="open streams held at once against rxgem serve for its memory (1000; 0: skip)",
    )
    parser.add_argument(
        "--serve-rxgem-path",
        metavar="DIR",
        help="run rxgem serve with PYTHONPATH=DIR (a checkout, e.g. a clean git worktree)",
    )
    parser.add_argument(
        "--serve-warm-clients",
        type=int,
        metavar="N",
        help="clients of the warm-up before each server's saturated runs (default: the"
        " largest --serve-clients; its upstream connections stay in the server's pool for"
        " httpx's keep-alive expiry, 5 s, into the first run)",
    )
    parser.add_argument(
        "--serve-whole",
        action="store_true",
        help="in the serve part's saturated runs, the upstream writes each answer at once"
        " (one HTTP chunk) instead of one HTTP chunk per event",
    )
    parser.add_argument(
        "--serve-events",
        type=int,
        default=serve.SATURATED[0],
        metavar="N",
        help="events of each answer in the serve part's saturated runs (50: about 23 KB;"
        " 5: about 2.3 KB, a short answer)",
    )
    parser.add_argument(
        "--serve-upstream",
        choices=("fake", "plain"),
        default="fake",
        help="the serve part's upstream: FakeGemini (fake, TCP_NODELAY set) or Python's"
        " http.server (plain: Nagle's algorithm on, the head and the body in separate writes)",
    )
    parser.add_argument(
        "--serve-upstream-api",
        default="generate-content",
        metavar="API,...",
        help="rxgem serve --upstream-api in the serve part, each in turn against the same"
        " answer (generate-content; generate-content,interactions: side by side, the second"
        " as NAME-interactions)",
    )
    parser.add_argument(
        "--serve-args",
        default="",
        metavar="ARGS",
        help="more arguments to rxgem serve in the serve part, split as a shell would, after"
        " the benchmark's own (e.g. '--loop asyncio --http h11')",
    )
    parser.add_argument(
        "--serve-variant",
        action="append",
        default=[],
        metavar="NAME:DIR:ARGS",
        help="measure this rxgem serve instead of the one rxgem server (repeatable, in this"
        " order, each in every run of the serve part): its row name, a checkout (empty:"
        " --serve-rxgem-path's) and arguments to rxgem serve (empty: none)",
    )
    parser.add_argument(
        "--litellm-python",
        metavar="PYTHON",
        help="measure LiteLLM with this interpreter (a venv that has litellm and rxgem; for"
        " the serve part, one with 'litellm[proxy]': its litellm script is started)",
    )
    parser.add_argument(
        "--litellm-budget",
        type=float,
        metavar="S",
        help="seconds of LiteLLM timing per capture: fewer repetitions, and a first run"
        " still going after this long is cut to a prefix of the stream (20; quick 4)",
    )
    parser.add_argument("--no-litellm", action="store_true", help="skip the LiteLLM column")
    parser.add_argument(
        "--profile", action="store_true", help="also print cProfile hotspots of the pipeline"
    )
    args = parser.parse_args(argv)
    args.only = {name for value in args.only for name in value.split(",") if name}
    specs = captures.QUICK_CAPTURES if args.quick else captures.CAPTURES
    known = {s.name for s in (*captures.CAPTURES, *captures.QUICK_CAPTURES)} | set(SECTIONS)
    unknown = args.only - known
    if unknown:
        parser.error(
            f"unknown --only {', '.join(sorted(unknown))}; known: {', '.join(sorted(known))}"
        )
    if args.only:  # a named capture runs even if it belongs to the other set
        every = (*captures.CAPTURES, *captures.QUICK_CAPTURES[3:])
        specs = tuple(s for s in every if s.name in args.only)
    args.specs = list(specs)
    args.sections = {
        s for s in SECTIONS if s in args.only or (not args.only and s not in ON_REQUEST)
    }
    args.repeat = args.repeat or (3 if args.quick else 7)
    args.min_time = args.min_time if args.min_time is not None else (0.05 if args.quick else 0.2)
    args.streams = args.streams or (50 if args.quick else 1000)
    for name in ("serve_clients", "serve_paced_clients"):
        flag = "--" + name.replace("_", "-")
        try:
            counts = sorted({int(c) for c in getattr(args, name).split(",") if c})
        except ValueError:
            parser.error(f"{flag}: comma-separated numbers, not {getattr(args, name)!r}")
        if not counts or min(counts) < 1:
            parser.error(f"{flag}: at least one client count, each at least 1")
        setattr(args, name, counts)
    try:
        args.serve_args = shlex.split(args.serve_args)
        args.serve_variant = [serve.parse_variant(v) for v in args.serve_variant]
    except ValueError as error:
        parser.error(f"--serve-args / --serve-variant: {error}")
    args.serve_upstream_api = [a for a in args.serve_upstream_api.split(",") if a]
    wrong = set(args.serve_upstream_api) - set(serve.UPSTREAM_PATHS)
    if (
        wrong
        or not args.serve_upstream_api
        or len(set(args.serve_upstream_api)) < len(args.serve_upstream_api)
    ):
        parser.error(
            f"--serve-upstream-api: each of {', '.join(serve.UPSTREAM_PATHS)} at most once,"
            f" comma-separated, not {','.join(args.serve_upstream_api)!r}"
        )
    if args.serve_events < 1:
        parser.error("--serve-events: at least 1")
    if args.serve_variant and args.serve_args:
        parser.error("--serve-args applies to the one rxgem server: put ARGS in each variant")
    if args.litellm_budget is None:
        args.litellm_budget = 4.0 if args.quick else 20.0
    return args


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- formatting


def _num(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "-"
    if abs(value) >= 10_000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) < 10 and digits < 2:
        return f"{value:.2f}"
    return f"{value:.{digits}f}"


def _bytes(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 1 << 20:
        return f"{value / (1 << 20):.1f} MB"
    return f"{value / 1024:.1f} KB"


def _ratio(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2f}×"


def _spread(stats: Stats) -> str:
    return f"{_num(stats.min)}–{_num(stats.max)}"


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], left: int = 1) -> str:
    rows = [list(map(str, row)) for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        out = []
        for i, cell in enumerate(cells):
            out.append(cell.ljust(widths[i]) if i < left else cell.rjust(widths[i]))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


# --------------------------------------------------------------------------- report


class Report:
    def __init__(self, args: argparse.Namespace, facts: dict[str, str]) -> None:
        self.args = args
        self.facts = facts
        self.results: list[CaptureResult] = []
        self.litellm_note = ""
        self.latency: LatencyResult | None = None
        self.fixed: list[fixed_cost.FixedCost] = []
        self.interactions: interactions.InteractionsResult | None = None
        self.asynchronous: AsyncResult | None = None
        self.serve: serve.ServeResult | None = None
        self.baseline: dict[str, Any] | None = None
        self.hotspots: dict[str, list[measure.Hotspot]] = {}

    # -- pieces

    def header(self) -> str:
        f = self.facts
        a = self.args
        mode = "quick" if a.quick else "default"
        return "\n".join(
            [
                f"rxgem benchmarks ({mode} run: repeat={a.repeat}, >= {a.min_time:g} s per"
                f" repetition, captures seeded {captures.SEED})",
                f"machine:  {f['cpu']} | {f['cores']} | {f['python']} | {f['platform']}",
                f"versions: rxgem {f['rxgem']} | reactivex {f['reactivex']} | msgspec"
                f" {f['msgspec']} | httpx {f['httpx']} | litellm {f['litellm']}",
                f"date:     {f['date']} | load average at start {f['load']}"
                f" (1/5/15 min; other work on the machine skews timings)",
            ]
        )

    def cost_table(self) -> str:
        rows = []
        for r in self.results:
            rows.append(
                [
                    r.name,
                    str(r.events),
                    f"{r.body_bytes / 1e6:.2f}",
                    str(r.chunks),
                    f"{len(r.rxgem.samples)}×{r.rxgem.number}",
                    _num(r.rxgem.median),
                    _spread(r.rxgem),
                    _num(r.rxgem.iqr, 2) if len(r.rxgem.samples) >= 4 else "-",
                    f"{r.mb_per_s:.1f}",
                    _num(r.rxgem_16k.median),
                    _bytes(r.peak_bytes),
                ]
            )
        headers = [
            "capture",
            "events",
            "body MB",
            "chunks",
            "runs",
            "µs/event",
            "min–max",
            "IQR",
            "MB/s",
            "16KB µs/ev",
            "peak mem",
        ]
        return (
            "1. Per-event cost: from_body(pieces).pipe(gemini_to_openai()).subscribe(),"
            " chunks kept\n   (µs per Gemini event, median of the repetitions; runs ="
            " repetitions × runs in each; pieces = one SSE event each,\n   or 16 KB;"
            " peak mem = tracemalloc, separate run)\n" + _table(headers, rows)
        )

    def ratio_table(self) -> str:
        base = (self.baseline or {}).get("captures", {})
        rows = []
        for r in self.results:
            ll = r.litellm
            b = base.get(r.name, {}).get("rxgem_us")
            rows.append(
                [
                    r.name,
                    _num(r.floor.median),
                    _ratio(r.ratio_floor),
                    _ratio(r.paired_floor),
                    _ratio(r.decode.median / r.rxgem.median) if r.decode else "-",
                    _num(ll.median) if ll else "-",
                    f"{len(ll.samples)}" if ll else "-",
                    _ratio(ll.median / r.rxgem.median) if ll else "-",
                    _ratio(ll.median / r.decode.median) if ll and r.decode else "-",
                    _num(b) if b else "-",
                    _ratio(r.rxgem.median / b) if b else "-",
                ]
            )
        headers = [
            "capture",
            "json.loads µs/ev",
            "rxgem÷floor",
            "per round",
            "decode share",
            "litellm µs/ev",
            "runs",
            "litellm÷rxgem",
            "litellm÷decode",
            "baseline µs/ev",
            "now÷baseline",
        ]
        notes = [
            "   floor = json.loads of every data: payload, already split (JSON work only);"
            " per round = median over",
            "   the interleaved rounds of (rxgem ÷ floor) within each round (steadier on a"
            " busy machine); decode share =",
            "   msgspec's typed decode of the same payloads ÷ the pipeline; litellm÷decode = the"
            " most litellm÷rxgem can be",
            "   for a converter that must decode every payload (reached only if translating"
            " cost nothing)",
        ]
        if self.litellm_note:
            notes.append(f"   litellm: {self.litellm_note}")
        if self.baseline is not None:
            when = self.baseline.get("machine", {}).get("date", "?")
            notes.append(f"   baseline: {self.args.baseline} ({when})")
            changed = [
                r.name
                for r in self.results
                if base.get(r.name, {}).get("sha256") not in (None, r.digest)
            ]
            if changed:
                notes.append(
                    f"   baseline: different input bytes for {', '.join(changed)}"
                    " (the generators changed): not comparable"
                )
        else:
            notes.append("   baseline: none given (--baseline FILE)")
        return (
            "2. Ratios measured in the same run (median ÷ median)\n"
            + _table(headers, rows)
            + "\n"
            + "\n".join(notes)
        )

    def responses_table(self) -> str:
        base = (self.baseline or {}).get("captures", {})
        rows = []
        for r in self.results:
            if r.responses is None:
                continue
            b = base.get(r.name, {}).get("responses_us")
            rows.append(
                [
                    r.name,
                    str(r.responses_events),
                    _num(r.rxgem.median),
                    _num(r.responses.median),
                    _spread(r.responses),
                    _num(r.floor.median),
                    _ratio(r.ratio_floor),
                    _ratio(r.responses_ratio_floor),
                    _ratio(r.responses_paired_floor),
                    _ratio(r.responses_paired_chat),
                    _num(b) if b else "-",
                    _ratio(r.responses.median / b) if b else "-",
                ]
            )
        if not rows:
            return ""
        headers = [
            "capture",
            "resp events",
            "chunks µs/ev",
            "responses µs/ev",
            "min–max",
            "json.loads µs/ev",
            "chunks÷floor",
            "responses÷floor",
            "per round",
            "responses÷chunks",
            "baseline µs/ev",
            "now÷baseline",
        ]
        return (
            "2b. The Responses output beside the chunks:"
            " from_body(pieces).pipe(gemini_to_responses()).subscribe(),\n"
            "   events kept (µs per Gemini event; the same cores, then ResponsesBuilder instead"
            " of ChunkBuilder), timed\n   interleaved with section 2's pipeline and floor;"
            " per round = median over the rounds of (responses ÷ floor);\n"
            "   responses÷chunks = the same, of (responses ÷ the chunk pipeline)\n"
        ) + _table(headers, rows)

    def linearity_table(self) -> str:
        rows = []
        for r in self.results:
            if r.half is None or r.linearity is None:
                continue
            rows.append(
                [
                    r.name,
                    _num(r.rxgem.median * r.events / 1000),
                    r.half.name,
                    _num(r.half.rxgem.median * r.half.events / 1000),
                    f"{r.linearity:.2f}",
                    f"{r.floor_linearity:.2f}" if r.floor_linearity is not None else "-",
                ]
            )
        if not rows:
            return ""
        headers = [
            "capture",
            "full ms",
            "half-size capture",
            "half ms",
            "full÷half",
            "json.loads full÷half",
        ]
        return (
            "3. Linearity (median time of a whole run, one event per piece; full÷half ="
            " median over the\n   interleaved rounds of the ratio within each round;"
            " 2.00 = linear; json.loads full÷half: the floor's, for reference)\n"
        ) + _table(headers, rows, left=1)

    def latency_table(self) -> str:
        lat = self.latency
        if lat is None:
            return ""
        base = (self.baseline or {}).get("latency") or {}
        rows = [
            [
                "now",
                str(lat.samples),
                _num(lat.p50),
                _num(lat.p90),
                _num(lat.p99),
                _num(lat.p999),
                _num(lat.max),
                f"{lat.over_50us * 100:.2f}%",
            ]
        ]
        if base:
            rows.append(
                [
                    "baseline",
                    str(base.get("samples", "-")),
                    _num(base.get("p50")),
                    _num(base.get("p90")),
                    _num(base.get("p99")),
                    _num(base.get("p999")),
                    _num(base.get("max")),
                    f"{base.get('over_50us', 0) * 100:.2f}%",
                ]
            )
        headers = ["", "events", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs", "max µs", "> 50 µs"]
        return (
            f"4. Latency: Subject.on_next(one event's bytes) → its first chunk in the subscriber\n"
            f"   ({lat.capture}, {lat.runs} runs pooled after a warm-up, GC on;"
            f" {lat.no_output} events produced no chunk)\n" + _table(headers, rows)
        )

    def async_table(self) -> str:
        res = self.asynchronous
        if res is None:
            return ""
        base = (self.baseline or {}).get("async") or {}

        def per(value: float | None) -> str:
            return _bytes(value) if value is not None else "-"

        def row(label: str, p: AsyncPhase | None) -> list[str] | None:
            if p is None:
                return None
            return [
                label,
                p.protocol,
                str(p.clients),
                str(p.streams),
                str(p.events_per_stream),
                f"{p.pause_s:g}",
                f"{p.ok}/{p.streams}",
                str(p.max_open),
                f"{p.wall_s:.1f}",
                _num(p.events_per_s) if p.pause_s == 0 else "-",
                _num(p.cpu_us_per_event) if p.pause_s == 0 else "-",
                f"{p.server_cpu_s:.1f}",
                per(p.steady_per_stream),
                per(p.bytes_per_stream),
            ]

        rows = [
            row("rxgem throughput", res.throughput),
            row("httpx only, throughput", res.raw_throughput),
            row("rxgem throughput", res.h2_throughput),
            row("httpx only, throughput", res.h2_raw_throughput),
            row("rxgem memory (paced)", res.memory),
            row("httpx only, memory (paced)", res.raw_memory),
            row("rxgem memory (paced)", res.h2_memory),
            row("httpx only, memory (paced)", res.h2_raw_memory),
        ]
        headers = [
            "run",
            "protocol",
            "clients",
            "streams",
            "ev/stream",
            "pause s",
            "ok",
            "max open",
            "wall s",
            "events/s",
            "CPU µs/ev",
            "server CPU s",
            "steady/stream",
            "peak/stream",
        ]
        lines = [
            "5. Async: N concurrent `async for c in aiterate(stream_chat(...))` on one loop;"
            " HTTP/1.1: one shared httpx.AsyncClient,",
            "   one connection per stream; HTTP/2 (h2c): AsyncClient(http2=True, http1=False)"
            f" shared by {measure.H2_STREAMS_PER_CLIENT} streams each (httpcore's",
            "   limit per connection); FakeGemini (text capture, one HTTP chunk or DATA frame"
            " per event) in a child process;",
            "   CPU µs/ev = this process only; steady = median while all streams are open,"
            " peak = tracemalloc peak",
            _table(headers, [r for r in rows if r is not None]),
        ]
        for rx, raw in ((res.memory, res.raw_memory), (res.h2_memory, res.h2_raw_memory)):
            if rx is None or raw is None or rx.peak_bytes is None or raw.peak_bytes is None:
                continue
            steady = "-"
            if rx.steady_bytes is not None and raw.steady_bytes is not None:
                steady = _bytes((rx.steady_bytes - raw.steady_bytes) / rx.streams)
            lines.append(
                f"   rxgem's own share per open stream over {rx.protocol} (rxgem − httpx only):"
                f" steady {steady}, peak {_bytes((rx.peak_bytes - raw.peak_bytes) / rx.streams)}"
            )
        if base:
            t = base.get("throughput", {})
            m = base.get("memory", {})
            lines.append(
                f"   baseline: {_num(t.get('events_per_s'))} events/s,"
                f" {_bytes(m.get('bytes_per_stream'))} per stream"
                f" ({t.get('streams', '?')} streams)"
            )
            h2 = base.get("h2_memory") or {}
            if h2.get("bytes_per_stream") is not None:
                lines.append(
                    f"   baseline over HTTP/2: {_bytes(h2.get('steady_per_stream'))} steady,"
                    f" {_bytes(h2.get('bytes_per_stream'))} peak per stream"
                )
        lines.extend(f"   note: {n}" for n in res.notes)
        return "\n".join(lines)

    def serve_table(self) -> str:
        res = self.serve
        if res is None:
            return ""

        def pct(value: float) -> str:
            return "-" if math.isnan(value) else f"{value * 100:.0f}%"

        def mb(value: int) -> str:
            return f"{value / (1 << 20):.1f}" if value else "-"

        def ms(value: float) -> str:
            return _num(value / 1000, 2)

        rows = []
        for r in res.runs:
            if r.kind == "open":
                continue
            rows.append(
                [
                    r.server,
                    r.kind,
                    str(r.clients),
                    f"{r.pause:g}",
                    f"{r.ok}/{r.answers}",
                    _num(r.chunks_per_s),
                    _num(r.run_chunks_per_s),
                    _num(r.server_us_per_chunk),
                    pct(r.share(r.server_cpu_s)),
                    pct(r.share(r.gen_cpu_s)),
                    pct(r.share(r.upstream_cpu_s)),
                    mb(r.rss_idle),
                    mb(r.rss_peak),
                    ms(percentile(r.first_us, 0.5)),
                    ms(percentile(r.first_us, 0.95)),
                    ms(percentile(r.first_us, 0.99)),
                ]
            )
        headers = [
            "server",
            "run",
            "C",
            "pause s",
            "answers ok",
            "chunks/s",
            "run chunks/s",
            "srv µs/chunk",
            "srv CPU",
            "gen CPU",
            "up CPU",
            "RSS idle MB",
            "RSS peak MB",
            "first p50 ms",
            "first p95 ms",
            "first p99 ms",
        ]
        facts = res.servers
        rxs = {name: f for name, f in facts.items() if name != "litellm"}
        ll = facts.get("litellm")
        first = res.runs[0] if res.runs else None
        seconds = f"{first.seconds - first.record_after:g}" if first else "?"
        up = (
            "http.server (Nagle on; the direct rows' generator acks each head at once)"
            if res.plain
            else "FakeGemini"
        )
        lines = [
            f"7. Serve under load, process-separated: {up} child (text answer, one HTTP chunk"
            + (
                " per answer in the saturated runs, per event in the others)"
                if res.whole
                else " per event)"
            )
            + " → server process → load",
            f"   generator process (python -m benchmarks._load: one {first.loop if first else '?'}"
            " loop, raw HTTP/1.1 keep-alive connections, every data: line json.loads'd);"
            f" {seconds} s of load measured per run",
            "   (each client repeats its request until then and finishes the answer it is in);"
            " chunks/s = content chunks within the window ÷ its length; run chunks/s = all ÷"
            " the whole run's time;",
            "   srv µs/chunk = the server's CPU time (/proc, its process tree) over the whole run"
            " ÷ every content chunk delivered; CPU columns = share of one core in the window",
            "   (srv = server, gen = load generator, up = the upstream); RSS = the server's"
            " (VmRSS, summed over its processes); direct = the generator reading the upstream"
            " itself",
            _table(headers, rows, left=2),
        ]
        paced = [r for r in res.runs if r.kind == "paced"]
        if paced:
            prow = [
                [
                    r.server,
                    str(r.clients),
                    str(len(r.added_us)),
                    ms(percentile(r.added_us, 0.5)),
                    ms(percentile(r.added_us, 0.99)),
                    ms(percentile(r.added_first_us, 0.5)),
                    ms(percentile(r.added_first_us, 0.99)),
                    ms(percentile(r.relay_us, 0.5)),
                    ms(percentile(r.relay_us, 0.99)),
                    pct(r.share(r.server_cpu_s)),
                ]
                for r in paced
            ]
            p = paced[0]
            offered = ", ".join(
                f"{c} clients {c / p.pause:,.0f}" for c in sorted({r.clients for r in paced})
            )
            lines += [
                f"   Paced ({p.pause:g} s between {p.events} events; chunks/s offered: {offered};"
                f" first requests spread over a {p.record_after:g} s ramp, then"
                f" {p.seconds - p.record_after:g} s measured):",
                "   added = a chunk's offset from its request's start minus the direct run's"
                " median offset of the same event; added first = the same for the first content"
                " chunk;",
                "   relay = added without the set-up (offsets from the answer's first chunk);"
                " direct row: the method's own spread",
                _table(
                    [
                        "server",
                        "C",
                        "chunks",
                        "added p50 ms",
                        "added p99 ms",
                        "added first p50",
                        "added first p99",
                        "relay p50 ms",
                        "relay p99 ms",
                        "srv CPU",
                    ],
                    prow,
                ),
            ]
        for r in res.runs:
            if r.kind != "open":
                continue
            lines.append(
                f"   {r.server}, {r.clients} open streams ({r.pause:g} s × {r.events} events),"
                f" fresh server: RSS idle {mb(r.rss_idle)} MB → {mb(r.rss_open)} MB with"
                f" {r.opened} open (all open after {r.open_s:.1f} s): {_num(r.kb_per_stream)} KB"
                " per open stream"
            )
        for name, rx in rxs.items():
            build = "compiled" if rx.get("compiled") else "pure Python"
            if rx.get("pure_requested"):
                build += ", RXGEM_PURE_PYTHON=1"
            dirty = f", {len(rx['dirty'])} uncommitted file(s) in rxgem/" if rx.get("dirty") else ""
            ready = ", ".join(f"{t:g}" for t in rx.get("ready_s", []))
            extra = f", args {shlex.join(rx['args'])!r}" if rx.get("args") else ""
            if rx.get("upstream_api", "generate-content") != "generate-content":
                extra += f", --upstream-api {rx['upstream_api']}"
            lines.append(
                f"   {name}: {rx.get('root')} at {rx.get('commit')}{dirty} ({build};"
                f" the server's extension modules from"
                f" {', '.join(rx.get('loaded', {}).get('extensions_from', [])) or '-'}), --workers"
                f" {rx.get('workers')}{extra}, installed: {rx.get('accelerators')}, loaded:"
                f" {','.join(rx.get('loaded', {}).get('mapped', [])) or '-'}, uvicorn"
                f" {rx.get('versions', {}).get('uvicorn')}; ready in {ready} s"
            )
        if ll:
            ready = ", ".join(f"{t:g}" for t in ll.get("ready_s", []))
            lines.append(
                f"   litellm: {ll.get('versions', {}).get('litellm')} ({ll.get('python')}),"
                f" --num_workers 1, {ll.get('accelerators')}, uvicorn"
                f" {ll.get('versions', {}).get('uvicorn')}; ready in {ready} s"
            )
        for check in res.checks:
            lines.append(f"   upstream check: {check.describe()}")
        widest = max((r.clients for r in res.runs if r.kind != "open"), default=0)
        gen = [
            f"{r.server} {r.kind} {_num(r.gen_us_per_chunk)} µs"
            for r in res.runs
            if r.kind != "open" and r.chunks and r.clients == widest
        ]
        if gen:
            lines.append(
                f"   load generator's CPU per chunk (whole run) at C={widest}: {', '.join(gen)}"
            )
        busy = [r for r in res.runs if r.kind == "saturated" and r.share(r.gen_cpu_s) >= 0.85]
        if busy:
            lines.append(
                "   load generator near a whole core (≥ 85%) in: "
                + ", ".join(f"{r.server} C={r.clients}" for r in busy)
                + " (there it, not the server, sets chunks/s)"
            )
        lines.append(
            f"   every answer complete and correct, upstream requests as expected:"
            f" {'yes' if res.correct else 'NO'}"
        )
        lines.extend(f"   note: {n}" for n in res.notes)
        return "\n".join(lines)

    def targets(self) -> str:
        out = ["6. Targets"]

        def verdict(ok: bool | None) -> str:
            return {True: "[met]    ", False: "[NOT met]", None: "[n/a]    "}[ok]

        floor = [r for r in self.results if r.name.startswith(("text", "thinking", "parallel"))]
        if floor:
            ok = all(r.ratio_floor <= FLOOR_TARGET for r in floor)
            detail = ", ".join(f"{r.name} {r.ratio_floor:.2f}×" for r in floor)
            out.append(f"{verdict(ok)} pipeline ≤ {FLOOR_TARGET:g}× json.loads floor: {detail}")
        speedups = [
            (r.name, r.litellm.median / r.rxgem.median)
            for r in self.results
            if r.litellm is not None
        ]
        if speedups:
            ok = all(x >= LITELLM_TARGET for _, x in speedups)
            detail = ", ".join(f"{name} {x:.1f}×" for name, x in speedups)
            out.append(f"{verdict(ok)} ≥ {LITELLM_TARGET:g}× faster than LiteLLM: {detail}")
            bounded = [
                f"{r.name} (at most {r.litellm.median / r.decode.median:.1f}×)"
                for r in self.results
                if r.litellm is not None
                and r.decode is not None
                and r.litellm.median / r.decode.median < LITELLM_TARGET
            ]
            if bounded:
                out.append(
                    "     bounded by decoding the same bytes (LiteLLM ÷ msgspec's decode alone):"
                    f" {', '.join(bounded)}"
                )
        elif self.results:
            out.append(
                f"{verdict(None)} ≥ {LITELLM_TARGET:g}× faster than LiteLLM: {self.litellm_note}"
            )
        res = self.asynchronous
        if res is not None and res.memory.bytes_per_stream is not None:
            best, raw = res.best_memory()
            peak = best.bytes_per_stream or 0.0
            steady = best.steady_per_stream
            worst = max(peak, steady or 0.0)
            extra = ""
            if raw is not None and raw.bytes_per_stream is not None:
                extra = (
                    f"; httpx alone {_bytes(raw.bytes_per_stream)} peak, rxgem's share"
                    f" {_bytes(peak - raw.bytes_per_stream)}"
                )
            where = f"{best.protocol}, {best.clients} client{'s' if best.clients > 1 else ''}"
            out.append(
                f"{verdict(steady is not None and worst < STREAM_TARGET)} <"
                f" {_bytes(STREAM_TARGET)} per open stream, steady and peak, best configuration"
                f" ({where}): steady {_bytes(steady) if steady is not None else '-'}, peak"
                f" {_bytes(peak)}{extra}"
            )
            if best is not res.memory and res.memory.bytes_per_stream is not None:
                out.append(
                    f"     (HTTP/1.1, one connection per stream:"
                    f" peak {_bytes(res.memory.bytes_per_stream)})"
                )
        linear = [r for r in self.results if r.linearity is not None]
        if linear:
            ok = all(r.linearity is not None and r.linearity <= LINEAR_LIMIT for r in linear)
            detail = ", ".join(f"{r.name} {r.linearity:.2f}" for r in linear)
            out.append(f"{verdict(ok)} linear scaling (full÷half ≤ {LINEAR_LIMIT:g}): {detail}")
        if self.fixed:
            worst = max(f.beyond_cores("from_body") for f in self.fixed)
            detail = ", ".join(
                f"{f.events} event(s) {f.beyond_cores('from_body'):.1f} µs" for f in self.fixed
            )
            out.append(
                f"{verdict(worst < fixed_cost.TARGET_US)} fixed cost per stream <"
                f" {fixed_cost.TARGET_US:g} µs beyond the cores (from_body): {detail}"
            )
        if self.latency is not None:
            ok = self.latency.p99 < P99_TARGET
            out.append(f"{verdict(ok)} p99 latency < {P99_TARGET:g} µs: {self.latency.p99:.1f} µs")
        return "\n".join(out) if len(out) > 1 else ""

    def profile_tables(self) -> str:
        parts = []
        for name, rows in self.hotspots.items():
            table = _table(
                ["function", "file:line", "calls", "tottime s", "share"],
                [
                    [h.function, h.where, str(h.calls), f"{h.tottime:.3f}", f"{h.share * 100:.1f}%"]
                    for h in rows
                ],
                left=2,
            )
            parts.append(
                f"cProfile of the pipeline on {name} (own time, top {len(rows)}):\n{table}"
            )
        return "\n\n".join(parts)

    def render(self) -> str:
        parts = [self.header()]
        if self.results:
            parts += [self.cost_table(), self.ratio_table(), self.responses_table()]
        parts += [
            interactions.render(self.interactions) if self.interactions else "",
            self.linearity_table(),
            self.latency_table(),
            self.async_table(),
            self.serve_table(),
            fixed_cost.fixed_cost_table(self.fixed, "8. ") if self.fixed else "",
            self.targets(),
            self.profile_tables(),
        ]
        return "\n\n".join(p for p in parts if p) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "quick": self.args.quick,
            "repeat": self.args.repeat,
            "min_time": self.args.min_time,
            "seed": captures.SEED,
            "machine": self.facts,
            "litellm_note": self.litellm_note,
            "captures": {r.name: r.to_json() for r in self.results},
            "latency": self.latency.to_json() if self.latency else None,
            "async": self.asynchronous.to_json() if self.asynchronous else None,
            "serve": self.serve.to_json() if self.serve else None,
            "fixed_cost": [f.to_json() for f in self.fixed],
            "interactions": self.interactions.to_json() if self.interactions else None,
        }


# --------------------------------------------------------------------------- main


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse(argv)
    started = time.perf_counter()
    report = Report(args, measure.machine_facts())
    if args.baseline is not None:
        report.baseline = json.loads(args.baseline.read_text())

    for spec in args.specs:
        _log(f"{spec.name}: generating")
        capture = spec.make()
        half = spec.half() if spec.half is not None else None
        size = f"{capture.event_count} events, {len(capture.body) / 1e6:.2f} MB"
        _log(f"{spec.name}: {size}{f' (+ {half.name})' if half else ''}; timing")
        result = measure.measure_capture(
            capture, half=half, repeat=args.repeat, min_time=args.min_time, budget=args.budget
        )
        del capture, half
        gc.collect()
        report.results.append(result)

    if report.results and not args.no_litellm:
        _log("litellm: measuring in a child process")
        stats, note, litellm_version = measure.litellm_results(
            [r.name for r in report.results],
            repeat=args.repeat,
            min_time=args.min_time,
            budget=args.litellm_budget,
            python=args.litellm_python,
        )
        report.litellm_note = note
        if litellm_version is not None:
            where = args.litellm_python or "this interpreter"
            report.facts["litellm"] = f"{litellm_version} ({where})"
        for r in report.results:
            r.litellm = stats.get(r.name)
    elif args.no_litellm:
        report.litellm_note = "skipped (--no-litellm)"

    if "interactions" in args.sections:
        _log("interactions: both readers and pipelines on a text answer, interleaved")
        report.interactions = interactions.measure_interactions(
            repeat=args.repeat, min_time=args.min_time
        )

    if "latency" in args.sections:
        _log("latency: text-2000, one event per on_next")
        report.latency = measure.latency(captures.build("text-2000"), runs=args.repeat)

    if "fixed" in args.sections:
        _log("fixed cost: 1- and 2-event streams, cores vs the whole pipeline")
        report.fixed = fixed_cost.fixed_cost(repeat=args.repeat, min_time=args.min_time)

    if "async" in args.sections:
        _log(
            f"async: {args.streams} concurrent streams (throughput, then memory;"
            f" HTTP/1.1{', then HTTP/2' if measure.HAVE_H2 else ''})"
        )
        report.asynchronous = measure.async_throughput(args.streams)

    if "serve" in args.sections:
        _log(
            f"serve: rxgem serve{' and the LiteLLM proxy' if args.litellm_python else ''} as"
            f" processes, C = {','.join(map(str, args.serve_clients))}, {args.serve_seconds:g} s"
            " per run"
        )
        report.serve = serve.serve_benchmark(
            args.serve_clients,
            args.serve_seconds,
            workers=args.serve_workers,
            litellm_python=args.litellm_python,
            open_streams=args.serve_open,
            rxgem_path=args.serve_rxgem_path,
            log=_log,
            paced_clients=args.serve_paced_clients,
            rxgem_args=args.serve_args,
            variants=args.serve_variant,
            warm_clients=args.serve_warm_clients,
            whole=args.serve_whole,
            upstream_apis=args.serve_upstream_api,
            plain=args.serve_upstream == "plain",
            saturated_events=args.serve_events,
        )

    if args.profile:
        for name, capture in (
            ("text-2000", captures.build("text-2000")),
            ("thinking-tools", captures.build("thinking-tools")),
        ):
            _log(f"profile: {name}")
            report.hotspots[name] = measure.profile_pipeline(capture)

    sys.stdout.write(report.render())
    elapsed = time.perf_counter() - started
    print(f"(run took {elapsed:.0f} s)")
    if args.save is not None:
        data = report.to_json()
        data["elapsed_s"] = elapsed
        args.save.write_text(json.dumps(_clean(data), indent=2, allow_nan=False) + "\n")
        _log(f"saved {args.save}")
    return 0


def _clean(value: Any) -> Any:
    """``value`` with NaN (not measured) replaced by ``None``, for strict JSON."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


if __name__ == "__main__":
    sys.exit(main())
