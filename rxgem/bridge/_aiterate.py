"""``aiterate``: an Observable as an async iterator, for ``async def`` code and Jupyter."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, TypeVar

from reactivex import Observable, abc
from reactivex.scheduler.eventloop import AsyncIOScheduler

from ._base import DONE, ERROR, NEXT, Bridge
from ._gate import MAX_BUFFERED, RESUME_AT, FlowGate, ThreadGate, current_gate

__all__ = ["aiterate"]

T = TypeVar("T")


class _AsyncSink(abc.ObserverBase[Any]):
    """The observer of an async bridge: a deque of notifications and one waiter.

    Much lighter than an ``asyncio.Queue`` (whose four deques and ``Event`` cost
    about 3 KB per open stream). Notifications from another thread are handed to
    the loop with ``call_soon_threadsafe``. It holds no reference to the iterator,
    so dropping the iterator still disposes of the subscription at once.

    Past MAX_BUFFERED items it holds ``gate`` (items on the loop) or blocks the
    producing thread at ``thread_gate`` (items from elsewhere), until the consumer
    is down to RESUME_AT. ``posted`` and ``landed`` count the items handed over from
    other threads and those already appended, so the producing thread sees what is
    in transit too; each is written by one thread only.
    """

    __slots__ = (
        "closed",
        "full",
        "gate",
        "items",
        "landed",
        "loop",
        "posted",
        "thread_gate",
        "waiter",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, gate: FlowGate) -> None:
        self.loop = loop
        self.gate = gate
        self.items: deque[tuple[int, Any]] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.full = False  # holding the gate
        self.thread_gate: ThreadGate | None = None  # made when a producing thread first waits
        self.posted = 0
        self.landed = 0
        self.closed = False

    def _put(self, item: tuple[int, Any]) -> None:
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._deliver(item)
        elif not loop.is_closed():
            self.posted += 1
            loop.call_soon_threadsafe(self._land, item)
            # a thread that runs another event loop is never blocked
            if running is None and item[0] == NEXT and self._backlog() >= MAX_BUFFERED:
                thread_gate = self.thread_gate
                if thread_gate is None:
                    thread_gate = self.thread_gate = ThreadGate()
                thread_gate.wait_while(self._backlog, self._stopped, loop)

    def _backlog(self) -> int:
        return len(self.items) + self.posted - self.landed

    def _stopped(self) -> bool:
        return self.closed

    def _land(self, item: tuple[int, Any]) -> None:
        self.landed += 1
        if not self.closed:
            self._deliver(item)

    def _deliver(self, item: tuple[int, Any]) -> None:
        items = self.items
        items.append(item)
        if len(items) >= MAX_BUFFERED and not self.full:
            self.full = True
            self.gate.hold()
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def on_next(self, value: Any) -> None:
        self._put((NEXT, value))

    def on_error(self, error: Exception) -> None:
        self._put((ERROR, error))

    def on_completed(self) -> None:
        self._put((DONE, None))

    async def get(self) -> tuple[int, Any]:
        items = self.items
        while not items:
            waiter = self.waiter = self.loop.create_future()
            try:
                await waiter
            finally:
                self.waiter = None
        item = items.popleft()
        if len(items) <= RESUME_AT and (self.full or self.thread_gate is not None):
            self._drained()
        return item

    def _drained(self) -> None:
        if self.full:
            self.full = False
            self.gate.release()
        thread_gate = self.thread_gate
        if thread_gate is not None and thread_gate.waiting and self._backlog() <= RESUME_AT:
            thread_gate.wake()

    def close(self) -> None:
        self.closed = True  # before looking for a thread gate: one made later sees it
        if self.full and _on_loop(self.loop):  # the gate is the loop's alone
            self.full = False
            self.gate.release()
        thread_gate = self.thread_gate
        if thread_gate is not None:
            thread_gate.wake()
        self.items.clear()


class _AIterate(Bridge[T], AsyncIterator[T]):
    def __init__(self, source: Observable[T]) -> None:
        self._sink: _AsyncSink | None = None
        super().__init__(source)

    def __aiter__(self) -> _AIterate[T]:
        return self

    async def __anext__(self) -> T:
        if self._finished:
            raise StopAsyncIteration
        sink = self._sink
        if sink is None:
            loop = asyncio.get_running_loop()
            # a gate already set (rxgem serve's, held during sends) is shared
            gate = current_gate.get()
            token = None
            if gate is None:
                gate = FlowGate()
                token = current_gate.set(gate)  # from_gemini's task inherits it
            sink = self._sink = _AsyncSink(loop, gate)
            try:
                self._subscription = self._source.subscribe(sink, scheduler=AsyncIOScheduler(loop))
            finally:
                if token is not None:
                    current_gate.reset(token)
        kind, value = await sink.get()
        return self._outcome(kind, value, StopAsyncIteration)

    def _release(self) -> None:
        if self._sink is not None:
            self._sink.close()

    async def aclose(self) -> None:
        self.close()

    async def __aenter__(self) -> _AIterate[T]:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def aiterate(source: Observable[T]) -> _AIterate[T]:
    """An async iterator over ``source``'s items, for ``async def`` code and Jupyter.

    .. code::

        async for chunk in rxgem.aiterate(rxgem.stream_chat(request, model=m, client=aclient)):
            ...

    Subscribes with an ``AsyncIOScheduler`` on the running loop; items emitted on
    other threads are handed to the loop safely. Leaving early (``break``,
    ``aclose()``, the end of an ``async with`` block) disposes of the subscription.

    Once :data:`MAX_BUFFERED` items wait, ``from_gemini`` reads no more of the body
    until the consumer catches up (a source on another thread is blocked instead).
    """
    return _AIterate(source)
