"""A loopback HTTP/1.1 server for tests: threads, sockets, request parsing, nothing more.

What to answer is up to the ``handle`` callback given to :class:`LoopbackServer`;
this module knows nothing about Gemini.

Design notes:

* Standard library only: one accept thread plus one thread per connection, raw
  non-blocking sockets, and a small hand-written HTTP/1.1 request parser.
* Every wait (reading a request, :meth:`Connection.idle`, a full send buffer) is a
  ``poll()``/``select()`` on the client socket *and* a shared wake-up socket, so
  ``close()`` stops every thread at once, and a client that goes away is noticed
  as soon as its FIN/RST arrives, even in the middle of a long idle wait.
* Connections are persistent (HTTP/1.1 keep-alive): several requests can use one
  connection, for as long as ``handle`` returns True.
"""

from __future__ import annotations

import contextlib
import select
import socket
import threading
import time
from collections.abc import Callable
from typing import Final, Literal

from ._http_wire import TOKEN, BadRequest, Request

__all__ = ["ClientGone", "Connection", "Handler", "LoopbackServer", "Rejecter", "ServerClosing"]

_MAX_HEAD: Final = 64 * 1024
_MAX_READAHEAD: Final = 1 << 20  # pipelined bytes kept while idle, before we stop reading
_RECV_SIZE: Final = 65536
_CONNECTION_ERRORS: Final = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


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

    def _read_line(self) -> bytes:
        while True:
            end = self.buf.find(b"\n")
            if end >= 0:
                line = bytes(self.buf[:end]).rstrip(b"\r")
                del self.buf[: end + 1]
                return line
            if len(self.buf) > _MAX_HEAD:
                raise BadRequest(431, "request line or header too long")
            self._fill()

    def _read_exact(self, size: int) -> bytes:
        while len(self.buf) < size:
            self._fill()
        data = bytes(self.buf[:size])
        del self.buf[:size]
        return data

    def _read_request(self) -> Request | None:
        """The next request, or None once the client closed an idle connection."""
        try:
            line = b""
            while not line:  # tolerate empty lines before a request
                if not self.buf and not self._wait_for_input():
                    return None
                line = self._read_line()
        except ClientGone:
            return None
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1]:
            raise BadRequest(400, f"malformed request line {line[:200]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        head_size = len(line)
        while True:
            raw = self._read_line()
            head_size += len(raw)
            if head_size > _MAX_HEAD:
                raise BadRequest(431, "request header too large")
            if not raw:
                break
            name, colon, value = raw.decode("latin-1").partition(":")
            if not colon or not TOKEN.fullmatch(name):
                raise BadRequest(400, f"malformed header line {raw[:200]!r}")
            key = name.lower()
            value = value.strip(" \t")
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        body = self._read_body(headers, version)
        return Request(method, target, version, headers, body)

    def _wait_for_input(self) -> bool:
        """Wait for the start of a request; False if the client closed the connection."""
        self._wait(read=True)
        return self._recv_more() or bool(self.buf)

    def _read_body(self, headers: dict[str, str], version: str) -> bytes:
        chunked = False
        length = 0
        if "transfer-encoding" in headers:
            codings = [c.strip().lower() for c in headers["transfer-encoding"].split(",")]
            if codings[-1] != "chunked":
                raise BadRequest(501, f"unsupported transfer-encoding {codings!r}")
            chunked = True
        elif "content-length" in headers:
            values = {v.strip() for v in headers["content-length"].split(",")}
            value = values.pop() if len(values) == 1 else ""
            if not value.isdigit():
                raise BadRequest(400, f"invalid content-length {headers['content-length']!r}")
            length = int(value)
        expects = headers.get("expect", "").lower() == "100-continue"
        if (chunked or length) and expects and version != "HTTP/1.0" and not self.buf:
            self.send(b"HTTP/1.1 100 Continue\r\n\r\n")
        if not chunked:
            return self._read_exact(length)
        body = bytearray()
        while True:
            size_line = self._read_line().split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise BadRequest(400, f"invalid chunk size {size_line[:40]!r}") from None
            if size == 0:
                while self._read_line():  # trailer fields
                    pass
                return bytes(body)
            body += self._read_exact(size)
            if self._read_exact(2) != b"\r\n":
                raise BadRequest(400, "chunk data not followed by CRLF")

    # -- the connection's thread

    def run(self) -> None:
        try:
            while True:
                try:
                    request = self._read_request()
                except BadRequest as exc:
                    self.server.reject(self, exc.status, exc.message)
                    return
                if request is None:
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
