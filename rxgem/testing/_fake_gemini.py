"""FakeGemini: a real loopback HTTP/1.1 server that replays Gemini SSE captures.

Design notes:

* Standard library only: one accept thread plus one thread per connection, raw
  non-blocking sockets, and a small hand-written HTTP/1.1 request parser.
* Every wait (reading a request, ``delay``, ``pause``, a full send buffer) is a
  ``poll()``/``select()`` on the client socket *and* a shared wake-up socket, so
  ``close()`` stops every thread at once, and a client that goes away is noticed
  as soon as its FIN/RST arrives, even in the middle of a long pause.
* Connections are persistent (HTTP/1.1 keep-alive): several requests can use one
  connection. ``Connection: close`` is sent only when the connection is about to be
  closed (the client asked for it, an HTTP/1.0 client, or a malformed request).
"""

from __future__ import annotations

import contextlib
import dataclasses
import http
import itertools
import json
import re
import select
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import field
from types import TracebackType
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, unquote, urlsplit

from .. import samples

__all__ = ["FakeGemini", "FakeResponse", "RecordedRequest"]

_STREAM_PATH: Final = re.compile(r"/v1beta/models/([^/]+):streamGenerateContent")
_BLANK_LINE_ENDS: Final = (b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r\n", b"\r\n\n", b"\r\r\n")
_KEEPALIVE_COMMENT: Final = b": keep-alive\n\n"
_SSE: Final = "text/event-stream"
_JSON: Final = "application/json; charset=UTF-8"
_MAX_HEAD: Final = 64 * 1024
_MAX_READAHEAD: Final = 1 << 20
_RECV_SIZE: Final = 65536
_CONNECTION_ERRORS: Final = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)
_FRAMING_HEADERS: Final = frozenset({"content-length", "transfer-encoding"})
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


# --------------------------------------------------------------------------- responses


@dataclasses.dataclass(frozen=True)
class FakeResponse:
    """What FakeGemini sends for one request.

    A status-200 response is an SSE stream sent with ``Transfer-Encoding: chunked``;
    every piece of the body is one HTTP chunk, written and flushed on its own. Any
    other response (``error`` set, or ``status != 200``) has a ``Content-Length``
    body. The pieces are the body cut at every offset in ``split_at``, every
    ``chunk_size`` bytes, and (with ``raw_error``) where the raw error begins.

    Attributes:
        body: The response body (an SSE capture) for status 200; for another
            status without ``error``, the error body sent as is (it may be non-JSON).
        status: The HTTP status.
        headers: Extra response headers, e.g. ``{"Retry-After": "2"}``; they replace
            default headers of the same name (not the framing headers).
        error: A Google error object ``{"code": …, "message": …, "status": …}``,
            sent as the pretty-printed JSON body ``{"error": error}``; the status is
            ``status``, or ``error["code"]`` (500 if absent) when ``status`` is 200.
            ``body`` is then ignored.
        delay: Seconds to wait before sending anything (before the status line).
        split_at: Body offsets where the body is split into separate writes.
        chunk_size: Alternatively (or also), write the body in pieces of this size.
        pause: Seconds to sleep between pieces.
        drop_after: Close the connection abruptly after this many body bytes,
            without the end of the body (for a chunked body: the chunk in progress
            is cut short and the zero-length chunk is never sent).
        raw_error: Append ``json.dumps({"error": raw_error}, indent=2) + "\\n"``
            (unframed, LF line ends) right after ``body``, as Gemini does for an
            error in the middle of a stream. It starts a new piece, and it counts
            as body bytes for ``split_at``/``chunk_size``/``drop_after``.
        keepalive: During a ``pause`` longer than this that falls between two
            events (the body so far ends with a blank line), send the SSE comment
            ``": keep-alive\\n\\n"`` every ``keepalive`` seconds, as a real server
            would (status 200 only; these bytes do not count for ``drop_after``).
        content_type: The ``Content-Type`` of a 200 stream. For any other status,
            when left at ``"text/event-stream"``, ``application/json; charset=UTF-8``
            is sent instead.
    """

    body: bytes = b""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    error: Mapping[str, Any] | None = None
    delay: float = 0.0
    split_at: Sequence[int] = ()
    chunk_size: int | None = None
    pause: float = 0.0
    drop_after: int | None = None
    raw_error: Mapping[str, Any] | None = None
    keepalive: float | None = None
    content_type: str = _SSE

    def __post_init__(self) -> None:
        if not isinstance(self.body, bytes):
            raise TypeError(f"body must be bytes, not {type(self.body).__name__}")
        status = self._status()
        if not 200 <= status <= 599 or status in (204, 304):
            raise ValueError(f"status {status} cannot carry a body")
        for what, seconds in (("delay", self.delay), ("pause", self.pause)):
            if not seconds >= 0:
                raise ValueError(f"{what} must be >= 0, got {seconds!r}")
        if self.keepalive is not None and not self.keepalive > 0:
            raise ValueError(f"keepalive must be > 0, got {self.keepalive!r}")
        if self.chunk_size is not None and self.chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0, got {self.chunk_size!r}")
        if status != 200 and (self.raw_error is not None or self.keepalive is not None):
            raise ValueError("raw_error and keepalive only apply to status-200 streams")
        size = len(self._payload())
        for offset in self.split_at:
            if not 0 <= offset <= size:
                raise ValueError(f"split_at offset {offset} is outside the body (0..{size})")
        if self.drop_after is not None and not 0 <= self.drop_after <= size:
            raise ValueError(f"drop_after {self.drop_after} is outside the body (0..{size})")
        for name, value in self.headers.items():
            if not _TOKEN.fullmatch(name) or any(c in value for c in "\r\n\0"):
                raise ValueError(f"invalid header {name!r}: {value!r}")
            if name.lower() in _FRAMING_HEADERS:
                raise ValueError(f"header {name!r} is set by FakeGemini itself")

    def _status(self) -> int:
        if self.error is not None and self.status == 200:
            code = self.error.get("code", 500)
            if not isinstance(code, int) or isinstance(code, bool):
                raise ValueError(f"error['code'] must be an int, got {code!r}")
            return code
        return self.status

    def _is_stream(self) -> bool:
        return self._status() == 200

    def _payload(self) -> bytes:
        if self.error is not None:
            text = json.dumps({"error": self.error}, indent=2, ensure_ascii=False) + "\n"
            return text.encode()
        return self.body + self._raw_error()

    def _raw_error(self) -> bytes:
        if self.raw_error is None:
            return b""
        return (json.dumps({"error": self.raw_error}, indent=2, ensure_ascii=False) + "\n").encode()

    def _content_type(self) -> str:
        if self._is_stream() or self.content_type != _SSE:
            return self.content_type
        return _JSON

    def _pieces(self) -> list[bytes]:
        payload = self._payload()
        size = len(payload)
        cuts = {offset for offset in self.split_at if 0 < offset < size}
        if self.chunk_size is not None:
            cuts.update(range(self.chunk_size, size, self.chunk_size))
        if self.raw_error is not None and self.error is None and 0 < len(self.body) < size:
            cuts.add(len(self.body))
        bounds = [0, *sorted(cuts), size]
        return [payload[a:b] for a, b in itertools.pairwise(bounds) if b > a]


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request as FakeGemini received it."""

    method: str
    path: str
    """The percent-decoded path, e.g. ``/v1beta/models/gemini-2.5-flash:streamGenerateContent``."""
    query: dict[str, str]
    """The query parameters, e.g. ``{"alt": "sse"}`` (the last value of a repeated name)."""
    headers: dict[str, str]
    """Header names lower-cased; repeated headers joined with ``", "``."""
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)


# --------------------------------------------------------------------------- connections


class _Stop(Exception):
    """The server is closing."""


class _Gone(Exception):
    """The client closed or reset its connection."""


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _wait(
    sock: socket.socket, wake: socket.socket, *, read: bool, write: bool, timeout: float | None
) -> tuple[bool, bool]:
    """Wait until ``sock`` is readable/writable (as asked) or ``timeout`` passes.

    Raises ``_Stop`` once ``wake`` is readable (the server is closing). Errors and
    hang-ups on ``sock`` report it as readable and writable, so that the next
    ``recv``/``send`` surfaces them.
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
                raise _Stop
            trouble = events & (select.POLLERR | select.POLLHUP | select.POLLNVAL)
            readable = bool(events & select.POLLIN or trouble)
            writable = bool(events & select.POLLOUT or trouble)
        return readable, writable
    rlist = [wake, sock] if read else [wake]
    r, w, x = select.select(rlist, [sock] if write else [], [sock], timeout)
    if wake in r:
        raise _Stop
    return sock in r or bool(x), sock in w or bool(x)


@dataclasses.dataclass
class _Request:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes


class _Connection:
    """Serves the requests of one client connection, one after another."""

    def __init__(self, server: FakeGemini, sock: socket.socket, wake: socket.socket) -> None:
        self.server = server
        self.sock = sock
        self.wake = wake
        self.buf = bytearray()

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
            raise _Gone from exc
        if not data:
            return False
        self.buf += data
        return True

    def _fill(self) -> None:
        """Wait for more input; ``_Gone`` at end of input."""
        self._wait(read=True)
        if not self._recv_more():
            raise _Gone

    def _send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                sent = self.sock.send(view)
            except (BlockingIOError, InterruptedError):
                self._wait(write=True)
                continue
            except _CONNECTION_ERRORS as exc:
                raise _Gone from exc
            view = view[sent:]

    def _idle(self, seconds: float, keepalive: float | None = None) -> None:
        """Wait ``seconds``, watching for the client going away; maybe send keep-alives."""
        start = time.monotonic()
        deadline = start + seconds
        next_comment = None if keepalive is None else start + keepalive
        watch = True
        while True:
            now = time.monotonic()
            if now >= deadline:
                return
            if next_comment is not None and keepalive is not None and now >= next_comment:
                self._send(_chunk_head(_KEEPALIVE_COMMENT) + _KEEPALIVE_COMMENT + b"\r\n")
                next_comment += keepalive
                continue
            until = deadline if next_comment is None else min(deadline, next_comment)
            if self._wait(read=watch, timeout=until - now) and watch:
                # Data (a pipelined request) is kept for later; end of input means
                # the client went away.
                if not self._recv_more():
                    raise _Gone
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
                raise _BadRequest(431, "request line or header too long")
            self._fill()

    def _read_exact(self, size: int) -> bytes:
        while len(self.buf) < size:
            self._fill()
        data = bytes(self.buf[:size])
        del self.buf[:size]
        return data

    def _read_request(self) -> _Request | None:
        """The next request, or None once the client closed an idle connection."""
        try:
            line = b""
            while not line:  # tolerate empty lines before a request
                if not self.buf and not self._wait_for_input():
                    return None
                line = self._read_line()
        except _Gone:
            return None
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1.") or not parts[1]:
            raise _BadRequest(400, f"malformed request line {line[:200]!r}")
        method, target, version = parts
        headers: dict[str, str] = {}
        head_size = len(line)
        while True:
            raw = self._read_line()
            head_size += len(raw)
            if head_size > _MAX_HEAD:
                raise _BadRequest(431, "request header too large")
            if not raw:
                break
            name, colon, value = raw.decode("latin-1").partition(":")
            if not colon or not _TOKEN.fullmatch(name):
                raise _BadRequest(400, f"malformed header line {raw[:200]!r}")
            key = name.lower()
            value = value.strip(" \t")
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        body = self._read_body(headers, version)
        return _Request(method, target, version, headers, body)

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
                raise _BadRequest(501, f"unsupported transfer-encoding {codings!r}")
            chunked = True
        elif "content-length" in headers:
            values = {v.strip() for v in headers["content-length"].split(",")}
            value = values.pop() if len(values) == 1 else ""
            if not value.isdigit():
                raise _BadRequest(400, f"invalid content-length {headers['content-length']!r}")
            length = int(value)
        expects = headers.get("expect", "").lower() == "100-continue"
        if (chunked or length) and expects and version != "HTTP/1.0" and not self.buf:
            self._send(b"HTTP/1.1 100 Continue\r\n\r\n")
        if not chunked:
            return self._read_exact(length)
        body = bytearray()
        while True:
            size_line = self._read_line().split(b";", 1)[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                raise _BadRequest(400, f"invalid chunk size {size_line[:40]!r}") from None
            if size == 0:
                while self._read_line():  # trailer fields
                    pass
                return bytes(body)
            body += self._read_exact(size)
            if self._read_exact(2) != b"\r\n":
                raise _BadRequest(400, "chunk data not followed by CRLF")

    # -- responses

    def run(self) -> None:
        try:
            while True:
                try:
                    request = self._read_request()
                except _BadRequest as exc:
                    self._respond(_google_error(exc.status, exc.message), keep_alive=False)
                    return
                if request is None:
                    return
                if not self._handle(request):
                    return
        except (_Stop, _Gone, OSError):
            pass
        finally:
            with contextlib.suppress(OSError):
                self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()

    def _handle(self, request: _Request) -> bool:
        """Answer one request; True if the connection stays open."""
        split = urlsplit(request.target)
        path = unquote(split.path)
        recorded = RecordedRequest(
            method=request.method,
            path=path,
            query=dict(parse_qsl(split.query, keep_blank_values=True)),
            headers=dict(request.headers),
            body=request.body,
        )
        response = self.server._record(
            recorded, serve=request.method == "POST" and bool(_STREAM_PATH.fullmatch(path))
        )
        if response is None:
            response = _google_error(
                404,
                f"FakeGemini serves only POST /v1beta/models/{{model}}:streamGenerateContent,"
                f" not {request.method} {path}.",
            )
        tokens = {t.strip().lower() for t in request.headers.get("connection", "").split(",")}
        keep_alive = request.version != "HTTP/1.0" and "close" not in tokens
        return self._respond(
            response,
            keep_alive=keep_alive,
            head_only=request.method == "HEAD",
            http10=request.version == "HTTP/1.0",
        )

    def _respond(
        self,
        response: FakeResponse,
        *,
        keep_alive: bool,
        head_only: bool = False,
        http10: bool = False,
    ) -> bool:
        """Send one response; True if the connection stays open.

        A response counts as completed just before its last write (so a client that
        has read it all can rely on ``completed``); if that write fails after all,
        it counts as a disconnect instead.
        """
        counted = False

        def last_write_next() -> None:
            nonlocal counted
            self.server._finished(completed=True)
            counted = True

        try:
            if response.delay > 0:
                self._idle(response.delay)
            pieces = response._pieces()
            framing: Literal["chunked", "length", "close"]
            if not response._is_stream():
                framing = "length"
            elif http10:
                framing = "close"
            else:
                framing = "chunked"
            keep_alive = keep_alive and framing != "close"
            for name, value in response.headers.items():
                if name.lower() == "connection" and value.strip().lower() == "close":
                    keep_alive = False
            drop_after = response.drop_after
            head = _head(response, framing, sum(map(len, pieces)), keep_alive)
            if head_only or (not pieces and framing != "chunked" and drop_after is None):
                last_write_next()
            self._send(head)
            if head_only:
                return keep_alive
            sent = 0
            tail = b""  # the last body bytes sent: comments go only between events
            for number, piece in enumerate(pieces):
                if number and response.pause > 0:
                    between_events = tail.endswith(_BLANK_LINE_ENDS)
                    keepalive = (
                        response.keepalive if framing == "chunked" and between_events else None
                    )
                    self._idle(response.pause, keepalive)
                if self.server._stopping.is_set():
                    raise _Stop
                if drop_after is not None and sent + len(piece) > drop_after:
                    # Cut this piece short (the chunk size line promises all of it).
                    data = piece[: drop_after - sent]
                    if data:
                        self._send(_chunk_head(piece) + data if framing == "chunked" else data)
                    break
                if number == len(pieces) - 1 and framing != "chunked" and drop_after is None:
                    last_write_next()
                self._send(_chunk_head(piece) + piece + b"\r\n" if framing == "chunked" else piece)
                sent += len(piece)
                tail = (tail + piece)[-4:]
            if drop_after is not None:
                return False
            if framing == "chunked":
                last_write_next()
                self._send(b"0\r\n\r\n")
        except _Gone:
            self.server._finished(completed=False, disconnected=True, undo=counted)
            return False
        except _Stop:
            self.server._finished(completed=False, undo=counted)
            raise
        return keep_alive


def _head(
    response: FakeResponse,
    framing: Literal["chunked", "length", "close"],
    size: int,
    keep_alive: bool,
) -> bytes:
    """The status line and headers of ``response``."""
    status = response._status()
    headers = {"Content-Type": response._content_type(), "Server": "rxgem-FakeGemini"}
    if response._is_stream():
        headers["Cache-Control"] = "no-cache"
    defaults = {name.lower(): name for name in headers}
    for name, value in response.headers.items():
        if name.lower() != "connection":
            headers.pop(defaults.get(name.lower(), name), None)
            headers[name] = value
    if framing == "chunked":
        headers["Transfer-Encoding"] = "chunked"
    elif framing == "length":
        headers["Content-Length"] = str(size)
    if not keep_alive:
        headers["Connection"] = "close"
    lines = [f"HTTP/1.1 {status} {_phrase(status)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _chunk_head(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode()


def _phrase(status: int) -> str:
    if status == 499:
        return "Client Closed Request"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def _google_error(code: int, message: str) -> FakeResponse:
    names = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 431: "INVALID_ARGUMENT"}
    return FakeResponse(
        status=code,
        error={"code": code, "message": message, "status": names.get(code, "UNIMPLEMENTED")},
    )


# --------------------------------------------------------------------------- the server


class FakeGemini:
    """A real HTTP/1.1 server on 127.0.0.1 that serves Gemini's streaming endpoint.

    It answers ``POST /v1beta/models/{model}:streamGenerateContent`` (any query)
    with the given responses: one per such request, in order, the last one
    repeating. Any other method or path gets a Google-style 404 JSON error (and
    uses up no response). Every request is recorded in :attr:`requests` before it
    is answered. Connections are kept alive between requests.

    Args:
        *responses: ``FakeResponse`` objects, or bytes (``FakeResponse(body=...)``).
            With none, it serves the ``text`` sample capture.
    """

    def __init__(self, *responses: FakeResponse | bytes) -> None:
        items: list[FakeResponse] = []
        for response in responses:
            if isinstance(response, FakeResponse):
                items.append(response)
            elif isinstance(response, bytes | bytearray | memoryview):
                items.append(FakeResponse(body=bytes(response)))
            else:
                raise TypeError(f"expected FakeResponse or bytes, not {type(response).__name__}")
        self._responses = tuple(items) or (FakeResponse(body=samples.read("text")),)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._state: Literal["new", "running", "closed"] = "new"
        self._requests: list[RecordedRequest] = []
        self._served = 0
        self._disconnects = 0
        self._completed = 0
        self._port: int | None = None
        self._listener: socket.socket | None = None
        self._wake_r: socket.socket | None = None
        self._wake_w: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._workers: list[threading.Thread] = []

    def __repr__(self) -> str:
        where = f" port={self._port}" if self._port is not None else ""
        return f"<FakeGemini {self._state}{where} requests={len(self._requests)}>"

    # -- properties

    @property
    def port(self) -> int:
        """The TCP port (valid after :meth:`start`)."""
        if self._port is None:
            raise RuntimeError("FakeGemini is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1beta``: the API root, as a client's base URL."""
        return f"http://127.0.0.1:{self.port}/v1beta"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A copy of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def disconnects(self) -> int:
        """How many responses were cut short by the client going away."""
        with self._lock:
            return self._disconnects

    @property
    def completed(self) -> int:
        """How many responses were sent completely (404s and errors included)."""
        with self._lock:
            return self._completed

    def wait_for_disconnect(self, timeout: float, count: int = 1) -> bool:
        """Wait until ``count`` responses were cut short by the client going away.

        A client going away (closing its socket) before a response was fully sent,
        including during ``delay``, is noticed at once, also during a ``pause``.
        Returns False if that did not happen within ``timeout`` seconds.
        """
        with self._changed:
            return self._changed.wait_for(lambda: self._disconnects >= count, timeout)

    # -- lifecycle

    def start(self) -> FakeGemini:
        """Bind an ephemeral port on 127.0.0.1 and start serving (no-op if running)."""
        with self._lock:
            if self._state == "closed":
                raise RuntimeError("FakeGemini was closed; create a new one")
            if self._state == "running":
                return self
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                listener.bind(("127.0.0.1", 0))
                listener.listen(128)
                listener.setblocking(False)
                wake_r, wake_w = socket.socketpair()
            except BaseException:
                listener.close()
                raise
            self._listener, self._wake_r, self._wake_w = listener, wake_r, wake_w
            self._port = listener.getsockname()[1]
            self._acceptor = threading.Thread(
                target=self._accept_loop, name=f"FakeGemini-{self._port}-accept", daemon=True
            )
            self._acceptor.start()
            self._state = "running"
        return self

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
        wake_w.send(b"x")
        acceptor.join()
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            worker.join()
        listener.close()
        wake_r.close()
        wake_w.close()
        with self._changed:
            self._workers.clear()
            self._changed.notify_all()

    def __enter__(self) -> FakeGemini:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> FakeGemini:
        return self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()  # quick: every server thread wakes up at once and exits

    # -- threads

    def _accept_loop(self) -> None:
        listener, wake = self._listener, self._wake_r
        if listener is None or wake is None:
            raise AssertionError("unreachable: accept loop without sockets")
        number = 0
        while True:
            try:
                _wait(listener, wake, read=True, write=False, timeout=None)
            except _Stop:
                return
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # e.g. out of file descriptors: back off briefly
                try:
                    _wait(listener, wake, read=False, write=False, timeout=0.05)
                except _Stop:
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
                target=_Connection(self, conn, wake).run,
                name=f"FakeGemini-{self._port}-conn-{number}",
                daemon=True,
            )
            with self._lock:
                self._workers = [w for w in self._workers if w.is_alive()]
                self._workers.append(worker)
                worker.start()

    def _record(self, request: RecordedRequest, *, serve: bool) -> FakeResponse | None:
        """Log a request; with ``serve``, also take the response for it."""
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()
            if not serve:
                return None
            response = self._responses[min(self._served, len(self._responses) - 1)]
            self._served += 1
            return response

    def _finished(self, *, completed: bool, disconnected: bool = False, undo: bool = False) -> None:
        """Count a response as completed or cut short (``undo`` retracts a completion)."""
        with self._changed:
            self._completed += completed - undo
            self._disconnects += disconnected
            self._changed.notify_all()
