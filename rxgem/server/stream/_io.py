"""One response's ASGI I/O: its sends, error replies, and watching for the client leaving.

:class:`Sender` wraps ``send`` with what the response needs to know: whether the
status went out, whether the body ended, and since when the send in progress has
waited (a slow client's stall clock). While a send is in progress it holds the
response's :class:`~rxgem.bridge.FlowGate`, so the upstream read waits for the client.
"""

from __future__ import annotations

import asyncio
import time
from typing import Final

from starlette.types import Message, Receive, Send

from ...bridge import FlowGate
from ...replies import ErrorReply

__all__ = ["JSON_HEADERS", "Sender", "reply_messages", "until_disconnect"]

JSON_HEADERS: Final = ((b"content-type", b"application/json"),)


async def _until_disconnect_message(receive: Receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


async def until_disconnect(receive: Receive, worker: asyncio.Future[None]) -> bool:
    """Wait for ``worker`` while watching ``receive``; True if the client left first.

    The client leaving cancels ``worker`` (and waits for it to clean up). An exception
    of ``worker`` propagates; so does a cancellation of the caller, after both tasks
    were cancelled and awaited. A ``worker`` cancelled by someone else also returns
    True: the caller knows whether it stopped the work itself.
    """
    watcher = asyncio.ensure_future(_until_disconnect_message(receive))
    try:
        await asyncio.wait((worker, watcher), return_when=asyncio.FIRST_COMPLETED)
    finally:
        watcher.cancel()
        if not worker.done():
            worker.cancel()
        await asyncio.wait((worker, watcher))
    if not watcher.cancelled():
        watcher.exception()  # a failing receive() counts as the client gone
    if worker.cancelled():
        return True
    worker.result()  # its exception, if any
    return False


def reply_messages(reply: ErrorReply) -> tuple[Message, Message]:
    """The ASGI messages of an error reply."""
    headers = [*JSON_HEADERS, *((k.encode(), v.encode()) for k, v in reply.headers)]
    start = {"type": "http.response.start", "status": reply.status, "headers": headers}
    return start, {"type": "http.response.body", "body": reply.json()}


class Sender:
    """``send`` with the response's state: started, finished, and its flow gate."""

    __slots__ = ("finished", "gate", "send", "sending_since", "started")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False
        self.finished = False
        self.gate: FlowGate | None = None
        self.sending_since: float | None = None
        """When the send in progress began (``time.monotonic()``), for the stall check."""

    async def start(self, status: int, headers: tuple[tuple[bytes, bytes], ...]) -> None:
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": headers})

    async def body(self, data: bytes, *, more: bool = True) -> None:
        gate = self.gate
        if gate is not None:
            gate.hold()
        self.sending_since = time.monotonic()
        try:
            await self.send({"type": "http.response.body", "body": data, "more_body": more})
            self.finished = not more
        finally:
            self.sending_since = None
            if gate is not None:
                gate.release()

    async def reply(self, reply: ErrorReply) -> None:
        start, body = reply_messages(reply)
        self.started = True
        await self.send(start)
        await self.send(body)
        self.finished = True
