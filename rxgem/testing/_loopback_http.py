"""A loopback HTTP/1.1 server for tests: threads, sockets, request parsing, nothing more.

What to answer is up to the ``handle`` callback given to :class:`LoopbackServer`;
this module knows nothing about Gemini.

Design notes:

* One accept thread plus one thread per connection, raw non-blocking sockets, and
  h11 to parse requests. Responses are whatever bytes ``handle`` sends: h11 never
  writes them, so a fake can cut a chunk short or break its framing on purpose.
* Every wait (reading a request, :meth:`Connection.idle`, a full send buffer) is a
  ``poll()``/``select()`` on the client socket *and* a shared wake-up socket, so
  ``close()`` stops every thread at once, and a client that goes away is noticed
  as soon as its FIN/RST arrives, even in the middle of a long idle wait.
* Connections are persistent (HTTP/1.1 keep-alive): several requests can use one
  connection, for as long as ``handle`` returns True.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Final, Literal

import h11

from ._http_wire import BadRequest, Request

__all__ = [
    "ClientGone",
    "Connection",
    "Handler",
    "LoopbackServer",
    "Rejecter",
    "ServerClosing",
    "poll",
]

_POLL: Final = 0.005  # seconds between two looks of an async wait at the server's counts


async def poll(changed: threading.Condition, ready: Callable[[], bool], timeout: float) -> bool:
    """Whether ``ready()`` (read under ``changed``'s lock) came true within ``timeout``
    seconds, looked at every few milliseconds: an async wait on what the server's threads
    count, that never blocks the loop (``Condition.wait`` would) and holds no thread."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        with changed:
            if ready():
                return True
        left = deadline - loop.time()
        if left <= 0:
            return False
        await asyncio.sleep(min(_POLL, left))


_MAX_HEAD: Final = 64 * 1024
_MAX_READAHEAD: Final = 1 << 20  # pipelined bytes kept while idle, before we stop reading
_RECV_SIZE: Final = 65536
_CONNECTION_ERRORS: Final = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
_CONTINUE: Final = h11.InformationalResponse(status_code=100, reason=b"Continue", headers=[])


class ServerClosing(Exception):
    """The server is closing."""


class ClientGone(Exception):
    """The client closed or reset its connection."""


Handler = Callable[["Connection", Request], bool]
"""Answers one request on a connection; returns True to keep the connection open."""
Rejecter = Callable[["Connection", int, str], None]
"""Answers a malformed request (status, message); the connection is closed after it."""


def _wait(
    sock: socket.socket, wake: socket.socket, *, read: bool, write: bool, timeout: float | None
) -> tuple[bool, bool]:
    """Wait until ``sock`` is readable/writable (as asked) or ``timeout`` passes.

    Raises ``ServerClosing`` once ``wake`` is readable (the server is closing).
    Errors and hang-ups on ``sock`` report it as readable and writable, so that
    the next ``recv``/``send`` surfaces them.
    """
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(wake, select.POLLIN)
        mask = (select.POLLIN if read else 0) | (select.POLLOUT if write else 0)
        if mask:
            poller.register(sock, mask)
        millis = None if timeout is None else max(0, int(timeout * 1000 + 0.999))
        readable = writable = False
        for fd, events in poller.poll(millis):
            if fd == wake.fileno():
                raise ServerClosing
            trouble = events & (select.POLLERR | select.POLLHUP | select.POLLNVAL)
            readable = bool(events & select.POLLIN or trouble)
            writable = bool(events & select.POLLOUT or trouble)
        return readable, writable
    rlist = [wake, sock] if read else [wake]  # no poll() on Windows
    r, w, x = select.select(rlist, [sock] if write else [], [sock], timeout)
    if wake in r:
        raise ServerClosing
    return sock in r or bool(x), sock in w or bool(x)


class Connection:
    """Serves the requests of one client connection, one after another.

    ``handle`` writes its answer with :meth:`send` and waits with :meth:`idle`;
    both raise ``ClientGone`` when the client went away and ``ServerClosing``
    when the server is closing.
    """

    def __init__(self, server: LoopbackServer, sock: socket.socket, wake: socket.socket) -> None:
        self.server = server
        self.sock = sock
        self.wake = wake
        self.buf = bytearray()

    @property
    def closing(self) -> bool:
        """Whether the server is closing (checked between writes that do not wait)."""
        return self.server.closing

    # -- plumbing

    def _wait(
        self, *, read: bool = False, write: bool = False, timeout: float | None = None
    ) -> bool:
        readable, writable = _wait(self.sock, self.wake, read=read, write=write, timeout=timeout)
        return readable or writable

    def _recv_more(self) -> bool:
        """Read what has arrived into the buffer; False at end of input."""
        try:
            data = self.sock.recv(_RECV_SIZE)
        except (BlockingIOError, InterruptedError):
            return True
        except _CONNECTION_ERRORS as exc:
            raise ClientGone from exc
        if not data:
            return False
        self.buf += data
        return True

    def _fill(self) -> None:
        """Wait for more input; ``ClientGone`` at end of input."""
        self._wait(read=True)
        if not self._recv_more():
            raise ClientGone

    def send(self, data: bytes) -> None:
        """Send all of ``data``, waiting while the send buffer is full."""
        view = memoryview(data)
        while view:
            try:
                sent = self.sock.send(view)
            except (BlockingIOError, InterruptedError):
                self._wait(write=True)
                continue
            except _CONNECTION_ERRORS as exc:
                raise ClientGone from exc
            view = view[sent:]

    def idle(self, seconds: float, *, every: float | None = None, heartbeat: bytes = b"") -> None:
        """Wait ``seconds``, watching for the client going away.

        With ``every``, ``heartbeat`` (already framed) is sent every ``every`` seconds.
        """
        start = time.monotonic()
        deadline = start + seconds
        next_beat = None if every is None else start + every
        watch = True
        while True:
            now = time.monotonic()
            if now >= deadline:
                return
            if next_beat is not None and every is not None and now >= next_beat:
                self.send(heartbeat)
                next_beat += every
                continue
            until = deadline if next_beat is None else min(deadline, next_beat)
            if self._wait(read=watch, timeout=until - now) and watch:
                # Data (a pipelined request) is kept for later; end of input means
                # the client went away.
                if not self._recv_more():
                    raise ClientGone
                watch = len(self.buf) < _MAX_READAHEAD

    # -- requests

    def _read_request(self) -> Request:
        """The next request, parsed by h11; ``ClientGone`` once the client goes away.

        Each request gets a fresh parser: responses go out as raw bytes (a fake must
        be able to send broken HTTP), so h11 never sees them and would not move on to
        the next request. What follows this request goes back into ``self.buf``.
        """
        while True:  # RFC 9112 §2.2: ignore empty lines before a request (h11 does not)
            del self.buf[: len(self.buf) - len(self.buf.lstrip(b"\r\n"))]
            if self.buf:
                break
            self._fill()
        parser = h11.Connection(h11.SERVER, max_incomplete_event_size=_MAX_HEAD)
        fed = 0
        head: h11.Request | None = None
        body = bytearray()
        try:
            while True:
                if self.buf:
                    parser.receive_data(bytes(self.buf))
                    fed += len(self.buf)
                    self.buf.clear()
                event = parser.next_event()
                if event is h11.NEED_DATA:
                    if parser.they_are_waiting_for_100_continue and not parser.trailing_data[0]:
                        self.send(parser.send(_CONTINUE) or b"")
                    self._fill()
                elif isinstance(event, h11.Request):
                    # h11 limits only an incomplete head; one that arrived whole is
                    # measured here.
                    if fed - len(parser.trailing_data[0]) > _MAX_HEAD:
                        raise BadRequest(431, "request header too large")
                    if not event.http_version.startswith(b"1."):
                        version = event.http_version.decode()
                        raise BadRequest(505, f"HTTP/{version} is not supported")
                    head = event
                elif isinstance(event, h11.Data):
                    body += event.data
                elif isinstance(event, h11.EndOfMessage):
                    break
                else:  # PAUSED and ConnectionClosed come only after a request, or at EOF
                    raise AssertionError(f"unreachable: h11 event {event!r}")
        except h11.RemoteProtocolError as exc:
            raise BadRequest(exc.error_status_hint, str(exc)[:200]) from None
        if head is None:
            raise AssertionError("unreachable: h11 ended a request it did not start")
        self.buf[:0] = parser.trailing_data[0]
        headers: dict[str, str] = {}
        for raw_name, raw_value in head.headers:  # names come lower-cased
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        return Request(
            head.method.decode("latin-1"),
            head.target.decode("latin-1"),
            f"HTTP/{head.http_version.decode()}",
            headers,
            bytes(body),
        )

    # -- the connection's thread

    def run(self) -> None:
        try:
            while True:
                try:
                    request = self._read_request()
                except BadRequest as exc:
                    self.server.reject(self, exc.status, exc.message)
                    return
                if not self.server.handle(self, request):
                    return
        except (ServerClosing, ClientGone, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()


class ListeningServer:
    """What both loopback servers (HTTP/1.1 here, h2c in ``_loopback_h2``) say of
    their port and state; each sets ``name``, ``_state`` and ``_port``."""

    name: str
    _state: Literal["new", "running", "closed"]
    _port: int | None

    @property
    def state(self) -> Literal["new", "running", "closed"]:
        return self._state

    @property
    def bound_port(self) -> int | None:
        """The TCP port once started (kept after ``close()``), else None."""
        return self._port

    @property
    def port(self) -> int:
        """The TCP port (valid after :meth:`start`)."""
        if self._port is None:
            raise RuntimeError(f"{self.name} is not started")
        return self._port


class LoopbackServer(ListeningServer):
    """An HTTP/1.1 server on an ephemeral port of 127.0.0.1, one thread per connection.

    Args:
        handle: Answers each request (see :data:`Handler`).
        reject: Answers a malformed request (see :data:`Rejecter`).
        name: Used in thread names and error messages.
        backlog: The listen queue: raise it for many simultaneous connects.
    """

    def __init__(self, handle: Handler, reject: Rejecter, *, name: str, backlog: int = 128) -> None:
        self.handle = handle
        self.reject = reject
        self.name = name
        self.backlog = backlog
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._state: Literal["new", "running", "closed"] = "new"
        self._port: int | None = None
        self._listener: socket.socket | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._workers: list[threading.Thread] = []

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` was called on a running server."""
        return self._stopping.is_set()

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
                wake_r, wake_w = socket.socketpair()
            except BaseException:
                listener.close()
                raise
            self._listener, self._wake_r, self._wake_w = listener, wake_r, wake_w
            self._port = listener.getsockname()[1]
            self._acceptor = threading.Thread(
                target=self._accept_loop, name=f"{self.name}-{self._port}-accept", daemon=True
            )
            self._acceptor.start()
            self._state = "running"

    def close(self) -> None:
        """Stop serving, close every socket and join every thread. Idempotent."""
        with self._lock:
            if self._state != "running":
                self._state = "closed"
                return
            self._state = "closed"
            self._stopping.set()
        listener, wake_r, wake_w = self._listener, self._wake_r, self._wake_w
        acceptor = self._acceptor
        if listener is None or wake_r is None or wake_w is None or acceptor is None:
            raise AssertionError("unreachable: running without sockets")
        wake_w.send(b"x")  # wakes every thread's poll() at once
        acceptor.join()
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join()
        listener.close()
        wake_r.close()
        wake_w.close()
        with self._lock:
            self._workers.clear()

    def _accept_loop(self) -> None:
        listener, wake = self._listener, self._wake_r
        if listener is None or wake is None:
            raise AssertionError("unreachable: accept loop without sockets")
        number = 0
        while True:
            try:
                _wait(listener, wake, read=True, write=False, timeout=None)
            except ServerClosing:
                return
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # e.g. out of file descriptors: back off briefly
                try:
                    _wait(listener, wake, read=False, write=False, timeout=0.05)
                except ServerClosing:
                    return
                continue
            try:
                conn.setblocking(False)
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                conn.close()
                continue
            number += 1
            worker = threading.Thread(
                target=Connection(self, conn, wake).run,
                name=f"{self.name}-{self._port}-conn-{number}",
                daemon=True,
            )
            with self._lock:
                self._workers = [w for w in self._workers if w.is_alive()]
                self._workers.append(worker)
                worker.start()
