"""``rxgem serve`` under load, process-separated, side by side with the LiteLLM proxy.

Every party is its own process, as in a deployment:

- **upstream**: a FakeGemini child (``python -m benchmarks._server``: a generated text answer,
  ``text_answer(n)``, one HTTP chunk per event, ``--pause`` s between events), one per kind of
  run; with ``--serve-upstream plain``, Python's ``http.server`` instead (``benchmarks._plain``:
  Nagle's algorithm on, a response's head and body in separate writes, as plain HTTP/1.1
  servers write them; FakeGemini sets ``TCP_NODELAY``);
- **servers**: ``rxgem serve`` (the ``rxgem`` script beside this interpreter, ``--workers``
  ``--serve-workers``, ``--log-level warning``) and, when ``--litellm-python`` names an
  interpreter with LiteLLM's proxy, ``litellm --config`` (its ``gemini`` provider with
  ``api_base`` at the same fake, ``--num_workers 1``, ``LITELLM_LOG=WARNING``), each started
  for one upstream and stopped after its runs; ``--serve-variant`` replaces the one
  ``rxgem serve`` by several (each its own checkout and arguments), measured in turn in every
  run against the same upstream: a lever side by side in one run; ``--serve-upstream-api
  generate-content,interactions`` runs each ``rxgem serve`` once per upstream API
  (``--upstream-api interactions``: the row ``NAME-interactions``), against the same fake,
  which answers ``POST /v1beta/interactions`` with the same answer as an Interactions
  stream (the same text, one piece per ``generateContent`` event);
- **load**: ``python -m benchmarks._load`` (one asyncio loop, raw HTTP/1.1 connections, see
  there), started per run; it reads the server's, the upstream's and its own CPU time
  (``/proc/PID/stat`` of the process tree) at the start and the end of the measured window
  (the ``--serve-seconds`` of load), and samples their resident memory (``VmRSS``, summed
  over the tree) every 0.2 s.

Three kinds of run:

1. **saturated**: the upstream sends each 50-event answer as fast as it can; ``C`` clients
   (``--serve-clients``, 1, 20 and 200) repeat their request for ``--serve-seconds``: content
   chunks per second carried (within the window, and over the whole run), the server's CPU µs
   per chunk (its CPU time over the whole run ÷ every chunk delivered: each answer started is
   finished, so each request's set-up counts), its memory. Before them, ``max(C)`` clients for
   0.5 s, not counted (first requests, lazy imports, the upstream pool filled), then the
   server's idle memory.
2. **paced**: 0.1 s between the upstream's 50 events, ``C`` in ``--serve-paced-clients`` (20
   and 200: 200 and 2,000 chunks/s offered). The clients' first requests are spread over one
   answer's length (5 s, the ramp, which also warms the server up), then each repeats its
   request for ``--serve-seconds`` more: only that steady window is measured (the answers
   started in it, the chunks and the CPU share within it). The added latency per chunk is each
   chunk's offset from its request's start minus the median offset of the same event in the
   direct run (so it includes the request's set-up); ``relay`` leaves the set-up out (offsets
   from the answer's first chunk, against the same in the direct run). Also the server's share
   of a core.
3. **open streams** (rxgem only): ``--serve-open`` (1,000) streams from a slow upstream
   (2 s × 30 events: 500 chunks/s for 1,000 streams, so that the server is not saturated
   while they open; at 0.5 s it was, and the first streams ended before the last opened)
   held open at once against a fresh server: its memory growth per open stream ((RSS 1 s
   after the last one opened − RSS idle after a warm-up) ÷ streams).

The **direct** rows are the same load generator reading the fake's
``streamGenerateContent?alt=sse`` itself: the ceiling of upstream + generator on this machine,
and the paced run's reference times. Every answer is checked (the whole text, ``finish_reason``
``stop``, ``[DONE]``), and so is what reached the upstream (the fake's own count of requests
by path, with the key, with the prompt, ``alt=sse``) against the answers the clients got.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

from ._load import raise_nofile, tree_pids, tree_rss

__all__ = [
    "UPSTREAM_PATHS",
    "RxgemSpec",
    "ServeResult",
    "ServeRun",
    "parse_variant",
    "percentile",
    "serve_benchmark",
]

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-client-token"
GEMINI_KEY = "bench-gemini-key"
STREAM_PATH = "POST /v1beta/models/gemini-2.5-flash:streamGenerateContent"
UPSTREAM_PATHS = {  # ``rxgem serve --upstream-api`` → the one request its upstream should see
    "generate-content": STREAM_PATH,
    "interactions": "POST /v1beta/interactions",
}
SATURATED = (50, 0.0)  # events, pause
PACED = (50, 0.1)
OPEN = (30, 2.0)  # slow enough that the server is not saturated while they open


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --------------------------------------------------------------------------- results


@dataclass
class ServeRun:
    """One load generator run against one server (or the upstream directly)."""

    server: str  # "direct", "rxgem", "litellm"
    kind: str  # "saturated", "paced", "open"
    clients: int
    seconds: float
    events: int
    pause: float
    ok: int = 0
    failed: int = 0
    wrong: int = 0
    errors: list[str] = field(default_factory=list)
    chunks: int = 0
    in_window: int = 0
    wall_s: float = 0.0
    record_after: float = 0.0  # the measured window: from here to ``seconds``
    window_s: float = float("nan")
    gen_cpu_s: float = float("nan")  # CPU time within the window
    gen_cpu_run_s: float = float("nan")  # over the whole run
    server_cpu_s: float = float("nan")
    server_cpu_run_s: float = float("nan")  # over the whole run, every answer to its end
    upstream_cpu_s: float = float("nan")
    rss_idle: int = 0  # the server's, before the run
    rss_peak: int = 0
    rss_end: int = 0
    rss_open: int = 0
    opened: int = 0
    open_s: float = 0.0
    loop: str = ""
    first_us: list[int] = field(default_factory=list, repr=False)
    offsets: list[list[int]] = field(default_factory=list, repr=False)
    added_us: list[float] = field(default_factory=list, repr=False)
    added_first_us: list[float] = field(default_factory=list, repr=False)
    relay_us: list[float] = field(default_factory=list, repr=False)

    @classmethod
    def from_load(
        cls, server: str, kind: str, events: int, pause: float, data: dict[str, Any]
    ) -> ServeRun:
        run = cls(server, kind, data["clients"], data["seconds"], events, pause)
        for name in ("ok", "failed", "wrong", "errors", "chunks", "in_window", "wall_s"):
            setattr(run, name, data[name])
        for name in ("first_us", "offsets", "opened", "open_s", "loop", "record_after"):
            setattr(run, name, data[name])
        nan = float("nan")

        def window(cpu: float | None, whole: float) -> float:
            return whole if run.kind == "open" else (nan if cpu is None else cpu)

        run.window_s = data["window_s"] if data["window_s"] is not None else nan
        run.gen_cpu_s = window(data["window_cpu_s"], data["cpu_s"])
        run.gen_cpu_run_s = data["cpu_s"]
        watched = data["watched"]
        if "server" in watched:
            s = watched["server"]
            run.server_cpu_s = window(s["window_cpu_s"], s["cpu_s"])
            run.server_cpu_run_s = s["cpu_s"]
            run.rss_peak, run.rss_end, run.rss_open = s["rss_peak"], s["rss_end"], s["rss_open"]
        if "upstream" in watched:
            u = watched["upstream"]
            run.upstream_cpu_s = window(u["window_cpu_s"], u["cpu_s"])
        return run

    @property
    def answers(self) -> int:
        return self.ok + self.failed + self.wrong

    @property
    def chunks_per_s(self) -> float:
        """Content chunks that reached the clients within the measured window, per s."""
        return self.in_window / self.window_s if self.window_s else float("nan")

    @property
    def run_chunks_per_s(self) -> float:
        """Every content chunk of the run ÷ the run's wall time (ramp and tail included)."""
        return self.chunks / self.wall_s if self.wall_s else float("nan")

    @property
    def server_us_per_chunk(self) -> float:
        """The server's CPU time over the whole run ÷ every content chunk it delivered.

        Every answer started is finished within the run, so this counts each request's
        set-up and all of its chunks, also when few chunks fell within the window.
        """
        return self.server_cpu_run_s * 1e6 / self.chunks if self.chunks else float("nan")

    @property
    def gen_us_per_chunk(self) -> float:
        """The load generator's CPU time over the whole run ÷ every content chunk it read."""
        return self.gen_cpu_run_s * 1e6 / self.chunks if self.chunks else float("nan")

    def share(self, cpu_s: float) -> float:
        """``cpu_s`` (of the window, or of the whole open-streams run) as a share of a core."""
        span = self.wall_s if self.kind == "open" else self.window_s
        return cpu_s / span if span else float("nan")

    @property
    def kb_per_stream(self) -> float:
        if not self.opened or not self.rss_open:
            return float("nan")
        return (self.rss_open - self.rss_idle) / self.opened / 1024

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "kind": self.kind,
            "clients": self.clients,
            "seconds": self.seconds,
            "events": self.events,
            "pause": self.pause,
            "ok": self.ok,
            "failed": self.failed,
            "wrong": self.wrong,
            "errors": self.errors,
            "chunks": self.chunks,
            "in_window": self.in_window,
            "chunks_per_s": self.chunks_per_s,
            "run_chunks_per_s": self.run_chunks_per_s,
            "wall_s": self.wall_s,
            "record_after": self.record_after,
            "window_s": self.window_s,
            "gen_cpu_s": self.gen_cpu_s,
            "gen_cpu_run_s": self.gen_cpu_run_s,
            "gen_us_per_chunk": self.gen_us_per_chunk,
            "gen_share": self.share(self.gen_cpu_s),
            "server_cpu_s": self.server_cpu_s,
            "server_cpu_run_s": self.server_cpu_run_s,
            "server_share": self.share(self.server_cpu_s),
            "server_us_per_chunk": self.server_us_per_chunk,
            "upstream_cpu_s": self.upstream_cpu_s,
            "upstream_share": self.share(self.upstream_cpu_s),
            "rss_idle": self.rss_idle,
            "rss_peak": self.rss_peak,
            "rss_end": self.rss_end,
            "rss_open": self.rss_open,
            "opened": self.opened,
            "open_s": self.open_s,
            "kb_per_stream": self.kb_per_stream,
            "first_p50_us": percentile(self.first_us, 0.5),
            "first_p95_us": percentile(self.first_us, 0.95),
            "first_p99_us": percentile(self.first_us, 0.99),
            "added_p50_us": percentile(self.added_us, 0.5),
            "added_p99_us": percentile(self.added_us, 0.99),
            "added_first_p50_us": percentile(self.added_first_us, 0.5),
            "added_first_p99_us": percentile(self.added_first_us, 0.99),
            "added_samples": len(self.added_us),
            "relay_p50_us": percentile(self.relay_us, 0.5),
            "relay_p99_us": percentile(self.relay_us, 0.99),
            "loop": self.loop,
        }


@dataclass
class UpstreamCheck:
    """What one server sent the fake during its runs, against what its clients got."""

    server: str
    requests: int
    expected: int  # requests the clients made (answers, warm-ups included)
    paths: dict[str, int]
    keyed: int
    prompted: int
    sse: int  # asking for a stream: alt=sse, or "stream": true in an Interactions body
    path: str = STREAM_PATH  # the one request every client request should have made

    @property
    def ok(self) -> bool:
        return (
            self.requests == self.expected
            and self.paths == {self.path: self.requests}
            and self.keyed == self.prompted == self.sse == self.requests
        )

    def describe(self) -> str:
        streamed = "?alt=sse" if self.path == STREAM_PATH else ' with "stream": true'
        if self.ok:
            return (
                f"{self.server}: {self.requests} upstream requests for {self.expected} client"
                f" requests, every one {self.path}{streamed}, the key and the prompt"
            )
        return (
            f"{self.server}: upstream MISMATCH: {self.requests} requests for {self.expected}"
            f" client requests; paths {self.paths}; with the key {self.keyed}, with the"
            f" prompt {self.prompted}, streamed {self.sse}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "server": self.server,
            "requests": self.requests,
            "expected": self.expected,
            "paths": self.paths,
            "keyed": self.keyed,
            "prompted": self.prompted,
            "sse": self.sse,
            "path": self.path,
            "ok": self.ok,
        }


@dataclass
class ServeResult:
    runs: list[ServeRun]
    checks: list[UpstreamCheck]
    servers: dict[str, dict[str, Any]]  # name → facts (command, versions, start time)
    notes: list[str] = field(default_factory=list)
    whole: bool = False  # the saturated upstream wrote each answer at once
    plain: bool = False  # the upstream was http.server (Nagle on), not FakeGemini

    def find(self, server: str, kind: str, clients: int | None = None) -> ServeRun | None:
        for run in self.runs:
            same = run.server == server and run.kind == kind
            if same and (clients is None or run.clients == clients):
                return run
        return None

    @property
    def correct(self) -> bool:
        return all(
            r.failed == 0 and r.wrong == 0 and (r.ok > 0 or r.opened > 0) for r in self.runs
        ) and all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": "process-separated",
            "whole": self.whole,
            "upstream": "plain" if self.plain else "fake",
            "runs": [r.to_json() for r in self.runs],
            "upstream_checks": [c.to_json() for c in self.checks],
            "servers": self.servers,
            "correct": self.correct,
            "notes": self.notes,
        }


# --------------------------------------------------------------------------- processes


def _raise_limits() -> None:  # in each child before exec: room for thousands of sockets
    raise_nofile()


class Upstream:
    """``benchmarks._server`` (a FakeGemini, or ``http.server`` with ``plain``) in a child
    process."""

    def __init__(self, events: int, pause: float, whole: bool = False, plain: bool = False) -> None:
        command = [sys.executable, "-m", "benchmarks._server", "--events", str(events)]
        command += ["--pause", str(pause), "--backlog", "4096", "--key", GEMINI_KEY]
        command += ["--whole"] if whole else []
        command += ["--plain"] if plain else []
        self.events, self.pause, self.plain = events, pause, plain
        self.proc = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=_raise_limits,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip().isdigit():
            self.close()
            raise RuntimeError(f"benchmark upstream did not start: {line!r}")
        self.port = int(line)
        self.pid = self.proc.pid

    def stats(self) -> dict[str, Any]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write("stats\n")
        self.proc.stdin.flush()
        return dict(json.loads(self.proc.stdout.readline()))

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


_Command = tuple[list[str], dict[str, str]]
"""A server's argv and environment."""


@dataclass
class ServerSpec:
    """How to start one kind of server in front of an upstream."""

    name: str
    health: str  # the path polled until it answers 200
    token: str
    ready_timeout: float
    facts: dict[str, Any] = field(default_factory=dict)

    def command(
        self, upstream_port: int, port: int, workdir: Path
    ) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError


@dataclass
class RxgemSpec(ServerSpec):
    workers: int = 1
    path: Path | None = None  # import rxgem from this checkout (PYTHONPATH)
    args: list[str] = field(default_factory=list)  # more arguments to ``rxgem serve``, last
    upstream_api: str = "generate-content"  # ``--upstream-api``, given only when not this

    def command(
        self, upstream_port: int, port: int, workdir: Path
    ) -> tuple[list[str], dict[str, str]]:
        script = Path(sys.executable).parent / "rxgem"
        if script.exists():
            head = [str(script)]
        else:
            head = [
                sys.executable,
                "-c",
                "import sys; from rxgem.cli import main; sys.exit(main())",
            ]
        command = [
            *head,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--upstream",
            f"http://127.0.0.1:{upstream_port}/v1beta",
            "--api-key",
            GEMINI_KEY,
            "--client-token",
            TOKEN,
            "--workers",
            str(self.workers),
            "--log-level",
            "warning",
            # only when asked: a checkout from before the option still runs the default
            *(
                ["--upstream-api", self.upstream_api]
                if self.upstream_api != "generate-content"
                else []
            ),
            *self.args,  # after the others: argparse keeps the last of a repeated option
        ]
        env = dict(os.environ)
        if self.path is not None:
            env["PYTHONPATH"] = str(self.path)
        return command, env


def parse_variant(text: str) -> tuple[str, str | None, list[str]]:
    """``NAME:DIR:ARGS`` (``--serve-variant``) → (name, checkout or None, arguments).

    ``DIR`` empty: the checkout of ``--serve-rxgem-path`` (or this interpreter's rxgem);
    ``ARGS`` (split as a shell would) go to ``rxgem serve`` after the benchmark's own, so
    that e.g. ``--workers 2`` there wins.
    """
    name, sep, rest = text.partition(":")
    path, _, args = rest.partition(":")
    if not sep or not name or name in ("direct", "litellm") or not name.isprintable():
        raise ValueError(f"NAME:DIR:ARGS with a NAME other than direct and litellm: {text!r}")
    return name, path or None, shlex.split(args)


def _workers_in(args: Sequence[str], default: int) -> int:
    workers = default
    for i, arg in enumerate(args):
        if arg == "--workers" and i + 1 < len(args):
            workers = int(args[i + 1])
        elif arg.startswith("--workers="):
            workers = int(arg.partition("=")[2])
    return workers


@dataclass
class LitellmSpec(ServerSpec):
    python: Path = Path()

    def command(
        self, upstream_port: int, port: int, workdir: Path
    ) -> tuple[list[str], dict[str, str]]:
        config = workdir / "config.yaml"
        # LiteLLM's gemini provider builds {api_base}/models/{model}:streamGenerateContent,
        # so its api_base is the API root with the version, as Google's is.
        config.write_text(
            "model_list:\n"
            "  - model_name: gemini-2.5-flash\n"
            "    litellm_params:\n"
            "      model: gemini/gemini-2.5-flash\n"
            f"      api_base: http://127.0.0.1:{upstream_port}/v1beta\n"
            f"      api_key: {GEMINI_KEY}\n"
            "general_settings:\n"
            f"  master_key: {self.token}\n"
        )
        script = self.python.parent / "litellm"
        head = (
            [str(script)]
            if script.exists()
            else [
                str(self.python),
                "-c",
                "from litellm_cli.main import proxy_server; proxy_server()",
            ]
        )
        command = [
            *head,
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--num_workers",
            "1",
        ]
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        # No price list from the network; no access line per request (as rxgem's
        # --log-level warning).
        env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", LITELLM_LOG="WARNING")
        return command, env


class ServerProcess:
    def __init__(self, spec: ServerSpec, upstream: Upstream) -> None:
        self.spec = spec
        self.workdir = Path(tempfile.mkdtemp(prefix=f"bench-{spec.name}-"))
        self.port = _free_port()
        command, env = spec.command(upstream.port, self.port, self.workdir)
        self.log_path = self.workdir / "server.log"
        self.log = self.log_path.open("wb")
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            command,
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            preexec_fn=_raise_limits,
        )
        self.pid = self.proc.pid
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.ready_s = time.perf_counter() - started

    def loaded(self, package: str) -> dict[str, Any]:
        """Where the running server's ``package`` comes from: the directories of its
        extension modules mapped in the process (``/proc/PID/maps``), and its PYTHONPATH."""
        roots: set[str] = set()
        mapped: set[str] = set()  # uvloop, httptools: imported (loaded) by the server or not
        with contextlib.suppress(OSError), open(f"/proc/{self.pid}/maps") as f:
            for line in f:
                path = line.split(maxsplit=5)[-1].strip()
                marker = f"/{package}/"
                if path.endswith(".so") and marker in path:
                    roots.add(path[: path.index(marker)])
                mapped.update(n for n in ("uvloop", "httptools") if f"/{n}/" in path)
        environ = b""
        with contextlib.suppress(OSError), open(f"/proc/{self.pid}/environ", "rb") as f:
            environ = f.read()
        pythonpath = next(
            (v[11:].decode() for v in environ.split(b"\0") if v.startswith(b"PYTHONPATH=")),
            None,
        )
        return {
            "extensions_from": sorted(roots),
            "pythonpath": pythonpath,
            "mapped": sorted(mapped),
        }

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.spec.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"{self.spec.name} exited with {self.proc.returncode}: {self.tail()}"
                )
            try:
                with urllib.request.urlopen(self.url + self.spec.health, timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(
            f"{self.spec.name} not ready in {self.spec.ready_timeout:g} s: {self.tail()}"
        )

    def tail(self, lines: int = 8) -> str:
        self.log.flush()
        text = self.log_path.read_text(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:])

    def stop(self) -> None:
        pids = tree_pids(self.pid)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                for pid in reversed(pids):  # our own child and its workers
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextlib.contextmanager
def _serving(spec: ServerSpec, upstream: Upstream) -> Iterator[ServerProcess]:
    server = ServerProcess(spec, upstream)
    try:
        yield server
    finally:
        server.stop()


def _load(
    url: str,
    *,
    api: str,
    token: str,
    clients: int,
    seconds: float,
    events: int,
    watch: dict[str, int],
    offsets: bool = False,
    hold: float | None = None,
    stagger: float = 0.0,
    record_after: float = 0.0,
    quick_ack: bool = False,
) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks._load", "--url", url, "--api", api]
    command += ["--quick-ack"] if quick_ack else []
    command += ["--token", token, "--clients", str(clients), "--seconds", str(seconds)]
    command += ["--events", str(events), "--stagger", str(stagger)]
    command += ["--record-after", str(record_after)]
    if offsets:
        command.append("--offsets")
    if hold is not None:
        command += ["--hold", str(hold)]
    for name, pid in watch.items():
        command += ["--watch", f"{name}={pid}"]
    done = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=seconds + 300,
        preexec_fn=_raise_limits,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


# --------------------------------------------------------------------------- the benchmark


def _probe(python: str, code: str, env: dict[str, str] | None = None) -> str | None:
    try:  # not from the checkout: "-c" puts the working directory first on sys.path
        done = subprocess.run(
            [python, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=False,
            cwd=tempfile.gettempdir(),
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


_STACK = (
    "import importlib.util as u, importlib.metadata as m\n"
    "names = ('uvloop', 'httptools')\n"
    "print(','.join(n for n in names if u.find_spec(n)) or '-',"
    " *(m.version(p) for p in ('{package}', 'uvicorn', 'starlette', 'httpx')))"
)


def _rxgem_facts(spec: RxgemSpec) -> dict[str, Any]:
    env = dict(os.environ)
    if spec.path is not None:
        env["PYTHONPATH"] = str(spec.path)
    where = _probe(
        sys.executable,
        "import os, rxgem; print(rxgem.COMPILED, os.path.dirname(os.path.dirname(rxgem.__file__)))",
        env,
    )
    compiled, _, root = (where or "? ?").partition(" ")
    commit = dirty = None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        commit = subprocess.run(
            ["git", "-C", root, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", root, "status", "--porcelain", "--", "rxgem"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    stack = (_probe(sys.executable, _STACK.format(package="rxgem"), env) or "").split()
    return {
        "kind": "rxgem",
        "args": list(spec.args),
        "pure_requested": env.get("RXGEM_PURE_PYTHON", "") not in ("", "0"),
        "root": root,
        "commit": commit,
        "dirty": dirty,
        "compiled": compiled == "True",
        "accelerators": stack[0] if stack else "?",
        "versions": dict(zip(("rxgem", "uvicorn", "starlette", "httpx"), stack[1:], strict=False)),
        "workers": spec.workers,
        "upstream_api": spec.upstream_api,
    }


def _litellm_spec(python: str | None) -> tuple[LitellmSpec | None, str]:
    if not python:
        return None, (
            "LiteLLM proxy not measured: pass --litellm-python PATH (an interpreter with"
            " 'litellm[proxy]' installed, in its own venv)"
        )
    stack = _probe(python, _STACK.format(package="litellm") + "\nimport fastapi, litellm.proxy")
    if stack is None:
        return None, f"LiteLLM proxy not measured: {python} cannot import litellm's proxy"
    accel, *versions = stack.split()
    spec = LitellmSpec(
        "litellm",
        "/health/readiness",
        "sk-" + secrets.token_hex(32),
        ready_timeout=180.0,
        python=Path(python),
    )
    spec.facts = {
        "python": python,
        "accelerators": accel,
        "versions": dict(zip(("litellm", "uvicorn", "starlette", "httpx"), versions, strict=False)),
        "workers": 1,
    }
    return spec, ""


def _direct(upstream: Upstream, kind: str, clients: int, seconds: float, **extra: Any) -> ServeRun:
    data = _load(
        f"http://127.0.0.1:{upstream.port}",
        api="gemini",
        token=GEMINI_KEY,
        clients=clients,
        seconds=seconds,
        events=upstream.events,
        watch={"upstream": upstream.pid},
        quick_ack=upstream.plain,
        **extra,
    )
    return ServeRun.from_load("direct", kind, upstream.events, upstream.pause, data)


def _through(
    server: ServerProcess,
    upstream: Upstream,
    kind: str,
    clients: int,
    seconds: float,
    **extra: Any,
) -> ServeRun:
    data = _load(
        server.url,
        api="openai",
        token=server.spec.token,
        clients=clients,
        seconds=seconds,
        events=upstream.events,
        watch={"server": server.pid, "upstream": upstream.pid},
        **extra,
    )
    return ServeRun.from_load(server.spec.name, kind, upstream.events, upstream.pause, data)


def _warm(server: ServerProcess, upstream: Upstream, clients: int, **extra: Any) -> int:
    """Load that is not counted (first requests, lazy imports, the upstream pool filled);
    the requests made."""
    data = _load(
        server.url,
        api="openai",
        token=server.spec.token,
        clients=clients,
        seconds=0.5 if "hold" not in extra else 0.0,
        events=upstream.events,
        watch={},
        **extra,
    )
    return int(data["ok"] + data["failed"] + data["wrong"] + data["opened"])


def _idle_rss(pid: int) -> int:
    time.sleep(0.5)
    return tree_rss(pid)


def serve_benchmark(
    clients: Sequence[int] = (1, 20, 200),
    seconds: float = 3.0,
    workers: int = 1,
    litellm_python: str | None = None,
    open_streams: int = 1000,
    rxgem_path: str | None = None,
    log: Any = None,
    paced_clients: Sequence[int] = (20, 200),
    rxgem_args: Sequence[str] = (),
    variants: Sequence[tuple[str, str | None, Sequence[str]]] = (),
    warm_clients: int | None = None,
    whole: bool = False,
    upstream_apis: Sequence[str] = ("generate-content",),
    plain: bool = False,
    saturated_events: int = SATURATED[0],
) -> ServeResult:
    """Every run of the module docstring; ``log(message)`` reports progress.

    ``rxgem_args`` go to ``rxgem serve`` after the benchmark's own. ``variants`` (name,
    checkout or None for ``rxgem_path``, arguments) replace the one ``rxgem`` server by
    several, each measured in turn in every run, in this order, against the same upstreams
    and the same direct references: a lever side by side in one run. ``warm_clients``:
    the saturated runs' warm-up clients (default ``max(clients)``). ``whole``: the
    saturated runs' upstream writes each answer at once (one HTTP chunk), not an event
    per HTTP chunk. ``upstream_apis``: each rxgem server runs once per API in turn (its
    ``--upstream-api``; named ``NAME-interactions`` for ``interactions``), against the
    same fake answering the same text on both. ``plain``: every upstream is Python's
    ``http.server`` (``benchmarks._plain``: Nagle on, the head and the body in separate
    writes) instead of FakeGemini; the direct rows' generator then acknowledges each head
    at once, so that they show the upstream and not its own delayed ACKs.
    ``saturated_events``: the events of each answer in the saturated runs (50).
    """

    def say(message: str) -> None:
        if log is not None:
            log(message)

    unknown = set(upstream_apis) - set(UPSTREAM_PATHS)
    if unknown or not upstream_apis:
        raise ValueError(f"upstream APIs: some of {', '.join(UPSTREAM_PATHS)}, not {unknown}")

    def rxgem_spec(name: str, path: str | None, args: Sequence[str], api: str) -> RxgemSpec:
        spec = RxgemSpec(
            name if api == "generate-content" else f"{name}-{api}",
            "/healthz",
            TOKEN,
            ready_timeout=60.0,
            workers=_workers_in(args, workers),
            path=Path(path) if path else None,
            args=list(args),
            upstream_api=api,
        )
        spec.facts = _rxgem_facts(spec)
        return spec

    servers = [(name, path or rxgem_path, args) for name, path, args in variants] or [
        ("rxgem", rxgem_path, rxgem_args)
    ]
    rxgems = [rxgem_spec(*server, api) for server in servers for api in upstream_apis]
    if len({s.name for s in rxgems}) < len(rxgems):
        raise ValueError("two --serve-variant with the same name (NAME-interactions included)")
    litellm, note = _litellm_spec(litellm_python)
    specs: list[ServerSpec] = [*rxgems] + ([litellm] if litellm is not None else [])
    result = ServeResult([], [], {s.name: s.facts for s in specs}, whole=whole, plain=plain)
    if note:
        result.notes.append(note)
    expected: dict[str, int] = {}
    before: dict[str, dict[str, Any]] = {}
    after: dict[str, dict[str, Any]] = {}

    def counted(name: str, requests: int) -> None:
        expected[name] = expected.get(name, 0) + requests

    def add(run: ServeRun) -> ServeRun:
        result.runs.append(run)
        if run.failed or run.wrong:
            result.notes.append(
                f"{run.server} {run.kind} C={run.clients}: {run.failed} failed, {run.wrong}"
                f" wrong ({run.errors[0] if run.errors else '?'})"
            )
        return run

    def upstream_stats(up: Upstream, name: str, start: bool) -> None:
        stats = up.stats()
        if start:
            before.setdefault(name, stats)
        else:
            merged = after.setdefault(name, {"requests": 0, "keyed": 0, "prompted": 0, "sse": 0})
            b = before.pop(name)
            for key in ("requests", "keyed", "prompted", "sse"):
                merged[key] += stats[key] - b[key]
            paths = merged.setdefault("paths", {})
            for path, count in stats["paths"].items():
                paths[path] = paths.get(path, 0) + count - b["paths"].get(path, 0)

    # 1. saturated
    events, pause = saturated_events, SATURATED[1]
    up = Upstream(events, pause, whole, plain)
    try:
        say(f"serve: direct, saturated, C = {', '.join(map(str, clients))}")
        _direct(up, "saturated", min(20, max(clients)), 0.3)  # warm-up, not counted
        for c in clients:
            add(_direct(up, "saturated", c, seconds))
        for spec in specs:
            with _serving(spec, up) as server:
                say(f"serve: {spec.name} ready in {server.ready_s:.1f} s; saturated")
                if isinstance(spec, RxgemSpec):
                    spec.facts["loaded"] = server.loaded("rxgem")
                spec.facts.setdefault("ready_s", []).append(round(server.ready_s, 2))
                upstream_stats(up, spec.name, True)
                counted(spec.name, _warm(server, up, warm_clients or max(clients)))
                idle = _idle_rss(server.pid)
                for c in clients:
                    run = add(_through(server, up, "saturated", c, seconds))
                    run.rss_idle = idle
                    counted(spec.name, run.answers)
                upstream_stats(up, spec.name, False)
    finally:
        up.close()

    # 2. paced: a ramp of one answer's length (the clients' first requests spread over it),
    # then ``seconds`` of steady load, measured; the answers started in the ramp are checked
    # but not timed, and warm the server up.
    events, pause = PACED
    ramp = events * pause
    paced = {"offsets": True, "stagger": ramp, "record_after": ramp}
    references: dict[int, tuple[list[float], float]] = {}

    def added(run: ServeRun) -> None:
        reference, first_reference = references[run.clients]
        n = len(reference)
        run.added_us = [o - reference[i] for offs in run.offsets for i, o in enumerate(offs[:n])]
        run.relay_us = [
            (o - offs[0]) - (reference[i] - reference[0])
            for offs in run.offsets
            for i, o in enumerate(offs[:n])
            if i
        ]
        run.added_first_us = [f - first_reference for f in run.first_us]
        if run.answers and not run.first_us:
            result.notes.append(
                f"{run.server} paced C={run.clients}: no answer started in the measured window"
                f" (the first ones took too long: it carried {run.run_chunks_per_s:,.0f} of"
                f" {run.clients / pause:,.0f} chunks/s offered), so no latency"
            )

    up = Upstream(events, pause, plain=plain)
    try:
        for c in paced_clients:
            say(f"serve: direct, paced ({pause:g} s × {events} events), C = {c}, {ramp:g} s ramp")
            direct = add(_direct(up, "paced", c, ramp + seconds, **paced))
            references[c] = (
                [
                    median(o[i] for o in direct.offsets if len(o) > i)
                    for i in range(max(map(len, direct.offsets), default=0))
                ],
                median(direct.first_us) if direct.first_us else float("nan"),
            )
            added(direct)  # the reference's own spread: the noise floor of the method
        for spec in specs:
            with _serving(spec, up) as server:
                say(f"serve: {spec.name} ready in {server.ready_s:.1f} s; paced")
                spec.facts.setdefault("ready_s", []).append(round(server.ready_s, 2))
                upstream_stats(up, spec.name, True)
                for c in paced_clients:
                    run = add(_through(server, up, "paced", c, ramp + seconds, **paced))
                    counted(spec.name, run.answers)
                    added(run)
                upstream_stats(up, spec.name, False)
    finally:
        up.close()

    # 3. open streams, rxgem only (each variant, a fresh server)
    if open_streams > 0:
        events, pause = OPEN
        up = Upstream(events, pause, plain=plain)
        try:
            for rxgem in rxgems:
                name = rxgem.name
                with _serving(rxgem, up) as server:
                    say(
                        f"serve: {name}, {open_streams} open streams ({pause:g} s × {events}"
                        " events)"
                    )
                    upstream_stats(up, name, True)
                    counted(name, _warm(server, up, 20, hold=0.0))
                    idle = _idle_rss(server.pid)
                    data = _load(
                        server.url,
                        api="openai",
                        token=TOKEN,
                        clients=open_streams,
                        seconds=0.0,
                        events=events,
                        watch={"server": server.pid, "upstream": up.pid},
                        hold=1.0,
                        stagger=pause,
                    )
                    run = add(ServeRun.from_load(name, "open", events, pause, data))
                    run.rss_idle = idle
                    counted(name, run.opened + run.failed)
                    upstream_stats(up, name, False)
        finally:
            up.close()

    paths_by_server = {s.name: UPSTREAM_PATHS[s.upstream_api] for s in rxgems}
    for name, stats in after.items():
        paths = {path: count for path, count in stats["paths"].items() if count}
        result.checks.append(
            UpstreamCheck(
                name,
                stats["requests"],
                expected.get(name, 0),
                paths,
                stats["keyed"],
                stats["prompted"],
                stats["sse"],
                paths_by_server.get(name, STREAM_PATH),
            )
        )
    for check in result.checks:
        if not check.ok:
            result.notes.append(check.describe())
    return result
