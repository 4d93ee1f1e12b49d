"""Admission and draining: the concurrent-request limit, and a graceful SIGTERM.

- :class:`Admission` counts the API requests in progress in this process; one beyond
  ``max_concurrent_requests`` gets a 503 with ``Retry-After`` (the ``openai`` SDK
  waits and retries), and so does any request once the server drains. Health,
  readiness, metrics and CORS preflights are not counted: a full server must still
  say so.
- :class:`Drain` is the shutdown's grace period. SIGTERM begins it (the handler is
  chained in front of uvicorn's, which stops accepting connections); the open
  requests get ``shutdown_grace`` seconds to finish, then each is stopped: a stream
  ends with an error frame, a request still waiting for Gemini gets a 503.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from typing import Any, Final, Protocol

from starlette.types import ASGIApp, Receive, Scope, Send

from ...replies import busy

__all__ = ["Admission", "Drain", "Stoppable", "install_drain_signal"]

_NOT_COUNTED: Final = frozenset({"/healthz", "/readyz", "/metrics"})


class Stoppable(Protocol):
    """A request the drain can end (a :class:`~rxgem.server.stream.StreamedAnswer`)."""

    def stop(self) -> None:
        """End the request now, telling the client the server is shutting down."""


class Drain:
    """The grace period of a shutdown, and the requests it must end when it expires."""

    def __init__(self, grace: float) -> None:
        self.grace = grace
        self.started = False
        self.expired = False
        self._open: set[Stoppable] = set()
        self._timer: asyncio.TimerHandle | None = None

    def add(self, request: Stoppable) -> None:
        """Note an open request (stopped at once if the grace already expired)."""
        if self.expired:
            request.stop()
        else:
            self._open.add(request)

    def discard(self, request: Stoppable) -> None:
        """Forget a finished request."""
        self._open.discard(request)

    def begin(self) -> None:
        """Start the grace period (idempotent; on the event loop's thread)."""
        if self.started:
            return
        self.started = True
        self._timer = asyncio.get_running_loop().call_later(self.grace, self.expire)

    def expire(self) -> None:
        """End every open request now."""
        self.expired = True
        self._timer = None
        requests, self._open = self._open, set()
        for request in requests:
            request.stop()


def install_drain_signal(drain: Drain) -> Callable[[], None]:
    """Begin ``drain`` on SIGTERM, then run the handler that was there (uvicorn's).

    Only from the main thread (where signal handlers live; a server run in another
    thread, as in tests, drains when told to). Returns the function that puts the
    previous handler back.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGTERM)

    def on_sigterm(signum: int, frame: Any) -> None:
        loop.call_soon_threadsafe(drain.begin)
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, on_sigterm)

    def restore() -> None:
        if signal.getsignal(signal.SIGTERM) is on_sigterm:
            signal.signal(signal.SIGTERM, previous)

    return restore


class Admission:
    """The count of API requests in progress, and the limit on it."""

    def __init__(self, limit: int, drain: Drain) -> None:
        self.limit = limit
        self.active = 0
        self.drain = drain

    @property
    def full(self) -> bool:
        """Whether a new API request would be refused."""
        return self.active >= self.limit

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """The ASGI middleware that admits (or refuses) each request to ``app``."""

        async def admit(scope: Scope, receive: Receive, send: Send) -> None:
            if (
                scope["type"] != "http"
                or scope["path"] in _NOT_COUNTED
                or scope["method"] == "OPTIONS"
            ):
                await app(scope, receive, send)
                return
            if self.drain.started:
                await _refuse(send, "the server is shutting down; retry", close=True)
                return
            if self.active >= self.limit:
                await _refuse(
                    send, f"the server is at its limit of {self.limit} requests; retry shortly"
                )
                return
            self.active += 1
            try:
                await app(scope, receive, send)
            finally:
                self.active -= 1

        return admit


async def _refuse(send: Send, message: str, *, close: bool = False) -> None:
    reply = busy(message)
    headers = [(b"content-type", b"application/json"), (b"retry-after", b"1")]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": reply.json()})
