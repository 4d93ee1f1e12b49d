"""The live inspector's capture: the recent upstream exchanges, kept as they stream.

Only a server with ``inspect`` on makes an :class:`Inspector`; it wraps the upstream
pools' transport (:meth:`Inspector.transport`), so a server without it has no capture
code on its path at all. What is kept is bounded: the last ``inspect_requests``
exchanges, and of each the first ``inspect_kb`` KiB of the request body and of the
response (the rest is counted). Secrets are kept out: no header is kept, the URL
loses its ``key=``, and the server's secrets and the key or token the request carried
are replaced by ``[redacted]`` in everything shown or downloaded.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import msgspec

from ..transport import MIN_SECRET, REDACTED, cassette_json, redact

__all__ = ["REDACTED", "Exchange", "Inspector", "redact", "redact_pieces", "serving_request"]

_SECRET_HEADERS: Final = ("x-goog-api-key", "authorization", "cookie")
_SECRET_QUERY: Final = frozenset({"key", "access_token", "token"})
_MIN_TAIL: Final = 4
"""The shortest start of a secret hidden where kept bytes end before the data does."""

serving_request: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "rxgem_inspected_request"
)
"""The server route and request id an upstream request is made for (set by the
inspector's middleware, read by its transport)."""


def redact_pieces(
    pieces: Sequence[bytes], secrets: Sequence[bytes], *, cut: bool = False
) -> list[bytes]:
    """``pieces`` joined, each secret replaced by ``[redacted]``, and cut again where they
    were: a secret split across pieces is found whole, and a cut inside one moves to the
    end of its ``[redacted]`` (the piece after it may be left empty).

    ``cut``: the bytes end before the data does (kept bytes of a longer or unfinished
    stream), so a start of a secret at their end (4 bytes or more) is hidden too.
    """
    joined = b"".join(pieces)
    if not secrets:
        return list(pieces)
    ordered = sorted(secrets, key=len, reverse=True)  # the longest where two start alike
    pattern = re.compile(b"|".join(re.escape(secret) for secret in ordered))
    spans = [match.span() for match in pattern.finditer(joined)]
    if cut:
        tail = _secret_start(joined, spans[-1][1] if spans else 0, ordered)
        if tail < len(joined):
            spans.append((tail, len(joined)))
    redacted: list[bytes] = []
    done = 0
    index = 0
    for end in itertools.accumulate(len(piece) for piece in pieces):
        piece = bytearray()
        while index < len(spans) and spans[index][0] < end:
            start, stop = spans[index]
            piece += joined[done:start] + REDACTED
            done = stop
            index += 1
        if done < end:
            piece += joined[done:end]
            done = end
        redacted.append(bytes(piece))
    return redacted


def _secret_start(data: bytes, after: int, secrets: Sequence[bytes]) -> int:
    """Where the longest end of ``data`` (past ``after``) that begins a secret starts,
    else ``len(data)``."""
    found = len(data)
    for secret in secrets:
        first = max(after, len(data) - len(secret) + 1)
        for start in range(first, len(data) - _MIN_TAIL + 1):
            if start < found and secret.startswith(data[start:]):
                found = start
                break
    return found


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
    drawn: tuple[tuple[int, bool], str] | None = field(default=None, repr=False)
    """The last diagram drawn, with what it was drawn from (pieces, complete)."""

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

    def response_bytes(self) -> bytes:
        """The kept response bytes, redacted."""
        return b"".join(self.response_pieces())

    def request_bytes(self) -> bytes:
        cut = self.body_size > len(self.body)
        return b"".join(redact_pieces([self.body], self.secrets, cut=cut))

    def cassette(self) -> dict[str, Any]:
        """The exchange as a cassette (:func:`rxgem.transport.cassette_json`: the format
        ``rxgem convert`` and ``FakeGemini`` replay read), with what the inspector knows
        besides under ``"inspector"``."""
        ended = self.started + (self.ended if self.ended is not None else 0.0)
        cassette = cassette_json(
            upstream="interactions" if "/interactions" in self.url else "generate-content",
            method=self.method,
            url=self.url,
            request_body=self.request_bytes() or None,
            status=self.status or 0,
            content_type=self.content_type or None,
            response=self.response_bytes(),
            started_at=_iso(self.started),
            finished_at=_iso(ended) if self.done else None,
            complete=self.done and self.error is None and not self.truncated,
            secrets=[secret.decode("utf-8", "replace") for secret in self.secrets],
        )
        cassette["inspector"] = {
            "route": self.route,
            "request_id": self.request_id,
            "model": self.model,
            "truncated": self.truncated,
            "error": self.error,
        }
        return cassette


def _iso(moment: float) -> str:
    return (
        datetime.fromtimestamp(moment, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


class Inspector:
    """The recent exchanges of one server, and who is waiting for news of them.

    Args:
        requests: how many exchanges to keep.
        limit: how many bytes of each request body and of each response to keep.
        secrets: the server's own secrets (its key, token, client tokens).
    """

    def __init__(self, requests: int, limit: int, secrets: Iterable[str]) -> None:
        self.exchanges: deque[Exchange] = deque(maxlen=requests)
        self.limit = limit
        self.secrets = tuple(s.encode() for s in secrets if s)
        self._numbers = itertools.count(1)
        self._changed = asyncio.Event()
        self.version = 0

    def transport(self, inner: httpx.AsyncBaseTransport) -> httpx.AsyncBaseTransport:
        """``inner``, capturing each POST (a generation) into this inspector."""
        return _CapturingTransport(inner, self)

    def touch(self, exchange: Exchange) -> None:
        self.version += 1
        exchange.version = self.version
        self._changed.set()

    async def wait(self, since: int, timeout: float) -> None:
        """Until something changed after version ``since`` (or ``timeout`` seconds)."""
        while self.version <= since:
            self._changed.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._changed.wait()
            except TimeoutError:
                return

    def find(self, number: int) -> Exchange | None:
        return next((e for e in self.exchanges if e.number == number), None)

    def begin(self, request: httpx.Request) -> Exchange:
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
        exchange = Exchange(
            number=next(self._numbers),
            route=route,
            request_id=request_id,
            method=request.method,
            url=_url(request.url),
            model=_model(request.url, body),
            body=body[: self.limit],
            body_size=len(body),
            started=time.time(),
            secrets=tuple(
                sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
            ),
        )
        self.exchanges.append(exchange)
        self.touch(exchange)
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
        self.touch(exchange)

    def end(self, exchange: Exchange, error: BaseException | None = None) -> None:
        if exchange.ended is None:
            exchange.ended = time.time() - exchange.started
            if error is not None:
                exchange.error = type(error).__name__
            self.touch(exchange)


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
                self.inspector.end(self.exchange)
                self.exchange.error = "closed before its end"


class _CapturingTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport, inspector: Inspector) -> None:
        self.inner = inner
        self.inspector = inspector

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST":
            return await self.inner.handle_async_request(request)
        exchange = self.inspector.begin(request)
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
