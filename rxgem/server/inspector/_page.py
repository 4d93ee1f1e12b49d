"""The live inspector's routes: the page at ``/inspect``, its event feed, its diagrams and
downloads.

:class:`InspectorGate` is ASGI middleware, installed only with ``inspect`` on, inside
the ``Host`` check and admission (each of its requests counts toward
``max_concurrent_requests``, an open event feed too) and outside CORS (so no
``Access-Control-*`` header ever goes on these answers). It answers the ``/inspect``
paths itself and, for every other request, notes its route and request id for the
capture (:mod:`rxgem.server.capture._inspector`). Everything it shows is read from the server's
spool (:mod:`rxgem.server.capture._spool`), so every worker shows every worker's
exchanges.

Access, with client tokens: ``Authorization: Bearer <token>``, or the session cookie the
page sets when opened once as ``/inspect?token=<token>``
(:mod:`rxgem.server.inspector._session`; the page then reloads without the token in its
address). Open auth: no check, as for the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import re
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import parse_qsl

import msgspec
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...replies import ErrorReply, busy, unauthorized
from ...transport import MIN_SECRET
from .._handling import reply_response
from ..capture import Inspector, Kept, serving_request
from ..guard import Drain, authorize
from ..observe import access_record
from ..run import ABORT_EXTENSION
from ..settings import ServerSettings
from ._assets import PAGE, SCRIPT
from ._session import SESSION_SECONDS, Sessions

__all__ = ["INSPECT_PATH", "MAX_FEEDS", "MAX_SVG_BYTES", "InspectorGate"]

INSPECT_PATH: Final = "/inspect"
_COOKIE: Final = "rxgem_inspect"
_EXCHANGE: Final = re.compile(r"/exchanges/([0-9]{1,12})\.(json|svg)")
"""An exchange's download or diagram, after ``/inspect`` (ASCII digits only: ``int()``
takes any Unicode digit, and refuses more than 4,300 of them)."""
_POLL: Final = 0.25
"""Seconds the feed waits before looking at the spool again (the other workers' news)."""
_THROTTLE: Final = 0.1
_COMMENT_EVERY: Final = 4
"""Empty looks between two comments the feed sends (one a second: a gone client shows)."""
_FEED_SECONDS: Final = 600.0
"""How long one event feed lasts; then it ends, and the page's ``EventSource`` opens
another (so a client that went silent holds a feed's place this long at most)."""
MAX_FEEDS: Final = 8
"""Event feeds open at once in one worker; one more is a 503 (``Retry-After``)."""
MAX_SVG_BYTES: Final = 1024 * 1024
"""The largest diagram sent; a larger one is a 413 saying to download the exchange."""
_DRAWN_BYTES: Final = 16 * 1024 * 1024
"""The diagrams a worker keeps drawn, in bytes (each at most :data:`MAX_SVG_BYTES`)."""
_GONE: Final = b"no such exchange (it may have been dropped)"
_HEADERS: Final = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'unsafe-inline';"
        b" connect-src 'self'; img-src data:; frame-ancestors 'none'; base-uri 'none';"
        b" form-action 'none'",
    ),
]


class _Stalled(Exception):
    """The client took in nothing of the feed for ``send_timeout`` seconds."""


class InspectorGate:
    """ASGI middleware: the inspector's routes, and the capture's request context."""

    def __init__(
        self,
        app: ASGIApp,
        inspector: Inspector,
        settings: ServerSettings,
        options: tuple[dict[str, Any], dict[str, Any]],
        drain: Drain,
    ) -> None:
        self.app = app
        self.drain = drain
        self.inspector = inspector
        self.spool = inspector.spool
        self.settings = settings
        self.chat_options, self.responses_options = options
        self.sessions = Sessions(self.spool.key)
        self.feeds = 0
        self.secrets = [s for s in settings.secrets if len(s) >= MIN_SECRET]
        self._drawn: dict[int, tuple[int, int, bytes]] = {}
        """Exchange number: the version drawn, and the answer (status, body)."""
        self._drawing = asyncio.Lock()  # one diagram at a time: the loop's thread comes first
        # loaded now, not while the first exchange waits to be drawn
        self._draw: Callable[[Kept, dict[str, Any]], str] = importlib.import_module(
            "rxgem.server.inspector._draw"
        ).draw

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path != INSPECT_PATH and not path.startswith(INSPECT_PATH + "/"):
            record = access_record(scope)
            serving_request.set((path, record.request_id if record is not None else ""))
            await self.app(scope, receive, send)
            return
        await self.inspect(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        """Whether the request carries a client token, or a session cookie of this server."""
        headers: dict[bytes, bytes] = dict(scope["headers"])
        authorization = headers.get(b"authorization")
        if authorization:
            token = authorization.decode("latin-1")
            return not isinstance(authorize(token, self.settings), ErrorReply)
        if self.settings.auth_mode == "open":
            return True
        for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
            name, _, value = part.strip().partition("=")
            if name == _COOKIE and self.sessions.valid(value):
                return True
        return False

    async def inspect(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if scope["method"] != "GET":
            await _send(send, 405, b"text/plain", b"GET only")
            return
        if path == INSPECT_PATH and "token" in query:
            # the token once in the address: a session into a cookie, then out of the address
            allowed = authorize("Bearer " + query["token"], self.settings)
            if isinstance(allowed, ErrorReply):
                await self.refuse(scope, receive, send)
                return
            # a session, never the token: cookies ignore ports, so every service on
            # this host under /inspect gets the cookie
            cookie = f"{_COOKIE}={self.sessions.issue()}; Path={INSPECT_PATH};"
            cookie += f" Max-Age={SESSION_SECONDS}; HttpOnly; SameSite=Strict"
            await _send(
                send,
                303,
                b"text/plain",
                b"",
                [(b"location", INSPECT_PATH.encode()), (b"set-cookie", cookie.encode())],
            )
            return
        if not self._allowed(scope):
            await self.refuse(scope, receive, send)
            return
        if path == INSPECT_PATH:
            await _send(send, 200, b"text/html; charset=utf-8", PAGE)
        elif path == INSPECT_PATH + "/app.js":
            await _send(send, 200, b"text/javascript; charset=utf-8", SCRIPT)
        elif path == INSPECT_PATH + "/events":
            await self.open_feed(scope, receive, send)
        elif match := _EXCHANGE.fullmatch(path, len(INSPECT_PATH)):
            number, kind = int(match.group(1)), match.group(2)
            await (self.download(number, send) if kind == "json" else self.diagram(number, send))
        else:
            await _send(send, 404, b"text/plain", b"not found")

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        reply = unauthorized(
            "the inspector needs a client token: open /inspect?token=<token> once,"
            " or send Authorization: Bearer <token>"
        )
        await reply_response(reply, access_record(scope))(scope, receive, send)

    async def download(self, number: int, send: Send) -> None:
        kept = await asyncio.to_thread(self.spool.read, number)
        if kept is None:
            await _send(send, 404, b"text/plain", _GONE)
            return
        disposition = f'attachment; filename="rxgem-exchange-{number}.json"'
        await _send(
            send,
            200,
            b"application/json",
            msgspec.json.encode(kept.cassette(self.secrets)),
            [(b"content-disposition", disposition.encode())],
        )

    async def diagram(self, number: int, send: Send) -> None:
        """The exchange's diagram as it stands (drawn once per version in this worker)."""
        async with self._drawing:
            kept = await asyncio.to_thread(self.spool.read, number)
            if kept is None:
                await _send(send, 404, b"text/plain", _GONE)
                return
            version = kept.header["version"]
            known = self._drawn.get(number)
            if known is None or known[0] != version:
                try:  # on a thread: the server's loop goes on answering meanwhile
                    svg = await asyncio.to_thread(self._draw, kept, self.options_of(kept))
                except Exception as exc:  # a drawing that fails must not fail the page
                    problem = f"no diagram: {type(exc).__name__}"
                    await _send(send, 500, b"text/plain; charset=utf-8", problem.encode())
                    return
                known = (version, *_answer(svg.encode()))
                self._remember(number, known)
        _, status, data = known
        kind = b"image/svg+xml; charset=utf-8" if status == 200 else b"text/plain; charset=utf-8"
        await _send(send, status, kind, data)

    def _remember(self, number: int, drawn: tuple[int, int, bytes]) -> None:
        """Keep a diagram drawn, the oldest going past :data:`_DRAWN_BYTES` in all."""
        self._drawn.pop(number, None)
        self._drawn[number] = drawn
        while sum(len(d[2]) for d in self._drawn.values()) > _DRAWN_BYTES:
            del self._drawn[next(iter(self._drawn))]

    def options_of(self, kept: Kept) -> dict[str, Any]:
        if kept.header["route"].startswith("/v1/responses"):
            return self.responses_options
        return self.chat_options

    async def open_feed(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The event feed, if fewer than :data:`MAX_FEEDS` are open in this worker."""
        if self.feeds >= MAX_FEEDS:
            reply = busy(f"{MAX_FEEDS} inspector pages are open here already: close one")
            reply = dataclasses.replace(reply, headers=(("retry-after", "5"),))
            await reply_response(reply, access_record(scope))(scope, receive, send)
            return
        self.feeds += 1
        try:
            await _until_disconnect(self.feed(scope, send), receive)
        finally:
            self.feeds -= 1

    async def feed(self, scope: Scope, send: Send) -> None:
        """Server-sent events: each exchange as it changes (``data:`` its summary), any
        worker's; a client that takes in nothing for ``send_timeout`` seconds is cut off,
        and any feed ends after :data:`_FEED_SECONDS` (the page opens another)."""
        timeout = self.settings.send_timeout

        async def sending(message: Message) -> None:
            try:
                async with asyncio.timeout(timeout):
                    await send(message)
            except TimeoutError:
                abort = scope.get("extensions", {}).get(ABORT_EXTENSION)
                if abort is not None:
                    abort()  # unsent data dropped, the connection closed
                    await asyncio.sleep(0)  # ... and uvicorn told so, before the feed ends
                raise _Stalled from None

        start = {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/event-stream"), *_HEADERS],
        }
        sent: dict[int, int] = {}
        quiet = 0
        try:
            await sending(start)
            ends = time.monotonic() + _FEED_SECONDS
            # a shutdown ends the feed, not waits for it
            while not self.drain.started and time.monotonic() < ends:
                since = self.inspector.version
                summaries = await asyncio.to_thread(self.spool.summaries)
                frames = [
                    b"data: " + msgspec.json.encode(summary) + b"\n\n"
                    for summary in summaries
                    if sent.get(summary["id"]) != summary["version"]
                ]
                if frames or len(sent) != len(summaries):
                    # what the page still shows of the ones dropped goes too
                    sent = {summary["id"]: summary["version"] for summary in summaries}
                    numbers = msgspec.json.encode(list(sent))
                    frames.append(b"event: keep\ndata: " + numbers + b"\n\n")
                quiet = 0 if frames else quiet + 1
                if frames or quiet % _COMMENT_EVERY == 1:
                    body = b"".join(frames) or b": -\n\n"
                    await sending({"type": "http.response.body", "body": body, "more_body": True})
                started = time.monotonic()
                await self.inspector.wait(since, _POLL)
                await asyncio.sleep(max(0.0, _THROTTLE - (time.monotonic() - started)))
            await sending({"type": "http.response.body", "body": b""})
        except _Stalled:
            return


def _answer(svg: bytes) -> tuple[int, bytes]:
    """A diagram's answer: itself, or a 413 saying why not (past :data:`MAX_SVG_BYTES`)."""
    if len(svg) <= MAX_SVG_BYTES:
        return 200, svg
    message = (
        f"the diagram is {len(svg) // 1024} KiB, over the page's {MAX_SVG_BYTES // 1024} KiB:"
        " download the exchange to see it all"
    )
    return 413, message.encode()


async def _until_disconnect(feed: Any, receive: Receive) -> None:
    """Run ``feed`` until it ends (a shutdown, a stalled client) or the client leaves."""
    task = asyncio.ensure_future(feed)

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    watcher = asyncio.ensure_future(watch())
    try:
        await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def _send(
    send: Send,
    status: int,
    content_type: bytes,
    body: bytes,
    headers: list[tuple[bytes, bytes]] | None = None,
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *_HEADERS,
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
