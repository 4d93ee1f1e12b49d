"""The serve benchmark's load generator, run as its own process.

``python -m benchmarks._load --url http://127.0.0.1:PORT --clients C --seconds S`` runs ``C``
concurrent streaming clients on one event loop (uvloop when it is installed, else asyncio's
own), each repeating its request until ``S`` seconds are up (finishing the answer it is in),
and prints one JSON object on stdout.

The HTTP/1.1 client is written on raw ``asyncio.Protocol`` connections (one kept-alive
connection per client: requests are written as bytes, the response head parsed by hand,
chunked transfer decoding and SSE splitting on the bytes as they arrive), not ``httpx``:
``httpx``/``httpcore``/``h11`` cost tens of µs per chunk and per request in Python, and the
generator shares a 2-core machine with the server and the upstream; the less CPU it needs per
chunk, the more of what is measured is the server. Its own CPU time is in the output
(``cpu_s``): a generator near one core (``cpu_s / wall_s`` → 1) is the limit, not the server.

Two request kinds (``--api``):

- ``openai`` (default): ``POST /v1/chat/completions`` with ``"stream": true``, a bearer token,
  every ``data:`` payload decoded with ``json.loads``; an answer is correct when its content
  deltas join to the capture's whole text, its ``finish_reason`` is ``stop`` and it ends with
  ``data: [DONE]``;
- ``gemini``: ``POST /v1beta/models/MODEL:streamGenerateContent?alt=sse`` straight to the
  upstream (the "direct" baseline), every event decoded with ``json.loads``; correct when its
  text parts join to the whole text and the last ``finishReason`` is ``STOP``.

The prompt of every request carries a serial number ``#n#`` (so that no cache could answer).
Per answer, each Gemini event of the capture is given the arrival time of the first content
chunk that completes its text (cumulative length of the text received ≥ the text up to the
end of that event: robust to a server splitting or merging events); with ``--offsets`` these
per-event offsets from the request's start (µs) are in the output, for the paced runs' added
latency. The time to the first content chunk is always there (``first_us``).

The measured window runs from ``--record-after`` (0) to ``--seconds`` after the start:
``in_window`` counts the content chunks that arrived in it, and only the answers started in it
are timed (``first_us``, ``offsets``; every answer is checked). ``--watch NAME=PID``
(repeatable) reads that process tree's CPU time (``/proc/PID/stat``, utime + stime of it and
its live descendants, plus its reaped children's) at the window's start and end
(``window_cpu_s``; the generator's own in ``window_cpu_s`` at the top level) and over the whole
run (``cpu_s``), and samples its resident memory (``VmRSS`` summed over the tree) every 0.2 s
(``rss_peak``) and at the end.

``--stagger S`` spreads the clients' first requests evenly over ``S`` seconds (the paced runs:
otherwise every stream's event ``i`` would arrive in the same instant).

``--quick-ack``: each response's head is acknowledged at once (``TCP_QUICKACK``), so that
an upstream with Nagle's algorithm on (``--serve-upstream plain``) sends its body without
waiting for the delayed ACK (the direct rows there).

``--hold H``: every client sends one request only; once every stream has delivered its first
content chunk the generator waits ``H`` s, samples the watched trees' memory
(``rss_open``), then closes every connection (the open-streams memory run, and the warm-ups).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import resource
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from .captures import MODEL, text_answer

__all__ = ["ProcTree", "expected_text", "raise_nofile", "tree_cpu", "tree_pids", "tree_rss"]

_TICK = os.sysconf("SC_CLK_TCK")


# --------------------------------------------------------------------------- /proc


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its live descendants (``/proc/PID/task/TID/children``)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{current}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
            except OSError:
                pass
    return out


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            raw = f.read()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()  # fields from the 3rd (state) on


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of ``pid``, its live descendants and its reaped children."""
    total = 0
    for number, current in enumerate(tree_pids(pid)):
        fields = _stat(current)
        if fields is None:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
        if number == 0:
            total += int(fields[13]) + int(fields[14])  # cutime, cstime (waited-for children)
    return total / _TICK


def tree_rss(pid: int) -> int:
    """Resident memory of ``pid`` and its live descendants, bytes (sum of ``VmRSS``)."""
    total = 0
    for current in tree_pids(pid):
        try:
            with open(f"/proc/{current}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            pass
    return total


@dataclass
class ProcTree:
    name: str
    pid: int
    cpu0: float = 0.0
    cpu_s: float = 0.0
    window_cpu: list[float] = field(default_factory=list)  # at the window's start and end
    rss_peak: int = 0
    rss_end: int = 0
    rss_open: int = 0

    def start(self) -> None:
        self.cpu0 = tree_cpu(self.pid)
        self.rss_peak = tree_rss(self.pid)

    def sample(self) -> int:
        rss = tree_rss(self.pid)
        self.rss_peak = max(self.rss_peak, rss)
        return rss

    def stop(self) -> None:
        self.cpu_s = tree_cpu(self.pid) - self.cpu0
        self.rss_end = self.sample()

    def to_json(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "cpu_s": self.cpu_s,
            "window_cpu_s": (
                self.window_cpu[1] - self.window_cpu[0] if len(self.window_cpu) == 2 else None
            ),
            "rss_peak": self.rss_peak,
            "rss_end": self.rss_end,
            "rss_open": self.rss_open,
        }


def raise_nofile() -> int:
    """Raise this process's open-files limit to its hard limit; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass
    return soft


# --------------------------------------------------------------------------- the capture


def expected_text(events: list[bytes] | tuple[bytes, ...]) -> tuple[str, list[int]]:
    """The answer's whole text, and the text's length at the end of each event that adds text."""
    out: list[str] = []
    ends: list[int] = []
    length = 0
    for raw in events:
        data = json.loads(raw.decode().removeprefix("data: "))
        added = 0
        for candidate in data.get("candidates", ()):
            for part in candidate.get("content", {}).get("parts", ()):
                if "text" in part and not part.get("thought"):
                    out.append(part["text"])
                    added += len(part["text"])
        if added:
            length += added
            ends.append(length)
    return "".join(out), ends


# --------------------------------------------------------------------------- the client


class _Failure(Exception):
    pass


class _Answer:
    """One request's response being read: HTTP head, chunked body, SSE events."""

    __slots__ = (
        "api",
        "body_left",
        "chunked",
        "close",
        "done",
        "error_body",
        "finish",
        "future",
        "head",
        "length",
        "lengths",
        "parts",
        "sse",
        "status",
        "stop_after_first",
        "times",
    )

    def __init__(self, api: str, future: asyncio.Future[None], stop_after_first: bool) -> None:
        self.api = api
        self.future = future
        self.head = True
        self.status = 0
        self.chunked = False
        self.body_left = -1  # Content-Length bodies
        self.close = False
        self.sse = b""
        self.parts: list[str] = []
        self.times: list[int] = []  # arrival ns of each content chunk
        self.lengths: list[int] = []  # cumulative text length after it
        self.length = 0
        self.finish: str | None = None
        self.done = False
        self.stop_after_first = stop_after_first
        self.error_body = b""


class _Connection(asyncio.Protocol):
    def __init__(self, loop: asyncio.AbstractEventLoop, quick_ack: bool = False) -> None:
        self.loop = loop
        self.quick_ack = quick_ack
        self.transport: Any = None  # asyncio's or uvloop's TCP transport
        self.buf = b""
        self.answer: _Answer | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        answer = self.answer
        if answer is not None and not answer.future.done():
            if answer.body_left == -2:  # body delimited by the close
                answer.future.set_result(None)
            else:
                answer.future.set_exception(_Failure(f"connection lost ({exc!r})"))

    def data_received(self, data: bytes) -> None:
        answer = self.answer
        if answer is None:
            return
        try:
            self._received(answer, data)
        except Exception as exc:  # a malformed response: fail this answer, drop the connection
            raise_later(answer, f"bad response: {type(exc).__name__}: {exc}")
            answer.close = True

    def _received(self, answer: _Answer, data: bytes) -> None:
        now = time.perf_counter_ns()
        buf = self.buf + data if self.buf else data
        if answer.head:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self.buf = buf
                return
            lines = buf[:end].decode("latin-1").split("\r\n")
            answer.status = int(lines[0].split(" ", 2)[1])
            for line in lines[1:]:
                name, _, value = line.partition(":")
                name = name.strip().lower()
                value = value.strip().lower()
                if name == "transfer-encoding" and "chunked" in value:
                    answer.chunked = True
                elif name == "content-length":
                    answer.body_left = int(value)
                elif name == "connection" and "close" in value:
                    answer.close = True
            if not answer.chunked and answer.body_left < 0:
                answer.body_left = -2
                answer.close = True
            answer.head = False
            buf = buf[end + 4 :]
            if self.quick_ack and self.transport is not None:
                with contextlib.suppress(OSError):  # the body a Nagle upstream holds back
                    sock = self.transport.get_extra_info("socket")
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        if answer.chunked:
            pos = 0
            size_end = buf.find(b"\r\n", pos)
            while size_end >= 0:
                size = int(buf[pos:size_end].split(b";", 1)[0], 16)
                if len(buf) < size_end + 2 + size + 2:
                    break
                start = size_end + 2
                if size == 0:
                    self.buf = b""
                    self._finished(answer)
                    return
                self._body(answer, buf[start : start + size], now)
                pos = start + size + 2
                size_end = buf.find(b"\r\n", pos)
            self.buf = buf[pos:]
        else:
            self.buf = b""
            if answer.body_left >= 0:
                piece = buf[: answer.body_left]
                answer.body_left -= len(piece)
                self._body(answer, piece, now)
                if answer.body_left == 0:
                    self._finished(answer)
            elif buf:
                self._body(answer, buf, now)
        if (
            answer.stop_after_first
            and answer.times
            and not answer.future.done()
            and self.transport is not None
        ):
            answer.close = True
            answer.future.set_result(None)

    def _finished(self, answer: _Answer) -> None:
        if answer.sse.strip():
            self._events(answer, answer.sse + b"\n\n", time.perf_counter_ns())
        if answer.api == "gemini" and answer.status == 200:
            answer.done = True  # Gemini's stream has no [DONE]: its end is the body's
        if not answer.future.done():
            answer.future.set_result(None)

    def _body(self, answer: _Answer, piece: bytes, now: int) -> None:
        if answer.status != 200:
            answer.error_body += piece
            return
        sse = answer.sse + piece if answer.sse else piece
        if b"\r" in sse:
            if sse.endswith(b"\r"):  # a CRLF split between two pieces
                answer.sse = sse
                return
            sse = sse.replace(b"\r\n", b"\n")
        end = sse.rfind(b"\n\n")
        if end < 0:
            answer.sse = sse
            return
        answer.sse = sse[end + 2 :]
        self._events(answer, sse[:end], now)

    def _events(self, answer: _Answer, block: bytes, now: int) -> None:
        for event in block.split(b"\n\n"):
            data = b"\n".join(
                line[5:].removeprefix(b" ")
                for line in event.split(b"\n")
                if line.startswith(b"data:")
            )
            if not data:
                continue  # a comment (keep-alive) or a blank event
            if answer.api == "openai":
                if data == b"[DONE]":
                    answer.done = True
                    continue
                obj = json.loads(data)
                if "error" in obj:
                    raise_later(answer, f"error event: {data[:200]!r}")
                    continue
                for choice in obj.get("choices", ()):
                    content = (choice.get("delta") or {}).get("content")
                    if content:
                        answer.parts.append(content)
                        answer.length += len(content)
                        answer.times.append(now)
                        answer.lengths.append(answer.length)
                    if choice.get("finish_reason") is not None:
                        answer.finish = choice["finish_reason"]
            else:
                obj = json.loads(data)
                added = 0
                for candidate in obj.get("candidates", ()):
                    for part in (candidate.get("content") or {}).get("parts", ()):
                        text = part.get("text")
                        if text and not part.get("thought"):
                            answer.parts.append(text)
                            added += len(text)
                    if candidate.get("finishReason"):
                        answer.finish = candidate["finishReason"].lower()
                if added:
                    answer.length += added
                    answer.times.append(now)
                    answer.lengths.append(answer.length)


def raise_later(answer: _Answer, message: str) -> None:
    if not answer.future.done():
        answer.future.set_exception(_Failure(message))


@dataclass
class Outcome:
    ok: int = 0
    failed: int = 0
    wrong: int = 0
    errors: list[str] = field(default_factory=list)
    chunks: int = 0  # content chunks of every answer (complete or not)
    in_window: int = 0  # content chunks that arrived within the measured window
    first_us: list[int] = field(default_factory=list)
    offsets: list[list[int]] = field(default_factory=list)
    opened: int = 0  # streams that delivered a first content chunk (--hold)
    open_s: float = 0.0  # load start → every stream open (--hold)

    def error(self, message: str) -> None:
        if len(self.errors) < 5:
            self.errors.append(message)


class Load:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        capture = text_answer(args.events)
        self.expected, self.ends = expected_text(capture.events)
        host = args.url.split("://", 1)[1].split("/", 1)[0]
        self.host, port = host.rsplit(":", 1)
        self.port = int(port)
        self.prefix = args.url.split("://", 1)[1][len(host) :].rstrip("/")
        self.outcome = Outcome()
        self.serial = 0
        self.window_ns = (0, 0)

    def request(self) -> bytes:
        self.serial += 1
        prompt = f"Write a long answer. #{self.serial}#"
        if self.args.api == "openai":
            body = json.dumps(
                {
                    "model": MODEL,
                    "messages": [{"role": "user", "content": prompt}],
                    "stream": True,
                }
            ).encode()
            target = f"{self.prefix}/v1/chat/completions"
            auth = f"Authorization: Bearer {self.args.token}\r\n"
        else:
            contents = [{"role": "user", "parts": [{"text": prompt}]}]
            body = json.dumps({"contents": contents}).encode()
            target = f"{self.prefix}/v1beta/models/{MODEL}:streamGenerateContent?alt=sse"
            auth = f"x-goog-api-key: {self.args.token}\r\n"
        head = (
            f"POST {target} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n{auth}"
            "Content-Type: application/json\r\nAccept: text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body

    async def connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        quick = self.args.quick_ack
        _, protocol = await loop.create_connection(
            lambda: _Connection(loop, quick), self.host, self.port
        )
        return protocol

    async def once(
        self, conn: _Connection | None, stop_after_first: bool
    ) -> tuple[_Connection | None, _Answer]:
        """One request on ``conn`` (or a new connection); the connection to reuse, if any."""
        loop = asyncio.get_running_loop()
        if conn is None or conn.lost:
            conn = await self.connect()
        answer = _Answer(self.args.api, loop.create_future(), stop_after_first)
        conn.answer = answer
        conn.buf = b""
        assert conn.transport is not None
        conn.transport.write(self.request())
        try:
            await asyncio.wait_for(answer.future, self.args.timeout)
        except BaseException:
            if conn.transport is not None:
                conn.transport.abort()
            raise
        finally:
            conn.answer = None
        if answer.close or conn.lost:
            if conn.transport is not None:
                conn.transport.close()
            return None, answer
        return conn, answer

    def check(self, answer: _Answer, start: int) -> None:
        out = self.outcome
        times = answer.times
        out.chunks += len(times)
        low, high = self.window_ns
        out.in_window += sum(1 for t in times if low <= t <= high)
        recorded = start >= low  # answers started in the ramp are checked, not timed
        if times and recorded:
            out.first_us.append((times[0] - start) // 1000)
        if answer.status != 200:
            out.failed += 1
            out.error(f"HTTP {answer.status}: {answer.error_body[:200]!r}")
            return
        text = "".join(answer.parts)
        finish_ok = answer.finish == "stop"
        if text == self.expected and finish_ok and answer.done:
            out.ok += 1
        else:
            out.wrong += 1
            out.error(
                f"wrong answer: {len(text)} of {len(self.expected)} characters"
                f" ({'same prefix' if self.expected.startswith(text) else 'different text'}),"
                f" finish {answer.finish!r}, [DONE] {answer.done}"
            )
        if self.args.offsets and recorded:
            out.offsets.append(self.event_offsets(answer, start))

    def event_offsets(self, answer: _Answer, start: int) -> list[int]:
        """Per event of the capture (those with text): µs from ``start`` to its text's arrival."""
        offsets: list[int] = []
        j = 0
        lengths, times = answer.lengths, answer.times
        for end in self.ends:
            while j < len(lengths) and lengths[j] < end:
                j += 1
            if j == len(lengths):
                break
            offsets.append((times[j] - start) // 1000)
        return offsets

    async def client(self, index: int, deadline: float) -> None:
        conn: _Connection | None = None
        perf = time.perf_counter_ns
        await self.stagger(index)
        try:
            first = True
            while first or time.perf_counter() < deadline:  # one request at least
                first = False
                start = perf()
                try:
                    conn, answer = await self.once(conn, False)
                except (OSError, _Failure, TimeoutError, ValueError) as exc:
                    self.outcome.failed += 1
                    self.outcome.error(f"{type(exc).__name__}: {exc}")
                    conn = None  # closed by once()
                    continue
                self.check(answer, start)
        finally:
            if conn is not None and conn.transport is not None:
                conn.transport.close()

    async def stagger(self, index: int) -> None:
        """Spread the clients' first requests evenly over ``--stagger`` seconds."""
        if self.args.stagger > 0:
            await asyncio.sleep(index * self.args.stagger / self.args.clients)

    async def hold_client(self, index: int, opened: asyncio.Event, release: asyncio.Event) -> None:
        """One request, read until its first content chunk, held open until ``release``."""
        loop = asyncio.get_running_loop()
        out = self.outcome
        await self.stagger(index)
        start = time.perf_counter_ns()
        conn: _Connection | None = None
        try:
            conn = await self.connect()
            answer = _Answer(self.args.api, loop.create_future(), True)
            conn.answer = answer
            assert conn.transport is not None
            conn.transport.write(self.request())
            await asyncio.wait_for(answer.future, self.args.timeout)
        except (OSError, _Failure, TimeoutError, ValueError) as exc:
            if conn is not None and conn.transport is not None:
                conn.transport.abort()
            out.failed += 1
            out.error(f"{type(exc).__name__}: {exc}")
            self._count_open(opened)
            return
        conn.answer = None  # read and drop the rest of the stream from here on
        if answer.status != 200 or not answer.times:
            out.failed += 1
            out.error(f"HTTP {answer.status}: {answer.error_body[:200]!r}")
        else:
            out.opened += 1
            out.first_us.append((answer.times[0] - start) // 1000)
        self._count_open(opened)
        await release.wait()
        assert conn.transport is not None
        conn.transport.abort()

    def _count_open(self, opened: asyncio.Event) -> None:
        self._settled += 1
        if self._settled == self.args.clients:
            opened.set()

    async def run(self) -> dict[str, Any]:
        args = self.args
        watched = [ProcTree(name, pid) for name, pid in args.watch]
        gc.collect()
        for tree in watched:
            tree.start()
        stop_sampling = asyncio.Event()

        async def sampler() -> None:
            while not stop_sampling.is_set():
                for tree in watched:
                    tree.sample()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop_sampling.wait(), 0.2)

        sampling = asyncio.ensure_future(sampler()) if watched else None
        wall0, cpu0 = time.perf_counter(), time.process_time()
        window_cpu: list[float] = []
        window_wall: list[float] = []
        if args.hold is None:
            deadline = wall0 + args.seconds
            begin = wall0 + args.record_after
            self.window_ns = (int(begin * 1e9), int(deadline * 1e9))

            async def mark(at: float) -> None:
                await asyncio.sleep(max(0.0, at - time.perf_counter()))
                window_wall.append(time.perf_counter())
                window_cpu.append(time.process_time())
                for tree in watched:
                    tree.window_cpu.append(tree_cpu(tree.pid))

            marks = asyncio.ensure_future(asyncio.gather(mark(begin), mark(deadline)))
            await asyncio.gather(*(self.client(i, deadline) for i in range(args.clients)))
            await marks
        else:
            self._settled = 0
            opened, release = asyncio.Event(), asyncio.Event()
            tasks = [
                asyncio.ensure_future(self.hold_client(i, opened, release))
                for i in range(args.clients)
            ]
            await opened.wait()
            self.outcome.open_s = time.perf_counter() - wall0
            await asyncio.sleep(args.hold)
            for tree in watched:
                tree.rss_open = tree.sample()
            release.set()
            await asyncio.gather(*tasks)
        wall = time.perf_counter() - wall0
        cpu = time.process_time() - cpu0
        stop_sampling.set()
        if sampling is not None:
            await sampling
        await asyncio.sleep(0.05)  # let the closed connections' callbacks run
        for tree in watched:
            tree.stop()
        out = self.outcome
        return {
            "api": args.api,
            "clients": args.clients,
            "seconds": args.seconds,
            "events": args.events,
            "expected_chars": len(self.expected),
            "text_events": len(self.ends),
            "loop": type(asyncio.get_running_loop()).__module__.split(".")[0],
            "nofile": raise_nofile(),
            "ok": out.ok,
            "failed": out.failed,
            "wrong": out.wrong,
            "errors": out.errors,
            "chunks": out.chunks,
            "in_window": out.in_window,
            "wall_s": wall,
            "cpu_s": cpu,
            "record_after": args.record_after,
            "window_s": window_wall[1] - window_wall[0] if len(window_wall) == 2 else None,
            "window_cpu_s": window_cpu[1] - window_cpu[0] if len(window_cpu) == 2 else None,
            "first_us": out.first_us,
            "offsets": out.offsets,
            "opened": out.opened,
            "open_s": out.open_s,
            "watched": {tree.name: tree.to_json() for tree in watched},
        }


def _watch(value: str) -> tuple[str, int]:
    name, _, pid = value.partition("=")
    return name, int(pid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._load")
    parser.add_argument("--url", required=True, help="http://HOST:PORT[/prefix]")
    parser.add_argument("--api", choices=("openai", "gemini"), default="openai")
    parser.add_argument("--token", default="", help="bearer token (openai) or API key (gemini)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--events", type=int, default=50, help="the capture's events")
    parser.add_argument("--offsets", action="store_true", help="per-event arrival offsets")
    parser.add_argument("--hold", type=float, help="open every stream once, hold H s, close")
    parser.add_argument(
        "--stagger", type=float, default=0.0, help="spread the first requests over S seconds"
    )
    parser.add_argument(
        "--record-after",
        type=float,
        default=0.0,
        metavar="T",
        help="the measured window starts T s into the run (after a ramp); answers started"
        " before it are checked but not timed",
    )
    parser.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    parser.add_argument(
        "--quick-ack",
        action="store_true",
        help="acknowledge each response's head at once (TCP_QUICKACK): against an upstream"
        " with Nagle's algorithm on, the body would wait for the delayed ACK",
    )
    parser.add_argument("--watch", type=_watch, action="append", default=[], metavar="NAME=PID")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    args = parser.parse_args(argv)
    raise_nofile()
    load = Load(args)
    if args.loop == "uvloop":
        try:
            import uvloop
        except ImportError:
            args.loop = "asyncio"
    run = uvloop.run if args.loop == "uvloop" else asyncio.run
    result = run(load.run())
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
