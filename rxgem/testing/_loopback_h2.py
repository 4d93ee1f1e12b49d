"""A loopback HTTP/2 server for tests: cleartext HTTP/2 with prior knowledge (h2c), on ``h2``.

What to answer is up to the ``handle`` coroutine given to :class:`LoopbackH2Server`;
this module knows nothing about Gemini. It needs the ``h2`` package (``pip install
'rxgem[http2]'``, which also lets ``httpx`` speak HTTP/2); importing it without ``h2``
raises ``ImportError``.

Design notes:

* One thread runs an asyncio loop: the listener, every connection (an
  ``asyncio.Protocol`` around an ``h2`` state machine) and one task per request
  stream, so a thousand streams on one connection cost a thousand tasks, not threads.
* Clients speak first (the connection preface): no TLS, no ALPN, no ``Upgrade:``
  (``httpx.AsyncClient(http2=True, http1=False)`` does exactly this over ``http://``).
* The server allows ``max_streams`` concurrent streams (default 1,000) and opens wide
  receive windows, acknowledging request bodies as they arrive; it sends within the
  client's flow-control windows and waits for ``WINDOW_UPDATE`` when they are used up,
  and stops writing while the socket's send buffer is full.
* Output of all streams is written once per loop iteration (one ``write`` for the
  frames of many streams).
* A stream reset by the client (``RST_STREAM``, what httpx sends when a response is
  closed early) or a connection that goes away makes the handler's next (or current)
  :meth:`H2Stream.send` or :meth:`H2Stream.idle` raise :class:`ClientGone` at once;
  the other streams of the connection go on. ``close()`` makes them raise
  :class:`ServerClosing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Final, Literal

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings

from ._http_wire import Request
from ._loopback_http import ClientGone, ListeningServer, ServerClosing

__all__ = ["ClientGone", "H2Handler", "H2Stream", "LoopbackH2Server", "ServerClosing"]

_log = logging.getLogger(__name__)

_WINDOW: Final = 1 << 24
"""The receive window opened to the client, per stream and for the connection."""

H2Handler = Callable[["H2Stream", Request], Awaitable[None]]
"""Answers one request on its stream (a coroutine function)."""


class H2Stream:
    """One request stream, as the handler answers it.

    :meth:`respond` sends the status and headers, :meth:`send` body bytes within the
    flow-control windows (``end=True`` ends the stream), :meth:`idle` waits, and
    :meth:`reset` ends the stream abruptly. Each raises :class:`ClientGone` once the
    client reset the stream or went away, and :class:`ServerClosing` once the server
    is closing.
    """

    def __init__(self, conn: _H2Connection, stream_id: int) -> None:
        self._conn = conn
        self.stream_id = stream_id
        self.gone = False
        self._waiter: asyncio.Future[None] | None = None

    @property
    def closing(self) -> bool:
        """Whether the server is closing."""
        return self._conn.server.closing

    def _check(self) -> None:
        if self._conn.server.closing:
            raise ServerClosing
        if self.gone or self._conn.lost:
            raise ClientGone

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def _wait(self, timeout: float | None) -> None:
        """Wait until woken (window, reset, connection lost, closing) or ``timeout``."""
        loop = self._conn.loop
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        timer = None if timeout is None else loop.call_later(timeout, _resolve, waiter)
        try:
            await waiter
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    async def respond(self, status: int, headers: Mapping[str, str], *, end: bool = False) -> None:
        """Send the response head (``end``: with no body)."""
        self._check()
        fields = [(":status", str(status))]
        fields += [(name.lower(), value) for name, value in headers.items()]
        try:
            self._conn.h2.send_headers(self.stream_id, fields, end_stream=end)
        except h2.exceptions.StreamClosedError:
            raise ClientGone from None
        self._conn.flush_soon()

    async def send(self, data: bytes, *, end: bool = False) -> None:
        """Send ``data`` as DATA frames, waiting for window when needed; ``end`` ends the stream."""
        conn = self._conn
        state = conn.h2
        view = memoryview(data)
        while True:
            self._check()
            if conn.paused:
                await self._wait(None)
                continue
            try:
                if not view:
                    if end:
                        state.end_stream(self.stream_id)
                        conn.flush_soon()
                    return
                size = min(
                    len(view),
                    state.local_flow_control_window(self.stream_id),
                    state.max_outbound_frame_size,
                )
                if size <= 0:
                    await self._wait(None)
                    continue
                last = size == len(view)
                state.send_data(self.stream_id, bytes(view[:size]), end_stream=end and last)
            except h2.exceptions.StreamClosedError:
                raise ClientGone from None
            conn.flush_soon()
            if last:
                return
            view = view[size:]

    async def idle(
        self, seconds: float, *, every: float | None = None, heartbeat: bytes = b""
    ) -> None:
        """Wait ``seconds``; with ``every``, send ``heartbeat`` as DATA that often meanwhile."""
        loop = self._conn.loop
        deadline = loop.time() + seconds
        next_beat = None if every is None else loop.time() + every
        while True:
            self._check()
            now = loop.time()
            if now >= deadline:
                return
            if next_beat is not None and every is not None and now >= next_beat:
                await self.send(heartbeat)
                next_beat += every
                continue
            until = deadline if next_beat is None else min(deadline, next_beat)
            await self._wait(until - now)

    def reset(self) -> None:
        """End the stream abruptly (``RST_STREAM`` with ``INTERNAL_ERROR``)."""
        with contextlib.suppress(h2.exceptions.StreamClosedError):
            self._conn.h2.reset_stream(self.stream_id, h2.errors.ErrorCodes.INTERNAL_ERROR)
        self.gone = True
        self._conn.flush_soon()


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class _Incoming:
    """A request still arriving: its header fields and body so far."""

    __slots__ = ("body", "headers")

    def __init__(self, headers: list[tuple[str, str]]) -> None:
        self.headers = headers
        self.body = bytearray()


class _H2Connection(asyncio.Protocol):
    """One client connection: the ``h2`` state machine, its streams and their tasks."""

    def __init__(self, server: LoopbackH2Server, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.loop = loop
        config = h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        self.h2 = h2.connection.H2Connection(config=config)
        self.transport: asyncio.Transport | None = None
        self.incoming: dict[int, _Incoming] = {}
        self.streams: dict[int, H2Stream] = {}
        self.paused = False
        self.lost = False
        self._flush_scheduled = False

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections.add(self)
        codes = h2.settings.SettingCodes
        self.h2.local_settings = h2.settings.Settings(
            client=False,
            initial_values={
                codes.MAX_CONCURRENT_STREAMS: self.server.max_streams,
                codes.INITIAL_WINDOW_SIZE: _WINDOW,
                codes.MAX_HEADER_LIST_SIZE: 65536,
            },
        )
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(_WINDOW)
        self.flush()

    def data_received(self, data: bytes) -> None:
        try:
            events = self.h2.receive_data(data)
        except h2.exceptions.ProtocolError:
            self.flush()
            self.abort()
            return
        for event in events:
            self._dispatch(event)
        self.flush()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.server.connections.discard(self)
        for stream in self.streams.values():
            stream._wake()

    def pause_writing(self) -> None:
        self.paused = True

    def resume_writing(self) -> None:
        self.paused = False
        self.wake_all()

    # -- output

    def flush(self) -> None:
        """Write what the state machine has to send."""
        self._flush_scheduled = False
        data = self.h2.data_to_send()
        if data and self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def flush_soon(self) -> None:
        """Write at the end of this loop iteration (one write for many streams' frames)."""
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self.flush)

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    def wake_all(self) -> None:
        for stream in list(self.streams.values()):
            stream._wake()

    # -- events

    def _dispatch(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            assert event.stream_id is not None
            headers = [(str(k), str(v)) for k, v in event.headers or ()]
            self.incoming[event.stream_id] = _Incoming(headers)
        elif isinstance(event, h2.events.DataReceived):
            assert event.stream_id is not None
            incoming = self.incoming.get(event.stream_id)
            if incoming is not None and event.data:
                incoming.body += event.data
            if event.flow_controlled_length:
                with contextlib.suppress(h2.exceptions.StreamClosedError):
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            assert event.stream_id is not None
            incoming = self.incoming.pop(event.stream_id, None)
            if incoming is not None:
                self._start(event.stream_id, incoming)
        elif isinstance(event, h2.events.StreamReset):
            assert event.stream_id is not None
            self.incoming.pop(event.stream_id, None)
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                stream.gone = True
                stream._wake()
        elif isinstance(event, h2.events.WindowUpdated):
            if not event.stream_id:
                self.wake_all()
            else:
                stream = self.streams.get(event.stream_id)
                if stream is not None:
                    stream._wake()
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            self.wake_all()
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.flush()
            if self.transport is not None:
                self.transport.close()

    def _start(self, stream_id: int, incoming: _Incoming) -> None:
        pseudo = {name: value for name, value in incoming.headers if name.startswith(":")}
        headers: dict[str, str] = {}
        if ":authority" in pseudo:
            headers["host"] = pseudo[":authority"]
        for name, value in incoming.headers:
            if not name.startswith(":"):
                key = name.lower()
                headers[key] = f"{headers[key]}, {value}" if key in headers else value
        request = Request(
            pseudo.get(":method", "GET"),
            pseudo.get(":path", "/"),
            "HTTP/2",
            headers,
            bytes(incoming.body),
        )
        stream = H2Stream(self, stream_id)
        self.streams[stream_id] = stream
        task = self.loop.create_task(self._run(stream, request))
        self.server.tasks.add(task)
        task.add_done_callback(self.server.tasks.discard)

    async def _run(self, stream: H2Stream, request: Request) -> None:
        try:
            await self.server.handle(stream, request)
        except (ClientGone, ServerClosing):
            pass
        except Exception:
            _log.exception(
                "%s: the handler failed on stream %d", self.server.name, stream.stream_id
            )
            stream.reset()
        finally:
            del self.streams[stream.stream_id]


class LoopbackH2Server(ListeningServer):
    """An h2c server (HTTP/2 with prior knowledge) on an ephemeral port of 127.0.0.1.

    The interface of :class:`~rxgem.testing._loopback_http.LoopbackServer`: ``start()``,
    ``close()``, ``port``, ``bound_port``, ``state``, ``closing``.

    Args:
        handle: Answers each request on its stream (see :data:`H2Handler`).
        name: Used in the thread's name and in log messages.
        backlog: The listen queue.
        max_streams: ``SETTINGS_MAX_CONCURRENT_STREAMS`` (per connection).
    """

    def __init__(
        self, handle: H2Handler, *, name: str, backlog: int = 128, max_streams: int = 1000
    ) -> None:
        self.handle = handle
        self.name = name
        self.backlog = backlog
        self.max_streams = max_streams
        self.connections: set[_H2Connection] = set()
        self.tasks: set[asyncio.Task[None]] = set()
        self._lock = threading.Lock()
        self._state: Literal["new", "running", "closed"] = "new"
        self._closing = False
        self._port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stop: asyncio.Future[None] | None = None

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called on a running server."""
        return self._closing

    def start(self) -> None:
        """Bind an ephemeral port on 127.0.0.1 and start serving (no-op if running)."""
        with self._lock:
            if self._state == "closed":
                raise RuntimeError(f"{self.name} was closed; create a new one")
            if self._state == "running":
                return
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                listener.bind(("127.0.0.1", 0))
                listener.listen(self.backlog)
                listener.setblocking(False)
            except BaseException:
                listener.close()
                raise
            self._port = listener.getsockname()[1]
            loop = asyncio.new_event_loop()
            ready = threading.Event()
            self._loop = loop
            self._thread = threading.Thread(
                target=self._serve,
                args=(loop, listener, ready),
                name=f"{self.name}-{self._port}-h2",
                daemon=True,
            )
            self._thread.start()
            ready.wait()
            self._state = "running"

    def close(self) -> None:
        """Stop serving, end every stream and connection, and join the thread. Idempotent."""
        with self._lock:
            if self._state != "running":
                self._state = "closed"
                return
            self._state = "closed"
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            raise AssertionError("unreachable: running without a loop")
        loop.call_soon_threadsafe(self._begin_close)
        thread.join()

    def _begin_close(self) -> None:
        self._closing = True
        if self._stop is not None and not self._stop.done():
            self._stop.set_result(None)

    def _serve(
        self, loop: asyncio.AbstractEventLoop, listener: socket.socket, ready: threading.Event
    ) -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._main(loop, listener, ready))
        finally:
            ready.set()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _main(
        self, loop: asyncio.AbstractEventLoop, listener: socket.socket, ready: threading.Event
    ) -> None:
        self._stop = loop.create_future()
        server = await loop.create_server(
            lambda: _H2Connection(self, loop), sock=listener, backlog=self.backlog
        )
        ready.set()
        try:
            await self._stop
        finally:
            server.close()
            for conn in list(self.connections):
                conn.wake_all()
            if self.tasks:
                await asyncio.wait(list(self.tasks), timeout=5)
            for conn in list(self.connections):
                conn.flush()
                conn.abort()
            await server.wait_closed()
