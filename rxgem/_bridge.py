"""Bridges for code that does not want Rx: a blocking iterator and an async iterator.

Both subscribe lazily (at the first item requested) and dispose of the
subscription as soon as the consumer stops: at the end, on an error, on
``close()``/``aclose()``, when a ``with``/``async with`` block exits, or when the
iterator is dropped (``break`` out of a ``for`` loop) — so a stream from
``from_gemini`` closes its HTTP connection right away.

Both hold at most about :data:`MAX_BUFFERED` items for a consumer slower than the
source, by pushing back on the producer once that many wait, until the consumer is
down to :data:`_RESUME_AT`:

- a producer on another thread (``from_gemini``'s worker thread with an
  ``httpx.Client``) is blocked inside ``on_next``, so it reads no more of the body;
- ``aiterate`` holds the :class:`~rxgem.transport._flow.FlowGate` it set in the
  context of the subscription, so ``from_gemini``'s task with an
  ``httpx.AsyncClient`` waits before its next read. The items of the read in progress
  still arrive: the bound is exceeded by what one read (at most 64 KiB) decodes to.

A source that emits on the consumer's own thread (``reactivex.from_iterable``
during ``iterate``'s subscription, any source on ``aiterate``'s loop other than
``from_gemini``) cannot be made to wait without deadlocking, and its items are
already in memory: they are queued whatever their number.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from types import TracebackType
from typing import Any, Final, Generic, TypeVar

from reactivex import Observable, abc
from reactivex.scheduler.eventloop import AsyncIOScheduler

from .transport._flow import FlowGate, current_gate

__all__ = ["MAX_BUFFERED", "aiterate", "iterate"]

T = TypeVar("T")

_NEXT, _ERROR, _DONE = 0, 1, 2

MAX_BUFFERED: Final = 64
"""Items a bridge queues before it pushes back on the producer.

A chunk is typically well under 1 KB, so a stalled consumer holds tens of KB per
stream, under what the socket buffers hold anyway; and a consumer that keeps up
never gets this far behind, so the reader is never stopped for nothing.
"""
_RESUME_AT: Final = 16
"""The producer resumes once the consumer is down to this many: one wake-up per 48
items rather than one per item when the consumer is steadily slower."""


class _Room:
    """Where a producer thread waits while the consumer is too far behind."""

    __slots__ = ("event", "waiting")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.waiting = False

    def wait_while(
        self,
        backlog: Callable[[], int],
        stopped: Callable[[], bool],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """Block until ``backlog()`` is below :data:`MAX_BUFFERED` or ``stopped()``.

        The consumer calls :meth:`wake` once it is down to :data:`_RESUME_AT`, and
        when it stops (after setting what ``stopped`` reads). Clearing the event
        before checking again means a wake-up is never lost.
        """
        event = self.event
        while True:
            event.clear()
            self.waiting = True
            if stopped() or backlog() < MAX_BUFFERED:
                break
            # the timeout only matters if the consumer's loop closes under us
            woken = event.wait(None if loop is None else 1.0)
            if not woken and loop is not None and loop.is_closed():
                break
        self.waiting = False

    def wake(self) -> None:
        self.event.set()


class _Bridge(Generic[T]):
    """What both bridges share: a lazy subscription, disposed of once they stop."""

    def __init__(self, source: Observable[T]) -> None:
        self._source = source
        self._subscription: abc.DisposableBase | None = None
        self._finished = False

    def close(self) -> None:
        """Stop: dispose of the subscription (idempotent) and drop what is queued."""
        self._finished = True
        if self._subscription is not None:
            self._subscription.dispose()
        self._release()

    def _release(self) -> None:
        """Let a producer waiting for room go (it finds the subscription disposed)."""

    def __del__(self) -> None:
        self.close()

    def _outcome(self, kind: int, value: Any, stop: type[Exception]) -> T:
        """The item to return for a notification; at the end, close and raise."""
        if kind == _NEXT:
            return value  # type: ignore[no-any-return]
        self.close()
        if kind == _ERROR:
            raise value
        raise stop


class _SyncSink(abc.ObserverBase[Any]):
    """The observer of ``iterate``: a queue, and room for at most MAX_BUFFERED items.

    It holds no reference to the iterator, so dropping the iterator still disposes
    of the subscription at once.
    """

    __slots__ = ("closed", "consumer", "queue", "room")

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.room = _Room()
        self.consumer = threading.get_ident()
        self.closed = False

    def on_next(self, value: Any) -> None:
        items = self.queue
        items.put((_NEXT, value))
        # never block the consumer's own thread: it is the one that would drain us
        if items.qsize() >= MAX_BUFFERED and threading.get_ident() != self.consumer:
            self.room.wait_while(items.qsize, self._stopped)

    def _stopped(self) -> bool:
        return self.closed

    def on_error(self, error: Exception) -> None:
        self.queue.put((_ERROR, error))

    def on_completed(self) -> None:
        self.queue.put((_DONE, None))

    def get(self) -> tuple[int, Any]:
        items = self.queue
        item = items.get()
        if self.room.waiting and items.qsize() <= _RESUME_AT:
            self.room.wake()
        return item

    def close(self) -> None:
        self.closed = True
        self.room.wake()
        items = self.queue
        while not items.empty():  # free the items at once, not when the iterator goes
            items.get_nowait()


class _Iterate(_Bridge[T], Iterator[T]):
    def __init__(self, source: Observable[T]) -> None:
        self._sink: _SyncSink | None = None
        super().__init__(source)

    def __iter__(self) -> _Iterate[T]:
        return self

    def __next__(self) -> T:
        if self._finished:
            raise StopIteration
        sink = self._sink
        if sink is None:
            sink = self._sink = _SyncSink()
            self._subscription = self._source.subscribe(sink)
        kind, value = sink.get()
        return self._outcome(kind, value, StopIteration)

    def _release(self) -> None:
        if self._sink is not None:
            self._sink.close()

    def __enter__(self) -> _Iterate[T]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class _AsyncSink(abc.ObserverBase[Any]):
    """The observer of an async bridge: a deque of notifications and one waiter.

    Much lighter than an ``asyncio.Queue`` (whose four deques and ``Event`` cost
    about 3 KB per open stream). Notifications from another thread are handed to
    the loop with ``call_soon_threadsafe``. It holds no reference to the iterator,
    so dropping the iterator still disposes of the subscription at once.

    Past MAX_BUFFERED items it holds ``gate`` (items on the loop) or blocks the
    producing thread (items from elsewhere), until the consumer is down to
    _RESUME_AT. ``posted`` and ``landed`` count the items handed over from other
    threads and those already appended, so the producing thread sees what is in
    transit too; each is written by one thread only.
    """

    __slots__ = (
        "closed",
        "full",
        "gate",
        "items",
        "landed",
        "loop",
        "posted",
        "room",
        "waiter",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, gate: FlowGate) -> None:
        self.loop = loop
        self.gate = gate
        self.items: deque[tuple[int, Any]] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.full = False  # holding the gate
        self.room: _Room | None = None  # made when a producing thread first waits
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
            if running is None and item[0] == _NEXT and self._backlog() >= MAX_BUFFERED:
                room = self.room
                if room is None:
                    room = self.room = _Room()
                room.wait_while(self._backlog, self._stopped, loop)

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
        self._put((_NEXT, value))

    def on_error(self, error: Exception) -> None:
        self._put((_ERROR, error))

    def on_completed(self) -> None:
        self._put((_DONE, None))

    async def get(self) -> tuple[int, Any]:
        items = self.items
        while not items:
            waiter = self.waiter = self.loop.create_future()
            try:
                await waiter
            finally:
                self.waiter = None
        item = items.popleft()
        if len(items) <= _RESUME_AT and (self.full or self.room is not None):
            self._drained()
        return item

    def _drained(self) -> None:
        if self.full:
            self.full = False
            self.gate.release()
        room = self.room
        if room is not None and room.waiting and self._backlog() <= _RESUME_AT:
            room.wake()

    def close(self) -> None:
        self.closed = True  # before looking for a room: a room made later sees it
        if self.full and _on_loop(self.loop):  # the gate is the loop's alone
            self.full = False
            self.gate.release()
        room = self.room
        if room is not None:
            room.wake()
        self.items.clear()


class _AIterate(_Bridge[T], AsyncIterator[T]):
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


def iterate(source: Observable[T]) -> _Iterate[T]:
    """A blocking iterator over ``source``'s items; raises its error, stops at completion.

    .. code::

        for chunk in rxgem.iterate(rxgem.stream_chat(request, model="gemini-2.5-flash")):
            ...

    Leaving early (``break``, ``close()``, the end of a ``with`` block) disposes of
    the subscription. Do not use it on an event loop's thread with a source that
    emits on that loop (it would block the loop): use :func:`aiterate` there.

    A source emitting on another thread (``from_gemini`` with an ``httpx.Client``)
    is blocked once :data:`MAX_BUFFERED` items wait, so a slow consumer holds back
    the HTTP read; closing frees it at once.
    """
    return _Iterate(source)


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
