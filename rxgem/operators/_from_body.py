"""A light source of body bytes: the pieces pushed in one loop per subscription.

``reactivex.from_iterable`` pays for a scheduler's bookkeeping (a composite
disposable, closures, a trampoline item) on every subscription; for a short
stream that is most of the cost. :func:`from_body` does the same thing with one
object per subscription, and rxgem's operators recognise it and feed their core
straight from the loop (no inner ``subscribe``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from types import GeneratorType
from typing import Any

from reactivex import Observable, abc
from reactivex.scheduler import CurrentThreadScheduler

__all__ = ["BodyRun", "BodySource", "from_body"]


class BodyRun(abc.DisposableBase):
    """One subscription: the loop over the pieces; ``dispose()`` stops it between pieces."""

    __slots__ = ("body", "disposed", "observer", "scheduled")

    def __init__(self, body: Iterable[bytes], observer: abc.ObserverBase[bytes]) -> None:
        self.body = body
        self.observer: abc.ObserverBase[bytes] | None = observer
        self.disposed = False
        self.scheduled: abc.DisposableBase | None = None

    def start(self, scheduler: abc.SchedulerBase | None) -> None:
        """Schedule the whole loop once: on ``scheduler``, else on the current thread's
        trampoline (after the subscription in progress is wired, so that ``take(n)``
        downstream can stop it; at once when no subscription is in progress)."""
        chosen = scheduler or CurrentThreadScheduler.singleton()
        self.scheduled = chosen.schedule(self.run)

    def run(self, _scheduler: abc.SchedulerBase, _state: Any = None) -> None:
        observer = self.observer
        if observer is None:  # ran already
            return
        pieces: Iterator[bytes] | None = None
        try:
            if self.disposed:
                return
            # Only the iterable's own errors are sent with on_error. What an observer
            # raises propagates to whatever runs the loop (subscribe()'s caller on the
            # trampoline, else the scheduler), as from_iterable does: sent back down as
            # on_error, it would reach observers already stopped and vanish.
            try:
                pieces = iter(self.body)
            except Exception as error:
                observer.on_error(error)
                return
            while not self.disposed:
                try:
                    piece = next(pieces)
                except StopIteration:
                    break
                except Exception as error:
                    observer.on_error(error)
                    return
                observer.on_next(piece)
            else:
                return  # disposed of
            observer.on_completed()
        finally:
            self.observer = None  # no cycle through an observer that holds this run
            if isinstance(pieces, GeneratorType):  # a no-op when it ran to its end
                pieces.close()

    def dispose(self) -> None:
        self.disposed = True
        if self.scheduled is not None:
            self.scheduled.dispose()


class BodySource(Observable[bytes]):
    """The observable :func:`from_body` returns (an ordinary ``Observable[bytes]``)."""

    def __init__(self, body: Iterable[bytes], scheduler: abc.SchedulerBase | None) -> None:
        super().__init__()
        self.body = body
        self.scheduler = scheduler

    def prepare(self, observer: abc.ObserverBase[bytes]) -> BodyRun:
        """A subscription of ``observer`` that has not started: ``start(scheduler)`` it.

        For operators that subscribe without ``Observable.subscribe`` (the caller owns
        what that would give: stopping ``observer`` after its end, catching errors).
        """
        return BodyRun(self.body, observer)

    def _subscribe_core(
        self, observer: abc.ObserverBase[bytes], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        run = BodyRun(self.body, observer)
        run.start(self.scheduler or scheduler)
        return run


def from_body(
    body: bytes | bytearray | memoryview | Iterable[bytes],
    *,
    scheduler: abc.SchedulerBase | None = None,
) -> Observable[bytes]:
    """A Gemini response body's bytes as an Observable: each piece, then completion.

    .. code::

        from_body([b"data: {…}\\r\\n\\r\\n", b"data: {…}"])
        ---b"data: {…}\\r\\n\\r\\n"---b"data: {…}"---|

    ``reactivex.from_iterable(pieces)`` for bytes, lighter: on each subscription the
    pieces are pushed in one loop scheduled once (on ``scheduler``, else the one given
    to ``subscribe``, else the current thread's trampoline, as RxPY's own sources do),
    and piped into :func:`~rxgem.gemini_to_openai` it feeds the converter directly.
    ``body`` is an iterable of ``bytes`` pieces (a list, a generator,
    ``httpx.Response.iter_bytes()``), or one bytes-like object for a whole body.

    Disposal is checked before each piece is read: ``take(n)`` or ``[DONE]``
    downstream, or ``dispose()``, stops reading, and a generator is closed when the
    loop ends. If reading the iterable raises, the error is sent with ``on_error``
    after every piece before it. An error raised by an observer is not caught: it
    propagates to what runs the loop (``subscribe()``'s caller on the trampoline,
    else the scheduler), as ``from_iterable`` does since reactivex 6.1.1, and so
    does a stream's error that reaches a subscriber without ``on_error``. A list
    can be subscribed to many times; a generator is read once.

    Raises:
        TypeError: at call time, for a ``str`` (encode it first).

    Returns:
        An ``Observable[bytes]``.
    """
    if isinstance(body, bytes | bytearray | memoryview):
        body = (bytes(body),)
    elif isinstance(body, str):
        raise TypeError("from_body() takes bytes or an iterable of bytes, not str")
    return BodySource(body, scheduler)
