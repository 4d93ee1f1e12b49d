"""Running the app in uvicorn: the connection guard, the config, one process or several.

uvicorn leaves three holes a server facing the internet must close, and this module
closes them in the HTTP protocol (the only place that sees a connection before its
request exists):

- **A request head has a deadline.** uvicorn waits forever for the first request of
  a connection, and for a head sent a byte at a time; :class:`GuardedProtocol` closes
  the connection when the head is not complete ``head_timeout`` seconds after the
  connection (or the first byte of a later request).
- **A request head has a size.** The bytes received are metered as they arrive
  (:class:`~rxgem.server.http._head_meter.HeadMeter`), however they come: a head in one
  write, in many, or pipelined behind other requests. A head past ``max_head_bytes``
  never reaches the parser; the client gets a 431 (after the responses it is owed)
  and the connection closes. (httptools has no cap of its own, h11 one only on a head
  still incomplete.)
- **Connections are capped** below the descriptor limit (``max_connections``): a
  connection beyond it gets a 503 at once, so ``accept()`` never fails with "too many
  open files" and the server keeps answering ``/healthz``.
- **Every accepted TCP connection gets ``TCP_NODELAY``**: asyncio sets it only when the
  listening socket says ``IPPROTO_TCP``, which the socket uvicorn binds for
  ``--workers`` does not, and Nagle's algorithm then meets delayed ACKs (~40 ms per
  keep-alive request).

The protocol reads its :class:`ConnectionLimits` from the lifespan state the app
yields (:data:`LIMITS_STATE`), so the same class serves a thread in a test, one
process, and each worker of ``--workers N`` (uvicorn imports it by name there).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from uvicorn.protocols.http.h11_impl import H11Protocol

from ...replies import busy, head_too_large
from ..http import HeadMeter

if TYPE_CHECKING:
    import uvicorn

    from ..settings import ServerSettings

__all__ = [
    "ABORT_EXTENSION",
    "LIMITS_STATE",
    "PROTOCOL",
    "ConnectionLimits",
    "GuardedH11Protocol",
    "GuardedHttpToolsProtocol",
    "connection_limits",
    "protocol_named",
    "uvicorn_config",
    "uvicorn_options",
]

ABORT_EXTENSION: Final = "rxgem.abort"
"""The scope extension (``scope["extensions"][ABORT_EXTENSION]``) that closes the
connection at once, unsent data dropped: for a client that stopped reading."""

LIMITS_STATE: Final = "rxgem.connection_limits"
"""The lifespan-state key of the app's :class:`ConnectionLimits`."""

_RESERVED_DESCRIPTORS: Final = 64
_LINGER: Final = 1.0
"""Seconds a refused connection is still read (and the bytes dropped) after its 431, so
that closing it with unread data does not reset it before the client reads the 431."""


@dataclass(frozen=True)
class ConnectionLimits:
    """What :class:`GuardedProtocol` enforces on each connection."""

    head_timeout: float
    max_head_bytes: int
    max_connections: int


def default_max_connections() -> int:
    """Half the descriptors this process may open, less a reserve: each request holds a
    client connection and an upstream one, and files, the log and the listener need some."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(1, (soft - _RESERVED_DESCRIPTORS) // 2)


def connection_limits(settings: ServerSettings) -> ConnectionLimits:
    """The connection guard's limits from the server settings."""
    return ConnectionLimits(
        head_timeout=settings.head_timeout,
        max_head_bytes=settings.max_head_bytes,
        max_connections=settings.max_connections or default_max_connections(),
    )


def _busy_response() -> bytes:
    reply = busy("the server has too many open connections; retry shortly", None)
    body = reply.json()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        f"retry-after: 1\r\nconnection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


def _head_too_large(limit: int) -> bytes:
    reply = head_too_large(limit)
    body = reply.json()
    head = (
        "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: application/json\r\n"
        f"connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class _Guard:
    """The head deadline and size of one connection (the protocol's side state)."""

    __slots__ = ("answered", "cycle", "limits", "meter", "timer")

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.timer: asyncio.TimerHandle | None = None
        self.cycle: object = None
        self.meter = HeadMeter(limits.max_head_bytes)
        self.answered = False  # the 431 went out


def _guarded(base: type[Any]) -> type[Any]:
    """``base`` (an uvicorn HTTP/1.1 protocol) with the connection guard."""

    class Guarded(base):  # type: ignore[misc]
        _guard: _Guard | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
                with contextlib.suppress(OSError):  # the peer may already be gone
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            limits = self.app_state.get(LIMITS_STATE)
            if isinstance(limits, ConnectionLimits):
                if len(self.connections) >= limits.max_connections:
                    transport.write(_busy_response())
                    transport.close()
                    return
                self._guard = _Guard(limits)
            super().connection_made(transport)
            if self._guard is not None:
                self._arm()

        def _arm(self) -> None:
            guard = self._guard
            assert guard is not None
            guard.cycle = self.cycle
            guard.timer = self.loop.call_later(guard.limits.head_timeout, self._head_expired)

        def _head_expired(self) -> None:
            guard = self._guard
            if guard is not None:
                guard.timer = None
            if self.cycle is (guard.cycle if guard else None) and not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            guard = self._guard
            if guard is None:
                super().data_received(data)
                return
            meter = guard.meter
            if meter.over:
                return  # refused: what still comes is dropped
            allowed = meter.feed(data)
            if guard.timer is None and (self.cycle is None or self.cycle.response_complete):
                self._arm()  # the first bytes of a next request on a kept-alive connection
            if allowed:
                super().data_received(data if allowed == len(data) else data[:allowed])
            scope = self.scope
            if scope is not None:  # the app's way to drop a client that stopped reading
                scope.setdefault("extensions", {})[ABORT_EXTENSION] = self.transport.abort
            if guard.timer is not None and self.cycle is not guard.cycle:  # the head is whole
                guard.timer.cancel()
                guard.timer = None
            if meter.over:
                self._refuse_head()

        def _refuse_head(self) -> None:
            """A head grew past the limit: once the responses owed before it are sent, a
            431, the connection shut for writing, and closed after a short linger."""
            guard = self._guard
            assert guard is not None
            cycle = self.cycle
            busy = cycle is not None and not cycle.response_complete
            if guard.answered or busy or getattr(self, "pipeline", None):
                return  # on_response_complete comes back here
            guard.answered = True
            if guard.timer is not None:
                guard.timer.cancel()
                guard.timer = None
            transport = self.transport
            if transport.is_closing():
                return
            transport.write(_head_too_large(guard.limits.max_head_bytes))
            if transport.can_write_eof():
                transport.write_eof()
            self.flow.resume_reading()  # read and drop what is in flight, then close
            guard.timer = self.loop.call_later(_LINGER, transport.close)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            guard = self._guard
            if guard is not None and guard.meter.over:
                self._refuse_head()

        def connection_lost(self, exc: Exception | None) -> None:
            guard = self._guard
            if guard is not None and guard.timer is not None:
                guard.timer.cancel()
                guard.timer = None
            if self.transport is None:  # refused in connection_made
                return
            super().connection_lost(exc)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{base.__name__}"
    return Guarded


GuardedH11Protocol: Final = _guarded(H11Protocol)
"""uvicorn's h11 protocol with the connection guard."""

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # httptools is not installed: h11 only
    GuardedHttpToolsProtocol: type[Any] | None = None
else:
    GuardedHttpToolsProtocol = _guarded(HttpToolsProtocol)
    """uvicorn's httptools protocol with the connection guard."""

PROTOCOL: Final = (
    f"{__name__}:GuardedHttpToolsProtocol"
    if GuardedHttpToolsProtocol is not None
    else f"{__name__}:GuardedH11Protocol"
)
"""The guarded protocol ``rxgem serve`` runs: httptools' where it is installed, else h11's."""


def protocol_named(http: str) -> str:
    """The guarded protocol for uvicorn's ``--http`` choice (``auto``, ``h11``,
    ``httptools``), as an import string."""
    if http == "h11":
        return f"{__name__}:GuardedH11Protocol"
    if http == "httptools":
        if GuardedHttpToolsProtocol is None:
            raise ValueError("--http httptools needs httptools: pip install 'rxgem[server]'")
        return f"{__name__}:GuardedHttpToolsProtocol"
    if http == "auto":
        return PROTOCOL
    raise ValueError(f"--http must be auto, h11 or httptools, not {http!r}")


def uvicorn_options(
    settings: ServerSettings, *, http: str = "auto", loop: str = "auto"
) -> dict[str, Any]:
    """The :class:`uvicorn.Config` keywords ``rxgem serve`` runs its app with.

    ``http`` and ``loop`` are uvicorn's choices (``auto`` takes httptools and uvloop
    where they are installed); the HTTP protocol is always the guarded one.
    """
    return {
        "http": protocol_named(http),
        "loop": loop,
        "lifespan": "on",
        "timeout_keep_alive": settings.idle_timeout,
        # uvicorn cancels what is left after this; the app ends its own streams first
        "timeout_graceful_shutdown": settings.shutdown_grace + 5,
        "access_log": False,  # rxgem.server logs one line per request itself
        "server_header": False,
        "backlog": 2048,
        # h11's own cap (on a head still incomplete) is the guard's, so both parsers say 431
        "h11_max_incomplete_event_size": settings.max_head_bytes + 1,
    }


def uvicorn_config(app: Any, settings: ServerSettings, **options: Any) -> uvicorn.Config:
    """A :class:`uvicorn.Config` of ``app`` with :func:`uvicorn_options`; ``options``
    (host, port, log_config, ...) are added and may override them."""
    import uvicorn

    return uvicorn.Config(app, **{**uvicorn_options(settings), **options})
