"""The live inspector's capture: the recent upstream exchanges, kept as they stream.

Only a server with ``inspect`` on makes an :class:`Inspector`; it wraps the upstream
pools' transport (:meth:`Inspector.transport`), so a server without it has no capture
code on its path at all. Each exchange goes to the server's spool
(:mod:`rxgem.server.capture._spool`), where every worker's page reads it: at its start,
at most every 0.1 s while it streams, and at its end. What is kept is bounded: the last
``inspect_requests`` exchanges, and of each the first ``inspect_kb`` KiB of the request
body and of the response (the rest is counted). Secrets are kept out: no header is
kept, the URL loses its ``key=``, and the server's secrets and the key or token the
request carried are replaced by ``[redacted]`` before anything is written
(:mod:`rxgem.server.capture._redact`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import msgspec

from ...transport import secret_forms
from ...upstreams import upstream_at
from ._redact import redact_pieces
from ._spool import Spool

__all__ = ["DRAWN_PIECES", "Exchange", "Inspector", "serving_request"]

_SECRET_HEADERS: Final = ("x-goog-api-key", "authorization", "cookie")
_SECRET_QUERY: Final = frozenset({"key", "access_token", "token"})
_FLUSH: Final = 0.1
"""Seconds between two writes of a streaming exchange to the spool (at most)."""
DRAWN_PIECES: Final = 40
"""How many pieces of a response its diagram shows (the first ones)."""

serving_request: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "rxgem_inspected_request"
)
"""The server route and request id an upstream request is made for (set by the
inspector's middleware, read by its transport)."""


def _url(url: httpx.URL) -> str:
    split = urlsplit(str(url))
    query = [(k, v) for k, v in parse_qsl(split.query) if k not in _SECRET_QUERY]
    return urlunsplit(split._replace(query=urlencode(query)))


def _model(url: httpx.URL, body: bytes) -> str | None:
    path = url.path
    if "/models/" in path:
        return path.rsplit("/models/", 1)[1].split(":", 1)[0] or None
    try:
        model = msgspec.json.decode(body).get("model")
    except (msgspec.DecodeError, AttributeError):
        return None
    return model if isinstance(model, str) else None


@dataclass(eq=False)
class Exchange:
    """One upstream request and its response, as far as it has come."""

    number: int
    route: str
    request_id: str
    method: str
    url: str
    model: str | None
    body: bytes
    body_size: int
    started: float
    """Wall time (``time.time()``) the request was sent."""
    secrets: tuple[bytes, ...] = field(repr=False)
    status: int | None = None
    content_type: str = ""
    pieces: list[tuple[float, bytes]] = field(default_factory=list)
    """The response's pieces as received, with their time since ``started`` (kept ones)."""
    size: int = 0
    kept: int = 0
    first_byte: float | None = None
    ended: float | None = None
    error: str | None = None
    version: int = 0
    dropped: bool = False
    """Whether a newer exchange (of any worker) pushed it out of the spool."""

    @property
    def done(self) -> bool:
        return self.ended is not None

    @property
    def truncated(self) -> bool:
        return self.size > self.kept or self.body_size > len(self.body)

    def response_pieces(self) -> list[bytes]:
        """The kept response pieces, redacted together (:func:`redact_pieces`)."""
        cut = not self.done or self.size > self.kept
        return redact_pieces([piece for _, piece in self.pieces], self.secrets, cut=cut)

    def request_bytes(self) -> bytes:
        cut = self.body_size > len(self.body)
        return b"".join(redact_pieces([self.body], self.secrets, cut=cut))

    def summary(self) -> dict[str, Any]:
        """What the event feed says of it (no diagram: the page fetches that apart)."""
        return {
            "id": self.number,
            "worker": os.getpid(),
            "route": self.route,
            "request_id": self.request_id,
            "model": self.model,
            "status": self.status,
            "error": self.error,
            "started": self.started,
            "first_byte_ms": None if self.first_byte is None else self.first_byte * 1000,
            "duration_ms": None if self.ended is None else self.ended * 1000,
            "bytes": self.size,
            "request_bytes": self.body_size,
            "truncated": self.truncated,
            "pieces": len(self.pieces),
            "drawn_pieces": min(len(self.pieces), DRAWN_PIECES),
            "done": self.done,
            "version": self.version,
        }

    def kept_data(self) -> tuple[dict[str, Any], bytes, bytes]:
        """What the spool keeps of it: a header, the request body and the response,
        redacted (the response's pieces joined, then cut where they were)."""
        request = self.request_bytes()
        pieces = self.response_pieces()
        cuts: list[int] = []
        end = 0
        for piece in pieces[:DRAWN_PIECES]:
            end += len(piece)
            cuts.append(end)
        header = {
            "upstream": upstream_at(self.url).name,
            "method": self.method,
            "url": self.url,
            "status": self.status,
            "content_type": self.content_type,
            "started": self.started,
            "ended": None if self.ended is None else self.started + self.ended,
            "complete": self.done and self.error is None and not self.truncated,
            "drawn_whole": self.done and self.error is None and len(pieces) <= DRAWN_PIECES,
            "route": self.route,
            "request_id": self.request_id,
            "model": self.model,
            "truncated": self.truncated,
            "error": self.error,
            "version": self.version,
            "request_size": len(request),
            "cuts": cuts,
        }
        return header, request, b"".join(pieces)


class Inspector:
    """This worker's exchanges as they stream, written to the server's spool.

    Args:
        requests: how many exchanges to keep.
        limit: how many bytes of each request body and of each response to keep.
        secrets: the server's own secrets (its key, token, client tokens).
        spool: where every worker of the server keeps them.
    """

    def __init__(self, requests: int, limit: int, secrets: Iterable[str], spool: Spool) -> None:
        self.exchanges: deque[Exchange] = deque(maxlen=requests)
        self.limit = limit
        self.secrets = tuple(s.encode() for s in secrets if s)
        self.spool = spool
        self._changed = asyncio.Event()
        self._dirty: set[Exchange] = set()
        self._timer: asyncio.TimerHandle | None = None
        self.version = 0
        """How many writes this worker made (its feeds wake on one at once)."""

    def transport(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
        """``inner``, capturing each POST (a generation) into this inspector."""
        return _CapturingTransport(inner, self)

    def touch(self, exchange: Exchange) -> None:
        """Note a change: written within :data:`_FLUSH` seconds."""
        exchange.version += 1
        self._dirty.add(exchange)
        if self._timer is None:
            try:
                self._timer = asyncio.get_running_loop().call_later(_FLUSH, self.flush)
            except RuntimeError:  # not on a loop: now
                self.flush()

    def flush(self) -> None:
        """Write every exchange that changed."""
        self._timer = None
        dirty, self._dirty = self._dirty, set()
        for exchange in dirty:
            self._write(exchange)

    def _write(self, exchange: Exchange) -> None:
        try:
            if not self.spool.write(exchange.number, exchange.summary(), exchange.kept_data()):
                self._forget(exchange)  # dropped by a newer exchange of any worker
        except OSError:  # a full disk stops the capture, never the request
            self._forget(exchange)
        self.version += 1
        self._changed.set()

    def _forget(self, exchange: Exchange) -> None:
        exchange.dropped = True
        self._dirty.discard(exchange)

    async def wait(self, since: int, timeout: float) -> None:
        """Until this worker wrote something after version ``since`` (or ``timeout``
        seconds: the other workers' writes are seen by looking again)."""
        while self.version <= since:
            self._changed.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                return

    def begin(self, request: httpx.Request) -> Exchange | None:
        """The exchange of ``request``, written; ``None`` if the spool cannot take it."""
        body = request.content
        route, request_id = serving_request.get(("", ""))
        secrets = [*self.secrets]
        for name in _SECRET_HEADERS:
            value = request.headers.get(name)
            if value:
                secrets.append(value.encode())
                secrets.extend(part.encode() for part in value.split()[1:])
        for name, value in parse_qsl(request.url.query.decode()):
            if name in _SECRET_QUERY and value:
                secrets.append(value.encode())
        try:
            number = self.spool.reserve()
        except OSError:
            return None
        exchange = Exchange(
            number=number,
            route=route,
            request_id=request_id,
            method=request.method,
            url=_url(request.url),
            model=_model(request.url, body),
            body=body[: self.limit],
            body_size=len(body),
            started=time.time(),
            secrets=secret_forms(secrets),
        )
        self.exchanges.append(exchange)
        self._write(exchange)
        with contextlib.suppress(OSError):
            self.spool.prune()
        return exchange

    def received(self, exchange: Exchange, piece: bytes) -> None:
        now = time.time() - exchange.started
        if exchange.first_byte is None:
            exchange.first_byte = now
        exchange.size += len(piece)
        room = self.limit - exchange.kept
        if room > 0:
            kept = piece[:room]
            exchange.pieces.append((now, kept))
            exchange.kept += len(kept)
        if not exchange.dropped:
            self.touch(exchange)

    def end(self, exchange: Exchange, error: BaseException | str | None = None) -> None:
        if exchange.ended is None:
            exchange.ended = time.time() - exchange.started
            if error is not None:
                exchange.error = error if isinstance(error, str) else type(error).__name__
            exchange.version += 1
            self._dirty.discard(exchange)
            if not exchange.dropped:
                self._write(exchange)  # now: a download right after the answer has it all


class _CapturingStream(httpx.AsyncByteStream):
    def __init__(self, inner: Any, inspector: Inspector, exchange: Exchange) -> None:
        self.inner = inner
        self.inspector = inspector
        self.exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for piece in self.inner:
                self.inspector.received(self.exchange, piece)
                yield piece
        except BaseException as exc:
            self.inspector.end(self.exchange, exc)
            raise
        self.inspector.end(self.exchange)

    async def aclose(self) -> None:
        try:
            await self.inner.aclose()
        finally:
            if not self.exchange.done:
                self.inspector.end(self.exchange, "closed before its end")


class _CapturingTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, inspector: Inspector) -> None:
        self.inner = inner
        self.inspector = inspector

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST":
            return await self.inner.handle_async_request(request)
        exchange = self.inspector.begin(request)
        if exchange is None:  # the spool cannot take it: not captured
            return await self.inner.handle_async_request(request)
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException as exc:
            self.inspector.end(exchange, exc)
            raise
        exchange.status = response.status_code
        exchange.content_type = response.headers.get("content-type", "")
        self.inspector.touch(exchange)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_CapturingStream(response.stream, self.inspector, exchange),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
