"""FakeGemini over HTTP/2: one response on one stream (``FakeGemini(http2=True)``).

The routing and the counts are FakeGemini's own (:meth:`FakeGemini._route`,
:meth:`FakeGemini._finished`); the h2c plumbing is :mod:`._loopback_h2`. This module
sends one :class:`FakeResponse` the way the HTTP/1.1 path does, in HTTP/2's framing:
the head as a HEADERS frame, every piece of the body as its own DATA frame (a 200
stream has no ``Content-Length``, the others have one), keep-alive comments as DATA
between events, and ``drop_after`` as a ``RST_STREAM`` after the bytes it allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from ._fake_response import response_fields
from ._http_wire import Request
from ._loopback_h2 import ClientGone, H2Stream, LoopbackH2Server, ServerClosing

if TYPE_CHECKING:
    from ._fake_gemini import FakeGemini

__all__ = ["LoopbackH2Server", "answer"]

_BLANK_LINE_ENDS: Final = (b"\n\n", b"\r\r", b"\r\n\r\n", b"\n\r\n", b"\r\n\n", b"\r\r\n")
_KEEPALIVE: Final = b": keep-alive\n\n"
# Connection-specific fields: HTTP/2 forbids them (RFC 9113, 8.2.2).
_HOP_BY_HOP: Final = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade"}
)


async def answer(fake: FakeGemini, stream: H2Stream, request: Request) -> None:
    """Route ``request`` as FakeGemini does and send its response on ``stream``."""
    response = fake._route(request)
    counted = False

    def last_write_next() -> None:
        nonlocal counted
        fake._finished(completed=True)
        counted = True

    try:
        if response.delay > 0:
            await stream.idle(response.delay)
        pieces = response._pieces()
        is_stream = response._is_stream()
        size = sum(map(len, pieces))
        framing: Literal["close", "length"] = "close" if is_stream else "length"
        fields = response_fields(response, framing, size, keep_alive=True)
        headers = {k: v for k, v in fields.items() if k.lower() not in _HOP_BY_HOP}
        head_only = request.method == "HEAD"
        drop_after = response.drop_after
        if head_only or (not pieces and drop_after is None):
            last_write_next()
            await stream.respond(response._status(), headers, end=True)
            return
        await stream.respond(response._status(), headers)
        sent = 0
        tail = b""
        for number, piece in enumerate(pieces):
            if number and response.pause > 0:
                between_events = tail.endswith(_BLANK_LINE_ENDS)
                every = response.keepalive if is_stream and between_events else None
                await stream.idle(response.pause, every=every, heartbeat=_KEEPALIVE)
            if stream.closing:
                raise ServerClosing
            if drop_after is not None and sent + len(piece) > drop_after:
                data = piece[: drop_after - sent]
                if data:
                    await stream.send(data)
                break
            last = number == len(pieces) - 1
            if last and drop_after is None:
                last_write_next()
            await stream.send(piece, end=last and drop_after is None)
            sent += len(piece)
            tail = (tail + piece)[-4:]
        if drop_after is not None:
            stream.reset()
    except ClientGone:
        fake._finished(completed=False, disconnected=True, undo=counted)
    except ServerClosing:
        fake._finished(completed=False, undo=counted)
        raise
