"""The observer of a streamed response: chunks to SSE frames, keep-alives, backpressure.

Each chunk is encoded to its SSE frame (``data: {json}``) as it arrives; the frames
that wait while a send is in progress go out together in the next write. One timer
per stream marks ``keep_alive`` seconds without a send (the sender then sends
a keep-alive comment) and checks the send in progress against its timeout. While
more than 256 KiB of frames wait, the upstream read is held (the stream's
:class:`~rxgem.bridge.FlowGate`).

:class:`FrameBuffer` is all of that but the encoding; :class:`Frames` frames chat
chunks, and :class:`~rxgem.server.responses.ResponsesAnswer` Responses events.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

from reactivex import abc

from ...bridge import FlowGate
from ...core import ChatCompletionChunk
from ..observe import AccessRecord
from ._io import Sender
from ._sse import chunk_frame

__all__ = ["FrameBuffer", "Frames", "WatchedFrames"]

T = TypeVar("T")

_HIGH_WATER: Final = 256 * 1024


class FrameBuffer(abc.ObserverBase[T]):
    """The observer of a streamed response but its ``on_next``: the frames waiting for
    the sender, joined into one write, and one timer per stream for keep-alives
    (re-armed only when it fires, never per chunk).

    While more than ``_HIGH_WATER`` bytes wait for the sender, the upstream read is
    held (the gate), as a slow client's sends hold it.
    """

    __slots__ = (
        "_holding",
        "_on_stall",
        "_send_timeout",
        "_sender",
        "_waiter",
        "data",
        "done",
        "error",
        "finish_reasons",
        "gate",
        "keep_alive",
        "last_sent",
        "loop",
        "record",
        "send_usage",
        "silent",
        "timer",
    )

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        gate: FlowGate,
        record: AccessRecord,
        send_usage: bool,
        keep_alive: float,
    ) -> None:
        self.loop = loop
        self.gate = gate
        self.record = record
        self.send_usage = send_usage
        self.keep_alive = keep_alive
        self.data = bytearray()
        self.finish_reasons: dict[int, str] = {}
        self.done = False
        self.error: Exception | None = None
        self.silent = False
        self.last_sent = loop.time()
        self._waiter: asyncio.Future[None] | None = None
        self._holding = False
        self.timer: asyncio.TimerHandle | None = loop.call_later(keep_alive, self._tick)
        self._sender: Sender | None = None
        self._send_timeout = 0.0
        self._on_stall: Callable[[], None] | None = None

    def watch(self, sender: Sender, timeout: float, on_stall: Callable[[], None]) -> None:
        """Call ``on_stall`` when one of ``sender``'s sends waits over ``timeout`` seconds
        (checked when the timer fires: at most ``min(keep_alive, timeout)`` late)."""
        self._sender = sender
        self._send_timeout = timeout
        self._on_stall = on_stall

    # the observer side (on the event loop, from the upstream read task)

    def push(self, frame: bytes) -> None:
        """Queue ``frame`` for the sender (holding the upstream read past the high-water
        mark) and wake it."""
        self.data += frame
        if len(self.data) > _HIGH_WATER and not self._holding:
            self._holding = True
            self.gate.hold()
        self._wake()

    def on_error(self, error: Exception) -> None:
        self.error = error
        self.done = True
        self._wake()

    def on_completed(self) -> None:
        self.done = True
        self._wake()

    # the sender side

    def take(self) -> bytes:
        """The frames waiting, joined, and the buffer emptied."""
        data = bytes(self.data)
        self.data.clear()
        if self._holding:
            self._holding = False
            self.gate.release()
        return data

    def sent(self, now: float) -> None:
        self.last_sent = now
        self.silent = False

    async def wait(self) -> None:
        """Until there is something to send: frames, the end, or ``keep_alive`` of silence."""
        if self.data or self.done or self.silent:
            return
        waiter = self._waiter = self.loop.create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    def close(self) -> None:
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self._holding:
            self._holding = False
            self.gate.release()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _tick(self) -> None:
        sender = self._sender
        since = sender.sending_since if sender is not None else None
        if since is not None and time.monotonic() - since >= self._send_timeout:
            self.timer = None
            if self._on_stall is not None:
                self._on_stall()
            return
        idle = self.loop.time() - self.last_sent
        if idle >= self.keep_alive:
            if not self.data and not self.done:
                self.silent = True  # the sender sends a keep-alive, then calls sent()
                self._wake()
            idle = 0.0
        delay = self.keep_alive - idle
        if sender is not None:
            delay = min(delay, self._send_timeout)
        self.timer = self.loop.call_later(delay, self._tick)


class Frames(FrameBuffer[ChatCompletionChunk]):
    """The observer of a streamed chat completion: each chunk encoded to its SSE frame
    (``data: {json}``) at once."""

    __slots__ = ()

    def on_next(self, chunk: ChatCompletionChunk) -> None:
        telemetry = self.record.telemetry
        if chunk.usage is not None:
            self.record.used(chunk.usage)
            if not chunk.choices and not self.send_usage:
                return
        if telemetry is not None:
            telemetry.chunk(time.perf_counter())
            for choice in chunk.choices:
                if choice.finish_reason is not None:
                    self.finish_reasons[choice.index] = choice.finish_reason
        self.push(chunk_frame(chunk))


class WatchedFrames(Frames):
    """:class:`Frames` that also show each chunk to ``watch`` (what signature memory
    collects) before it is framed."""

    __slots__ = ("_watch",)

    def __init__(self, watch: Callable[[ChatCompletionChunk], None], *args: Any) -> None:
        super().__init__(*args)
        self._watch = watch

    def on_next(self, chunk: ChatCompletionChunk) -> None:
        self._watch(chunk)
        super().on_next(chunk)
