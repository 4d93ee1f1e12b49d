"""Bridges for code that does not want Rx: a blocking iterator and an async iterator.

Both subscribe lazily (at the first item requested) and dispose of the
subscription as soon as the consumer stops: at the end, on an error, on
``close()``/``aclose()``, when a ``with``/``async with`` block exits, or when the
iterator is dropped (``break`` out of a ``for`` loop) — so a stream from
``from_gemini`` closes its HTTP connection right away.
"""

from __future__ import annotations

import asyncio
import queue
from collections import deque
from collections.abc import AsyncIterator, Iterator
from types import TracebackType
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc
from reactivex.scheduler.eventloop import AsyncIOScheduler

__all__ = ["aiterate", "iterate"]

T = TypeVar("T")

_NEXT, _ERROR, _DONE = 0, 1, 2


class _Bridge(Generic[T]):
    """What both bridges share: a lazy subscription, disposed of once they stop."""

    def __init__(self, source: Observable[T]) -> None:
        self._source = source
        self._subscription: abc.DisposableBase | None = None
        self._finished = False

    def close(self) -> None:
        """Stop: dispose of the subscription (idempotent)."""
        self._finished = True
        if self._subscription is not None:
            self._subscription.dispose()

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


class _Iterate(_Bridge[T], Iterator[T]):
    def __init__(self, source: Observable[T]) -> None:
        super().__init__(source)
        self._queue: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()

    def __iter__(self) -> _Iterate[T]:
        return self

    def __next__(self) -> T:
        if self._finished:
            raise StopIteration
        if self._subscription is None:
            put = self._queue.put
            self._subscription = self._source.subscribe(
                lambda value: put((_NEXT, value)),
                lambda error: put((_ERROR, error)),
                lambda: put((_DONE, None)),
            )
        kind, value = self._queue.get()
        return self._outcome(kind, value, StopIteration)

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
    """

    __slots__ = ("items", "loop", "waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: deque[tuple[int, Any]] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def _put(self, item: tuple[int, Any]) -> None:
        loop = self.loop
        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._deliver(item)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver, item)

    def _deliver(self, item: tuple[int, Any]) -> None:
        self.items.append(item)
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
        return items.popleft()


class _AIterate(_Bridge[T], AsyncIterator[T]):
    def __init__(self, source: Observable[T]) -> None:
        super().__init__(source)
        self._sink: _AsyncSink | None = None

    def __aiter__(self) -> _AIterate[T]:
        return self

    async def __anext__(self) -> T:
        if self._finished:
            raise StopAsyncIteration
        sink = self._sink
        if sink is None:
            loop = asyncio.get_running_loop()
            sink = self._sink = _AsyncSink(loop)
            self._subscription = self._source.subscribe(sink, scheduler=AsyncIOScheduler(loop))
        kind, value = await sink.get()
        return self._outcome(kind, value, StopAsyncIteration)

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


def iterate(source: Observable[T]) -> _Iterate[T]:
    """A blocking iterator over ``source``'s items; raises its error, stops at completion.

    .. code::

        for chunk in rxgem.iterate(rxgem.stream_chat(request, model="gemini-2.5-flash")):
            ...

    Leaving early (``break``, ``close()``, the end of a ``with`` block) disposes of
    the subscription. Do not use it on an event loop's thread with a source that
    emits on that loop (it would block the loop): use :func:`aiterate` there.
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
    """
    return _AIterate(source)
