"""Backpressure from a slow client to the upstream read.

rxgem's transport pushes each body piece through the pipeline as soon as it is read,
and :func:`~rxgem.aiterate` queues what the pipeline emits: alone, a client that
reads slowly would let the whole upstream response pile up in memory. So the
server's shared ``httpx.AsyncClient`` reads through :class:`GatedTransport`: for a
request made while a :class:`FlowGate` is set in :data:`current_gate` (the
streaming response sets one in the task that subscribes, and the transport's
task inherits it), the next piece of the upstream body is read only when no send to
the client is in progress. A send that does not complete at once is the ASGI
server's flow control saying the client is behind (uvicorn's transport buffer is
full); meanwhile the upstream socket is not read, its kernel buffer fills, and TCP
slows Gemini down. What is buffered per stream is bounded by about one upstream
read (64 KiB) plus the socket buffers.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncIterator
from typing import Final

import httpx

__all__ = ["FlowGate", "GatedTransport", "current_gate"]


class FlowGate:
    """One streaming response's flow state: is a send to the client in progress?"""

    __slots__ = ("_idle", "_sending")

    def __init__(self) -> None:
        self._sending = 0
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def sending(self) -> bool:
        """Whether a send to the client has not completed yet."""
        return self._sending > 0

    def begin(self) -> None:
        """A send to the client starts."""
        self._sending += 1
        self._idle.clear()

    def end(self) -> None:
        """A send to the client completed (or failed)."""
        self._sending -= 1
        if self._sending <= 0:
            self._sending = 0
            self._idle.set()

    async def ready(self) -> None:
        """Return once no send to the client is in progress."""
        while not self._idle.is_set():
            await self._idle.wait()


current_gate: Final[contextvars.ContextVar[FlowGate | None]] = contextvars.ContextVar(
    "rxgem_server_flow_gate", default=None
)
"""The gate of the response whose task is running, read by :class:`GatedTransport`."""


class _GatedStream(httpx.AsyncByteStream):
    """A response body that waits at its gate before each read."""

    def __init__(self, inner: httpx.AsyncByteStream, gate: FlowGate) -> None:
        self._inner = inner
        self._gate = gate

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pieces = self._inner.__aiter__()
        while True:
            await self._gate.ready()
            try:
                piece = await pieces.__anext__()
            except StopAsyncIteration:
                return
            yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()


class GatedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose response bodies honour the caller's :class:`FlowGate`."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        gate = current_gate.get()
        response = await self._inner.handle_async_request(request)
        if gate is not None and isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _GatedStream(response.stream, gate)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()
