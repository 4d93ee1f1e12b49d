"""The live inspector's routes: the page at ``/inspect``, its event feed and downloads.

:class:`InspectorGate` is ASGI middleware, installed only with ``inspect`` on, inside
the ``Host`` check and outside CORS (so no ``Access-Control-*`` header ever goes on
these answers). It answers the ``/inspect`` paths itself and, for every other request,
notes its route and request id for the capture (:mod:`rxgem.server._inspector`).

Access, with client tokens: ``Authorization: Bearer <token>``, or the cookie the page
sets when opened once as ``/inspect?token=<token>`` (``HttpOnly``, ``SameSite=Strict``,
``Path=/inspect``; the page then reloads without the token in its address). Open auth:
no check, as for the API.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import re
import secrets
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import parse_qsl

import msgspec
from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ._access import access_record
from ._admission import Drain
from ._auth import authorize
from ._errors import ErrorReply, not_found, unauthorized
from ._handling import reply_response
from ._inspect_assets import PAGE, SCRIPT
from ._inspect_session import SESSION_SECONDS, Sessions
from ._inspector import Exchange, Inspector, serving_request
from ._settings import ServerSettings

__all__ = ["INSPECT_PATH", "OFF_ROUTES", "InspectorGate", "draw"]

INSPECT_PATH: Final = "/inspect"
_COOKIE: Final = "rxgem_inspect"
_EXCHANGE: Final = re.compile(r"/exchanges/([0-9]{1,12})\.json")
"""An exchange's download, after ``/inspect`` (ASCII digits only: ``int()`` takes any
Unicode digit, and refuses more than 4,300 of them)."""
_WAKE: Final = 1.0
"""Seconds the feed waits for news before it sends a comment (and sees a shutdown)."""
_THROTTLE: Final = 0.1
DRAWN_PIECES: Final = 40
"""How many pieces of a response its diagram shows (the first ones)."""
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


async def _off(request: Request) -> Response:
    """What ``/inspect`` says on a server without the inspector: how to turn it on."""
    reply = not_found(
        "the live inspector is off on this server: start it with rxgem serve --inspect"
        " (or RXGEM_INSPECT=1), then open /inspect"
    )
    return reply_response(reply, access_record(request.scope))


OFF_ROUTES: Final = (Route(INSPECT_PATH, _off), Route(INSPECT_PATH + "/{rest:path}", _off))
"""The routes of a server without the inspector under ``/inspect`` (any method)."""


def draw(exchange: Exchange, options: dict[str, Any]) -> str:
    """The marble diagram (SVG) of the exchange's response bytes so far, replayed
    through the stages of its route (``options``: the server's pipeline options).

    Of its first :data:`DRAWN_PIECES` pieces only: a diagram's cost grows with its
    marbles, and one past that many is more than a page shows (the download has all)."""
    # imported here: a server without the inspector never loads rxgem.viz
    from reactivex.testing import TestScheduler

    from ..operators import pipeline_stages, responses_stages
    from ..viz import Recorder

    # redacted joined, all of them: a secret may straddle two pieces, or the 40th's end
    pieces = exchange.pieces[:DRAWN_PIECES]
    redacted = [piece for piece in exchange.response_pieces()[:DRAWN_PIECES] if piece]
    if not redacted or exchange.status != 200:
        return ""
    made: dict[str, Any] = {
        **options,
        "id_factory": lambda: "inspected",
        "clock": lambda: 0.0,
    }
    if exchange.route.startswith("/v1/responses"):
        stages = responses_stages(**made)
    else:
        stages = pipeline_stages(**made)
    scheduler = TestScheduler()
    end = (len(redacted) + 1) * 10
    complete = exchange.done and exchange.error is None and len(exchange.pieces) == len(pieces)

    def subscribe(
        observer: abc.ObserverBase[bytes], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        def emit(piece: bytes) -> Callable[[abc.SchedulerBase, Any], None]:
            return lambda _scheduler, _state: observer.on_next(piece)

        handles = [
            scheduler.schedule_absolute((i + 1) * 10, emit(piece))
            for i, piece in enumerate(redacted)
        ]
        if complete:
            handles.append(scheduler.schedule_absolute(end, lambda _s, _t: observer.on_completed()))
        return CompositeDisposable(handles)

    recorder = Recorder(scheduler)
    stream: Observable[Any] = Observable(subscribe).pipe(recorder.tap("bytes"))
    for name, operator in stages:
        stream = stream.pipe(operator, recorder.tap(name))
    stream.subscribe(on_error=lambda _: None, scheduler=scheduler)
    scheduler.start()
    return recorder.diagram(x="order").to_svg()


async def _summary(exchange: Exchange, options: dict[str, Any]) -> dict[str, Any]:
    key = (min(len(exchange.pieces), DRAWN_PIECES), exchange.done and exchange.error is None)
    problem: str | None = None
    if exchange.drawn is not None and exchange.drawn[0] == key:
        svg = exchange.drawn[1]  # drawn already (for another page, or nothing new in it)
    else:
        try:  # on a thread: the server's loop goes on answering meanwhile
            svg = await asyncio.to_thread(draw, exchange, options)
        except Exception as exc:  # a drawing that fails must not take the feed down
            svg = ""
            problem = f"no diagram: {type(exc).__name__}"
        else:
            exchange.drawn = (key, svg)
    return {
        "id": exchange.number,
        "route": exchange.route,
        "request_id": exchange.request_id,
        "model": exchange.model,
        "status": exchange.status,
        "error": exchange.error or problem,
        "started": exchange.started,
        "first_byte_ms": None if exchange.first_byte is None else exchange.first_byte * 1000,
        "duration_ms": None if exchange.ended is None else exchange.ended * 1000,
        "bytes": exchange.size,
        "request_bytes": exchange.body_size,
        "truncated": exchange.truncated,
        "pieces": len(exchange.pieces),
        "drawn_pieces": min(len(exchange.pieces), DRAWN_PIECES),
        "done": exchange.done,
        "svg": svg,
    }


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
        self.settings = settings
        self.chat_options, self.responses_options = options
        self.sessions = Sessions(secrets.token_bytes(32))
        # loaded now, not while the first exchange waits to be drawn
        importlib.import_module("rxgem.viz")
        importlib.import_module("reactivex.testing")

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
            # the token once in the address: into a cookie, then out of the address
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
            await _until_disconnect(self.feed(send), receive)
        elif match := _EXCHANGE.fullmatch(path, len(INSPECT_PATH)):
            await self.download(int(match.group(1)), send)
        else:
            await _send(send, 404, b"text/plain", b"not found")

    async def refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        reply = unauthorized(
            "the inspector needs a client token: open /inspect?token=<token> once,"
            " or send Authorization: Bearer <token>"
        )
        await reply_response(reply, access_record(scope))(scope, receive, send)

    async def download(self, number: int, send: Send) -> None:
        exchange = self.inspector.find(number)
        if exchange is None:
            await _send(send, 404, b"text/plain", b"no such exchange (it may have been dropped)")
            return
        disposition = f'attachment; filename="rxgem-exchange-{exchange.number}.json"'
        await _send(
            send,
            200,
            b"application/json",
            msgspec.json.encode(exchange.cassette()),
            [(b"content-disposition", disposition.encode())],
        )

    def options_of(self, exchange: Exchange) -> dict[str, Any]:
        if exchange.route.startswith("/v1/responses"):
            return self.responses_options
        return self.chat_options

    async def feed(self, send: Send) -> None:
        """Server-sent events: each exchange as it changes (``data:`` its summary)."""
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), *_HEADERS],
            }
        )
        sent: dict[int, int] = {}
        since = -1
        while not self.drain.started:  # a shutdown ends the feed, not waits for it
            frames: list[bytes] = []
            since = self.inspector.version
            kept = list(self.inspector.exchanges)
            for exchange in kept:
                if sent.get(exchange.number) != exchange.version:
                    sent[exchange.number] = exchange.version
                    summary = await _summary(exchange, self.options_of(exchange))
                    frames.append(b"data: " + msgspec.json.encode(summary) + b"\n\n")
            if frames:  # what the page still shows of the ones dropped goes too
                numbers = [e.number for e in kept]
                sent = {n: sent[n] for n in numbers}
                frames.append(b"event: keep\ndata: " + msgspec.json.encode(numbers) + b"\n\n")
            await send(
                {
                    "type": "http.response.body",
                    "body": b"".join(frames) or b": -\n\n",
                    "more_body": True,
                }
            )
            started = time.monotonic()
            await self.inspector.wait(since, _WAKE)
            await asyncio.sleep(max(0.0, _THROTTLE - (time.monotonic() - started)))
        await send({"type": "http.response.body", "body": b""})


async def _until_disconnect(feed: Any, receive: Receive) -> None:
    """Run ``feed`` until it ends (a shutdown) or the client leaves."""
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
