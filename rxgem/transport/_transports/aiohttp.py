"""An httpx transport over aiohttp: upstream HTTP with a parser and pool in C (the server's).

:class:`AiohttpTransport` is an ``httpx.AsyncBaseTransport``, so ``httpx.AsyncClient``,
rxgem's transport and whoever uses them keep httpx's API: its requests, responses,
timeouts (``connect``, ``read``, ``write``, ``pool``), TLS settings and exception classes.
Only the bytes on the wire go through aiohttp (HTTP/1.1), whose response parser and
connection handling cost a fraction of httpcore's, h11's and anyio's pure Python per chunk.

aiohttp's errors are mapped onto httpx's here, by the phase they happen in (waiting for
a connection slot, connecting, writing the request, reading the answer), so each fault
raises the class httpx's own transport raises for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterator
from typing import Any, Final

import aiohttp
import httpx
from aiohttp.helpers import get_env_proxy_for_url
from multidict import CIMultiDict
from yarl import URL

from .quick_ack import ack_now

__all__ = ["AiohttpTransport"]

_UNTIMED_BODY: Final = 64 * 1024
"""A request body this small goes to the socket in one write that never waits (an
asyncio transport buffers it), so it needs no write timeout; a larger one is written in
pieces of this size, each within the write timeout."""

_AUTO_HEADERS: Final = ("User-Agent", "Accept", "Accept-Encoding", "Content-Type")
"""Headers aiohttp would add when httpx's request lacks them: httpx decides them."""

_UNKNOWN: Final = object()

_MAX_HEAD_FIELD: Final = 64 * 1024
"""The longest response header line and field accepted (h11's whole-head limit)."""


def _timeouts(
    request: httpx.Request,
) -> tuple[float | None, float | None, float | None, float | None]:
    timeout = request.extensions.get("timeout") or {}
    return (
        timeout.get("connect"),
        timeout.get("read"),
        timeout.get("write"),
        timeout.get("pool"),
    )


class _Slots:
    """httpx's ``max_connections``: requests in flight, each holding one connection
    (HTTP/1.1) from the request until its response is closed; waiting for one is
    bounded by the ``pool`` timeout (``PoolTimeout``)."""

    def __init__(self, size: int | None) -> None:
        self._free = asyncio.Semaphore(size) if size is not None else None

    async def take(self, request: httpx.Request, pool: float | None) -> None:
        free = self._free
        if free is None:
            return
        if not free.locked():
            await free.acquire()  # returns at once
            return
        try:
            async with asyncio.timeout(pool):
                await free.acquire()
        except TimeoutError:
            raise httpx.PoolTimeout(
                "no upstream connection free in time", request=request
            ) from None

    def give(self) -> None:
        if self._free is not None:
            self._free.release()


class _Writing:
    """A large body written in pieces, each within the write timeout: the timeout around
    the request is moved on at each piece and lifted once the body is written."""

    def __init__(self, body: bytes, write: float | None) -> None:
        self.body = body
        self.write = write
        self.scope: asyncio.Timeout | None = None
        self.done = False

    def _move(self, when: float | None) -> None:
        scope = self.scope
        if scope is not None and not scope.expired():
            try:
                scope.reschedule(when)
            except RuntimeError:  # the request has already ended (an early answer)
                self.scope = None

    async def pieces(self) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        body = self.body
        for start in range(0, len(body), _UNTIMED_BODY):
            if self.write is not None:
                self._move(loop.time() + self.write)
            yield body[start : start + _UNTIMED_BODY]
        self.done = True
        self._move(None)


_SOCKET_ERROR: Final = "Error("
"""In a body cut short by a socket error (a reset), aiohttp keeps that error only in the
message of its ``ClientPayloadError`` (``... ConnectionResetError(104, ...)``); a clean
close leaves none there."""


def _timed_out(exc: BaseException) -> bool:
    return isinstance(exc, asyncio.TimeoutError | TimeoutError)


def _reset(exc: BaseException) -> bool:
    """Whether ``exc`` or what caused it is an OS-level failure of the socket."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, OSError) and not _timed_out(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _map_send(exc: Exception, request: httpx.Request, writing: _Writing | None) -> httpx.HTTPError:
    """httpx's exception for a failure before the response's head was read."""
    text = str(exc) or type(exc).__name__
    if writing is not None and not writing.done and (_timed_out(exc) or _reset(exc)):
        if _timed_out(exc):
            return httpx.WriteTimeout("timed out writing the request", request=request)
        return httpx.WriteError(text, request=request)
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(text, request=request)
    if _timed_out(exc):
        return httpx.ReadTimeout(text, request=request)
    if isinstance(exc, aiohttp.ClientConnectorError):  # refused, DNS, TLS, certificate
        return httpx.ConnectError(text, request=request)
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return httpx.RemoteProtocolError(
            "Server disconnected without sending a response.", request=request
        )
    if isinstance(exc, aiohttp.ClientResponseError):  # a head that is not HTTP
        return httpx.RemoteProtocolError(text, request=request)
    if isinstance(exc, aiohttp.ClientOSError | aiohttp.ClientConnectionResetError) or _reset(exc):
        return httpx.ReadError(text, request=request)
    return httpx.RemoteProtocolError(text, request=request)


def _map_read(exc: Exception, request: httpx.Request) -> httpx.HTTPError:
    """httpx's exception for a failure while the response's body was read."""
    text = str(exc) or type(exc).__name__
    if _timed_out(exc):
        return httpx.ReadTimeout(text, request=request)
    if _reset(exc) or (isinstance(exc, aiohttp.ClientPayloadError) and _SOCKET_ERROR in text):
        return httpx.ReadError(text, request=request)
    # a body cut short (content length or chunked framing unmet), or malformed
    return httpx.RemoteProtocolError(text, request=request)


class _Body(httpx.AsyncByteStream):
    """A response body: its chunks as they arrive (an HTTP chunk at most, as httpx gives);
    closing it returns the connection to the pool when the body was read to its end,
    else closes the connection. One not closed is closed when it is collected.

    The read timeout counts while a read waits, as httpx's does, with one timer per
    body re-armed only when it fires: aiohttp's own re-arms a timer at every socket
    read, and counts while nobody reads (a slow client holding the stream back).
    """

    def __init__(
        self,
        response: aiohttp.ClientResponse,
        request: httpx.Request,
        slots: _Slots,
        read: float | None,
    ) -> None:
        self._response: aiohttp.ClientResponse | None = response
        self._request = request
        self._slots = slots
        self._read = read
        self._waiting_since: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        connection = response.connection
        if connection is not None and connection.protocol is not None:
            # aiohttp's timer stays armed for the silence until the body's first bytes
            connection.protocol.read_timeout = None

    def _check(self) -> None:
        """The timer: fail the read that has waited ``read`` seconds, else re-arm."""
        self._timer = None
        response, read = self._response, self._read
        if response is None or read is None:
            return
        loop = asyncio.get_running_loop()
        since = self._waiting_since
        if since is not None and loop.time() - since >= read:
            response.content.set_exception(aiohttp.SocketTimeoutError("read timed out"))
            return
        self._timer = loop.call_at(
            (since if since is not None else loop.time()) + read, self._check
        )

    async def __aiter__(self) -> AsyncIterator[bytes]:
        response = self._response
        if response is None:
            raise httpx.StreamClosed()
        content = response.content
        loop = asyncio.get_running_loop()
        if self._read is not None and self._timer is None:
            self._timer = loop.call_at(loop.time() + self._read, self._check)
        try:
            while True:
                self._waiting_since = loop.time()
                chunk, end_of_chunk = await content.readchunk()
                self._waiting_since = None
                if chunk:
                    yield chunk
                elif not end_of_chunk:
                    return
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            self._finish(keep=False)
            raise _map_read(exc, self._request) from exc

    def _finish(self, *, keep: bool) -> None:
        response, self._response = self._response, None
        if response is None:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if keep and response.content.at_eof():
            response.release()
        else:
            response.close()
        self._slots.give()

    async def aclose(self) -> None:
        self._finish(keep=True)

    def __del__(self) -> None:
        # collected unclosed, perhaps after its loop closed: nothing may escape from here
        with contextlib.suppress(Exception):
            self._finish(keep=False)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncBaseTransport`` sending HTTP/1.1 requests with aiohttp.

    Args:
        verify, cert, trust_env: TLS as httpx takes them (``httpx.create_ssl_context``);
            ``trust_env`` also lets aiohttp take the proxy from ``HTTPS_PROXY`` /
            ``HTTP_PROXY`` / ``NO_PROXY``, as httpx's own client would.
        limits: ``max_connections`` bounds the requests in flight (each holds one
            connection until its response is closed; waiting is bounded by the
            request's ``pool`` timeout), ``keepalive_expiry`` how long an idle
            connection is kept, ``max_keepalive_connections=0`` keeps none.

    The aiohttp session is made on the event loop of the first request, and closed by
    :meth:`aclose`. Response bodies are not decoded here (httpx decodes them).
    """

    def __init__(
        self,
        *,
        verify: ssl.SSLContext | str | bool = True,
        cert: Any = None,
        trust_env: bool = True,
        limits: httpx.Limits | None = None,
    ) -> None:
        limits = limits or httpx.Limits(max_connections=100, max_keepalive_connections=20)
        self._ssl = httpx.create_ssl_context(verify=verify, cert=cert, trust_env=trust_env)
        self._trust_env = trust_env
        self._limits = limits
        self._slots = _Slots(limits.max_connections)
        self._session: aiohttp.ClientSession | None = None
        self._client_timeouts: dict[tuple[float | None, float | None], aiohttp.ClientTimeout] = {}
        self._proxies: dict[tuple[str, str | None, int | None], object] = {}
        self._closed = False

    def _open(self) -> aiohttp.ClientSession:
        if self._closed:
            raise RuntimeError("the transport is closed")
        limits = self._limits
        expiry = limits.keepalive_expiry
        connector = aiohttp.TCPConnector(
            limit=0,  # _Slots bounds the connections, with httpx's pool timeout
            ssl=self._ssl,
            keepalive_timeout=expiry if expiry is not None else 3600.0,
            force_close=limits.max_keepalive_connections == 0,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,
            trust_env=False,  # the proxy is looked up here, once per origin
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=_AUTO_HEADERS,
            timeout=aiohttp.ClientTimeout(total=None),
            max_line_size=_MAX_HEAD_FIELD,
            max_field_size=_MAX_HEAD_FIELD,
        )
        return self._session

    def _client_timeout(self, connect: float | None, read: float | None) -> aiohttp.ClientTimeout:
        key = (connect, read)
        found = self._client_timeouts.get(key)
        if found is None:
            # the connect timeout covers name resolution, TCP and TLS, as httpcore's does
            found = aiohttp.ClientTimeout(total=None, connect=connect, sock_read=read)
            if len(self._client_timeouts) < 64:
                self._client_timeouts[key] = found
        return found

    async def _proxy(self, url: URL) -> tuple[URL | None, str | None]:
        """The proxy for ``url``'s origin from the environment (``trust_env``) and its
        ``Proxy-Authorization``, looked up once per origin: aiohttp's own lookup reads
        the environment and ``~/.netrc`` in a thread for every request."""
        if not self._trust_env:
            return None, None
        key = (url.scheme, url.host, url.port)
        found = self._proxies.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            try:
                proxy, auth = await asyncio.to_thread(get_env_proxy_for_url, url)
            except LookupError:
                found = None
            else:
                found = (proxy, auth.encode() if auth else None)
            if len(self._proxies) < 64:
                self._proxies[key] = found
        return found if isinstance(found, tuple) else (None, None)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(
                f"Request URL has an unsupported protocol '{request.url.scheme}://'.",
                request=request,
            )
        session = self._session or self._open()
        url = URL(str(request.url), encoded=True)
        proxy, proxy_auth = await self._proxy(url)
        connect, read, write, pool = _timeouts(request)
        body = await request.aread()
        await self._slots.take(request, pool)
        writing = _Writing(body, write) if len(body) > _UNTIMED_BODY else None
        try:
            headers = CIMultiDict(
                (key.decode("latin-1"), value.decode("latin-1"))
                for key, value in request.headers.raw
            )
            proxy_headers = None
            if proxy_auth is not None:
                # to the proxy itself: in the request, or in the CONNECT of a tunnel
                if url.scheme == "http":
                    headers["Proxy-Authorization"] = proxy_auth
                else:
                    proxy_headers = {"Proxy-Authorization": proxy_auth}
            call = session.request(
                request.method,
                url,
                headers=headers,
                proxy=proxy,
                proxy_headers=proxy_headers,
                data=(writing.pieces() if writing is not None else body) if body else None,
                allow_redirects=False,
                timeout=self._client_timeout(connect, read),
            )
            if writing is None:
                response = await call
            else:
                async with asyncio.timeout(None) as writing.scope:
                    response = await call
                writing.scope = None
        except (TimeoutError, aiohttp.ClientError, OSError) as exc:
            self._slots.give()
            raise _map_send(exc, request, writing) from exc
        except BaseException:
            self._slots.give()
            raise
        connection = response.connection
        if connection is not None:  # None: the whole answer came with its head
            ack_now(connection.transport)
        return httpx.Response(
            response.status,
            headers=list(response.raw_headers),
            stream=_Body(response, request, self._slots, read),
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": (response.reason or "").encode("latin-1", "replace"),
            },
        )

    async def aclose(self) -> None:
        self._closed = True
        session, self._session = self._session, None
        if session is not None:
            await session.close()
