"""``rxgem serve`` under load: the OpenAI-compatible server against the library called directly.

A FakeGemini child process (``benchmarks._server``: a generated text capture, one HTTP
chunk per event) is the upstream of two paths, driven in turn by the same number of
concurrent streaming clients on one asyncio loop in this process:

- **direct**: ``rxgem.aiterate(rxgem.chat_completions(body, client=shared httpx client))``,
  the chunk objects as the library hands them over;
- **server**: ``rxgem.server.create_app`` in real uvicorn (a thread of this process, its
  own event loop, 127.0.0.1, an ephemeral port), streamed with ``httpx.AsyncClient``
  (``POST /v1/chat/completions``, ``"stream": true``, every ``data:`` line decoded with
  ``json.loads``).

Every client repeats its request until the run's time is up (finishing the answer it is
in) and checks each answer: the complete expected text, ``finish_reason`` ``stop`` and
``[DONE]`` (server). Two runs per path: throughput (the upstream sends as fast as it can)
and latency (a paced upstream, the same offered load on both paths). Per content chunk,
the latency from its Gemini event's last byte leaving the upstream socket (stamped by an
httpx transport around the upstream pool, marker ``#n#`` in the prompt) to the chunk in
the client is recorded. Afterwards the asyncio tasks of every loop, this process's
threads and its open file descriptors (``/proc/self/fd``) are compared with before.
See ``benchmarks/README.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

from .captures import MODEL, Capture, text_answer
from .measure import _Server

__all__ = ["ServePhase", "ServeResult", "serve_benchmark"]

TOKEN = "bench-client-token"
PROMPT = [{"role": "user", "content": "Write a long answer."}]


@dataclass
class ServePhase:
    """One path's run: ``clients`` concurrent streaming clients for about ``seconds``."""

    path: str
    clients: int
    seconds: float
    events_per_response: int
    ok: int = 0
    failed: int = 0
    wrong: int = 0  # answers that arrived but differed from the expected text/finish
    errors: list[str] = field(default_factory=list)
    chunks: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    latency_us: list[float] = field(default_factory=list, repr=False)
    first_us: list[float] = field(default_factory=list, repr=False)
    leftover_tasks: int = 0
    pause_s: float = 0.0  # the upstream's pause between events
    in_window: int = 0  # content chunks (one per Gemini event here) that arrived in time

    @property
    def window_events_per_s(self) -> float:
        """Content chunks that reached the clients within the ``seconds`` of load, per s."""
        return self.in_window / self.seconds

    @property
    def events(self) -> int:
        """Gemini events turned into chunks for the clients (complete, correct answers only)."""
        return self.ok * self.events_per_response

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s else float("nan")

    @property
    def cpu_us_per_event(self) -> float:
        return self.cpu_s * 1e6 / self.events if self.events else float("nan")

    def pct(self, q: float, first: bool = False) -> float:
        values = sorted(self.first_us if first else self.latency_us)
        if not values:
            return float("nan")
        return values[min(len(values) - 1, int(q * len(values)))]

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        del data["latency_us"], data["first_us"]
        data.update(
            events=self.events,
            events_per_s=self.events_per_s,
            window_events_per_s=self.window_events_per_s,
            cpu_us_per_event=self.cpu_us_per_event,
            latency_samples=len(self.latency_us),
            latency_p50_us=self.pct(0.5),
            latency_p99_us=self.pct(0.99),
            first_p50_us=self.pct(0.5, first=True),
            first_p99_us=self.pct(0.99, first=True),
        )
        return data


@dataclass
class ServeResult:
    direct: ServePhase
    server: ServePhase
    direct_paced: ServePhase
    server_paced: ServePhase
    fds_before: int
    fds_after: int
    threads_before: list[str]
    threads_after: list[str]
    server_leftover_tasks: int
    upstream_closed: bool
    notes: list[str] = field(default_factory=list)

    def added(self, q: float) -> float:
        """The server's added latency per chunk at quantile ``q`` (server − direct), µs."""
        return self.server.pct(q) - self.direct.pct(q)

    def added_paced(self, q: float) -> float:
        """The same with a paced upstream: both paths at the same load, below saturation."""
        return self.server_paced.pct(q) - self.direct_paced.pct(q)

    @property
    def phases(self) -> tuple[ServePhase, ...]:
        return (self.direct, self.server, self.direct_paced, self.server_paced)

    @property
    def throughput_ratio(self) -> float:
        """server ÷ direct events/s within the window (1.0 = the server costs nothing)."""
        return self.server.window_events_per_s / self.direct.window_events_per_s

    @property
    def clean(self) -> bool:
        return (
            self.fds_after <= self.fds_before
            and self.threads_after == self.threads_before
            and self.server_leftover_tasks == 0
            and all(p.leftover_tasks == 0 for p in self.phases)
            and self.upstream_closed
        )

    @property
    def correct(self) -> bool:
        return all(p.failed == 0 and p.wrong == 0 and p.ok > 0 for p in self.phases)

    def to_json(self) -> dict[str, Any]:
        return {
            "direct": self.direct.to_json(),
            "server": self.server.to_json(),
            "direct_paced": self.direct_paced.to_json(),
            "server_paced": self.server_paced.to_json(),
            "added_paced_p50_us": self.added_paced(0.5),
            "added_paced_p99_us": self.added_paced(0.99),
            "throughput_ratio": self.throughput_ratio,
            "added_p50_us": self.added(0.5),
            "added_p99_us": self.added(0.99),
            "fds_before": self.fds_before,
            "fds_after": self.fds_after,
            "threads_before": self.threads_before,
            "threads_after": self.threads_after,
            "server_leftover_tasks": self.server_leftover_tasks,
            "upstream_closed": self.upstream_closed,
            "clean": self.clean,
            "correct": self.correct,
            "notes": self.notes,
        }


def expected_text(capture: Capture) -> str:
    """The answer's whole text: every text part of every event, in order."""
    out: list[str] = []
    for raw in capture.events:
        data = json.loads(raw.decode().removeprefix("data: "))
        for candidate in data.get("candidates", ()):
            for part in candidate.get("content", {}).get("parts", ()):
                if "text" in part and not part.get("thought"):
                    out.append(part["text"])
    return "".join(out)


class _Stamps:
    """When each upstream response's bytes came off the network, keyed by the request's marker.

    A marker ``#<n>#`` in the prompt reaches the upstream request body on both paths (the
    server translates the messages into ``contents``), so the client's chunks can be
    matched with the upstream bytes of the same request.
    """

    def __init__(self) -> None:
        self.by_marker: dict[str, list[tuple[int, int]]] = {}

    def transport(self, inner: Any) -> Any:
        import httpx

        stamps = self

        class Stream(httpx.AsyncByteStream):
            def __init__(self, inner: httpx.AsyncByteStream, log: list[tuple[int, int]]):
                self._inner, self._log = inner, log

            async def __aiter__(self) -> Any:
                total = 0
                async for piece in self._inner:
                    total += len(piece)
                    self._log.append((time.perf_counter_ns(), total))
                    yield piece

            async def aclose(self) -> None:
                await self._inner.aclose()

        class Transport(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
                match = _MARKER.search(request.content)
                response: httpx.Response = await inner.handle_async_request(request)
                if match is not None and isinstance(response.stream, httpx.AsyncByteStream):
                    log: list[tuple[int, int]] = []
                    stamps.by_marker[match.group(1).decode()] = log
                    response.stream = Stream(response.stream, log)
                return response

            async def aclose(self) -> None:
                await inner.aclose()

        return Transport()


_Once = tuple[str, str | None, bool, list[tuple[int, int]]]
"""One request's ``(text, finish_reason, [DONE] seen, [(arrival ns, text length so far)])``."""

_MARKER = re.compile(rb"#(\d+)#")


def _index(capture: Capture) -> tuple[dict[int, int], list[int]]:
    """``(cumulative text length after event i → i, body offset at the end of event i)``."""
    by_length: dict[int, int] = {}
    ends: list[int] = []
    length = offset = 0
    for i, raw in enumerate(capture.events):
        offset += len(raw)
        ends.append(offset)
        data = json.loads(raw.decode().removeprefix("data: "))
        for candidate in data.get("candidates", ()):
            for part in candidate.get("content", {}).get("parts", ()):
                if "text" in part and not part.get("thought"):
                    length += len(part["text"])
        by_length[length] = i
    return by_length, ends


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _threads() -> list[str]:
    return sorted(t.name for t in threading.enumerate())


class _Uvicorn:
    """``rxgem.server.create_app`` in uvicorn on its own event loop in a thread.

    Unlike ``uvicorn.Server.run`` (``asyncio.run``, which cancels what is left), the
    loop is inspected after ``serve()`` returns: :attr:`leftover` counts its tasks that
    are still pending then.
    """

    def __init__(self, upstream: str, stamps: _Stamps) -> None:
        import httpx
        import uvicorn

        from rxgem.server import ServerSettings, create_app

        settings = ServerSettings(
            upstream=upstream,
            api_key="bench-gemini-key",
            client_tokens=(TOKEN,),
            log_level="warning",  # no access line per request on stderr
        )
        self.app = create_app(settings)
        # The upstream client as rxgem.server.Upstream.client makes it (pool, timeouts),
        # with the stamping transport: a private attribute, set before the first request
        # so that the app never makes its own. Backpressure is the transport's flow gate.
        limits = httpx.Limits(
            max_connections=settings.max_upstream_connections,
            max_keepalive_connections=min(100, settings.max_upstream_connections),
        )
        inner = stamps.transport(httpx.AsyncHTTPTransport(limits=limits))
        self.app.state.upstream._client = httpx.AsyncClient(
            transport=inner,
            timeout=httpx.Timeout(settings.read_timeout, connect=settings.connect_timeout),
            follow_redirects=False,
        )
        config = uvicorn.Config(
            self.app,
            host="127.0.0.1",
            port=0,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="on",
            backlog=2048,
            timeout_graceful_shutdown=10,
        )
        self.server = uvicorn.Server(config)
        self.leftover = -1
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="bench-uvicorn", daemon=True)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self.server.serve())
            self.leftover = sum(1 for t in asyncio.all_tasks(loop) if not t.done())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        except BaseException as exc:  # reported by stop()
            self.error = exc
        finally:
            loop.close()

    @contextlib.contextmanager
    def running(self) -> Iterator[str]:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"uvicorn did not start ({self.error!r})")
            time.sleep(0.005)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            self.server.should_exit = True
            self.thread.join(30)
            if self.thread.is_alive():
                raise RuntimeError("uvicorn did not stop within 30 s")
            if self.error is not None:
                raise RuntimeError(f"uvicorn failed: {self.error!r}")


async def _drive(
    path: str,
    target: str,
    clients: int,
    seconds: float,
    capture: Capture,
    stamps: _Stamps,
) -> ServePhase:
    """``clients`` concurrent streaming clients, each repeating its request for ``seconds``."""
    import httpx

    import rxgem

    events = len(capture.events)
    expected = expected_text(capture)
    by_length, ends = _index(capture)
    phase = ServePhase(path, clients, seconds, events)
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    perf = time.perf_counter_ns
    # Every request asks for its connection to be closed after the response (both paths,
    # as measure.async_throughput does): with keep-alive, httpcore 1.0.x's pool scans every
    # pooled connection at each request's start and end (_assign_requests_to_connections,
    # is_idle), which at 200 busy connections costs ~8 ms a time and would be most of what
    # is measured. The server's own upstream pool is left as rxgem configures it.
    close = {"connection": "close"}
    headers = {"authorization": f"Bearer {TOKEN}", **close}
    url = f"{target}/v1/chat/completions"
    transport = httpx.AsyncHTTPTransport(limits=limits)
    if path == "direct":  # the library's own client: stamp its upstream bytes
        transport = stamps.transport(transport)
    serial = iter(range(1 << 62))

    def latencies(marker: str, arrivals: list[tuple[int, int]]) -> None:
        """Each content chunk's arrival − when its Gemini event's last byte came in."""
        log = stamps.by_marker.pop(marker, [])
        j = 0
        for t_chunk, length in arrivals:
            i = by_length.get(length)
            if i is None:
                continue
            while j < len(log) and log[j][1] < ends[i]:
                j += 1
            if j < len(log):
                phase.latency_us.append((t_chunk - log[j][0]) / 1000)

    async with httpx.AsyncClient(transport=transport, timeout=httpx.Timeout(120.0)) as client:

        async def direct_once(body: dict[str, Any]) -> _Once:
            parts: list[str] = []
            arrivals: list[tuple[int, int]] = []
            length = 0
            finish = None
            source = rxgem.chat_completions(
                body, base_url=target, api_key="bench", client=client, headers=close
            )
            async for chunk in rxgem.aiterate(source):
                assert isinstance(chunk, rxgem.ChatCompletionChunk)
                now = perf()
                phase.chunks += 1
                for choice in chunk.choices:
                    if choice.delta.content:
                        parts.append(choice.delta.content)
                        length += len(choice.delta.content)
                        arrivals.append((now, length))
                    if choice.finish_reason is not None:
                        finish = choice.finish_reason
            return "".join(parts), finish, True, arrivals

        async def server_once(body: dict[str, Any]) -> _Once:
            parts: list[str] = []
            arrivals: list[tuple[int, int]] = []
            length = 0
            finish = None
            done = False
            async with client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise RuntimeError(f"HTTP {response.status_code}: {response.text[:200]}")
                async for line in response.aiter_lines():
                    if not line.startswith("data: "):
                        continue
                    data = line[6:]
                    if data == "[DONE]":
                        done = True
                        continue
                    chunk = json.loads(data)
                    now = perf()
                    phase.chunks += 1
                    for choice in chunk["choices"]:
                        content = choice["delta"].get("content")
                        if content:
                            parts.append(content)
                            length += len(content)
                            arrivals.append((now, length))
                        if choice.get("finish_reason") is not None:
                            finish = choice["finish_reason"]
            return "".join(parts), finish, done, arrivals

        once = direct_once if path == "direct" else server_once
        deadline = time.perf_counter() + seconds
        deadline_ns = int(deadline * 1e9)

        async def one_client() -> None:
            while time.perf_counter() < deadline:
                marker = str(next(serial))
                prompt = [{"role": "user", "content": f"Write a long answer. #{marker}#"}]
                body = {"model": MODEL, "messages": prompt, "stream": True}
                start = perf()
                try:
                    got, finish, done, arrivals = await once(body)
                except Exception as exc:
                    stamps.by_marker.pop(marker, None)
                    phase.failed += 1
                    if len(phase.errors) < 5:
                        phase.errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                if arrivals:
                    phase.first_us.append((arrivals[0][0] - start) / 1000)
                latencies(marker, arrivals)
                phase.in_window += sum(1 for t, _ in arrivals if t <= deadline_ns)
                if got == expected and finish == "stop" and done:
                    phase.ok += 1
                else:
                    phase.wrong += 1
                    if len(phase.errors) < 5:
                        phase.errors.append(
                            f"wrong answer: {len(got)} of {len(expected)} characters,"
                            f" finish {finish!r}, [DONE] {done}"
                        )

        wall0, cpu0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(one_client() for _ in range(clients)))
        phase.wall_s = time.perf_counter() - wall0
        phase.cpu_s = time.process_time() - cpu0
    await asyncio.sleep(0)  # let closed connections' callbacks run
    me = asyncio.current_task()
    phase.leftover_tasks = sum(1 for t in asyncio.all_tasks() if t is not me and not t.done())
    return phase


def serve_benchmark(
    clients: int = 200,
    seconds: float = 3.0,
    events: int = 50,
    pause: float = 0.2,
    paced_events: int = 12,
) -> ServeResult:
    """Both paths, ``clients`` concurrent streams for ``seconds`` each, twice.

    Throughput: FakeGemini sends each answer as fast as it can; the loop is saturated.
    Latency: FakeGemini sends a ``paced_events``-event answer with ``pause`` s between
    events, so that both paths carry the same offered load (``clients ÷ pause`` events/s,
    1,000 by default: each event then travels alone, and the server path's CPU per event
    is about 3× the unpaced one, so 4,000/s saturated its one GIL on a 2-core VM) and
    the per-chunk latency is compared at equal load, below saturation.
    Each upstream (a FakeGemini child process) has its own server in front of it. A
    short warm-up of each path (``min(clients, 20)`` clients, 0.3 s) comes first and is
    not counted. CPU time is this whole process's (the clients, and for the server path
    also uvicorn's thread); the FakeGemini child's is not included.
    """
    captures = {0.0: text_answer(events), pause: text_answer(paced_events)}
    stamps = _Stamps()
    gc.collect()
    fds_before, threads_before = _fds(), _threads()
    phases: dict[tuple[str, float], ServePhase] = {}
    leftover = 0
    upstream_closed = True
    for wait, capture in captures.items():
        upstream = _Server(len(capture.events), wait)
        try:
            base = upstream.base_url
            uv = _Uvicorn(base, stamps)
            with uv.running() as url:
                for path, target in (("direct", base), ("server", url)):
                    if wait == 0.0:
                        warm = min(clients, 20)
                        asyncio.run(_drive(path, target, warm, 0.3, capture, stamps))
                    gc.collect()
                    phase = asyncio.run(_drive(path, target, clients, seconds, capture, stamps))
                    phase.pause_s = wait
                    phases[path, wait] = phase
            upstream_closed = upstream_closed and not uv.app.state.upstream.is_open
            leftover += uv.leftover
            del uv
        finally:
            upstream.close()
            if upstream.proc.stdout is not None:  # _Server.close leaves it to the GC
                upstream.proc.stdout.close()
            del upstream
    direct, server = phases["direct", 0.0], phases["server", 0.0]
    direct_paced, server_paced = phases["direct", pause], phases["server", pause]
    # fds and threads settle once the child's pipes and the sockets are collected
    gc.collect()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (_fds() > fds_before or _threads() != threads_before):
        time.sleep(0.05)
        gc.collect()
    result = ServeResult(
        direct=direct,
        server=server,
        direct_paced=direct_paced,
        server_paced=server_paced,
        fds_before=fds_before,
        fds_after=_fds(),
        threads_before=threads_before,
        threads_after=_threads(),
        server_leftover_tasks=leftover,
        upstream_closed=upstream_closed,
    )
    for phase in result.phases:
        if phase.failed or phase.wrong:
            result.notes.append(
                f"{phase.path}: {phase.failed} failed, {phase.wrong} wrong"
                f" ({phase.errors[0] if phase.errors else '?'})"
            )
    if not result.clean:
        result.notes.append(
            f"leak check: fds {fds_before} → {result.fds_after}, threads"
            f" {threads_before} → {result.threads_after}, pending tasks server loop {leftover},"
            f" client loops {[p.leftover_tasks for p in result.phases]},"
            " upstream client"
            f" {'closed' if upstream_closed else 'OPEN'}"
        )
    return result
