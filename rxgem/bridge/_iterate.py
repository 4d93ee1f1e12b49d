"""``iterate``: an Observable as a blocking iterator."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, TypeVar

from reactivex import Observable, abc

from ._base import DONE, ERROR, NEXT, Bridge
from ._blocking import blocking_consumer
from ._gate import MAX_BUFFERED, RESUME_AT, ThreadGate

__all__ = ["iterate"]

T = TypeVar("T")


class _SyncSink(abc.ObserverBase[Any]):
    """The observer of ``iterate``: a queue, and room for at most MAX_BUFFERED items.

    It holds no reference to the iterator, so dropping the iterator still disposes
    of the subscription at once.
    """

    __slots__ = ("closed", "consumer", "gate", "queue")

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.gate = ThreadGate()
        self.consumer = threading.get_ident()
        self.closed = False

    def on_next(self, value: Any) -> None:
        items = self.queue
        items.put((NEXT, value))
        # never block the consumer's own thread: it is the one that would drain us
        if items.qsize() >= MAX_BUFFERED and threading.get_ident() != self.consumer:
            self.gate.wait_while(items.qsize, self._stopped)

    def _stopped(self) -> bool:
        return self.closed

    def on_error(self, error: Exception) -> None:
        self.queue.put((ERROR, error))

    def on_completed(self) -> None:
        self.queue.put((DONE, None))

    def get(self) -> tuple[int, Any]:
        items = self.queue
        item = items.get()
        if self.gate.waiting and items.qsize() <= RESUME_AT:
            self.gate.wake()
        return item

    def close(self) -> None:
        self.closed = True
        self.gate.wake()
        items = self.queue
        while not items.empty():  # free the items at once, not when the iterator goes
            items.get_nowait()


class _Iterate(Bridge[T], Iterator[T]):
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
            told = blocking_consumer.set("rxgem.iterate()")  # a loop's source refuses it
            try:
                self._subscription = self._source.subscribe(sink)
            finally:
                blocking_consumer.reset(told)
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


def iterate(source: Observable[T]) -> _Iterate[T]:
    """A blocking iterator over ``source``'s items; raises its error, stops at completion.

    .. code::

        for chunk in rxgem.iterate(rxgem.stream_chat(request, model="gemini-2.5-flash")):
            ...

    Leaving early (``break``, ``close()``, the end of a ``with`` block) disposes of
    the subscription. Do not use it on an event loop's thread with a source that
    emits on that loop (it would block the loop): use :func:`aiterate` there
    (``from_gemini`` and ``from_interactions`` refuse it: ``RuntimeError`` at once).

    A source emitting on another thread (``from_gemini`` with an ``httpx.Client``)
    is blocked once :data:`MAX_BUFFERED` items wait, so a slow consumer holds back
    the HTTP read; closing frees it at once.
    """
    return _Iterate(source)
