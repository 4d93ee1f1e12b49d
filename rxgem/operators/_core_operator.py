"""What every rxgem operator does with its core, in RxPY's own operator model.

An operator is ``Observable(subscribe)`` over a fresh sans-IO core per
subscription (:mod:`rxgem.core._protocol`): each value is fed to the core and what
the core returns is emitted, either value by value or, for the middle stages, as
one batch. The end of input closes the core; an error (upstream, or raised by the
core) first closes it with that error, so that what it owes (pending tool calls)
is emitted before ``on_error``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from reactivex import Observable, abc

from ..core import Core

__all__ = ["core_operator"]

A = TypeVar("A")
B = TypeVar("B")


class _CoreObserver(abc.ObserverBase[Any], Generic[B]):
    """One subscription: the upstream's observer, feeding one core."""

    __slots__ = ("batched", "core", "ends_early", "feed", "observer", "stopped")

    def __init__(
        self, core: Core[Any, Any], observer: abc.ObserverBase[B], batched: bool, ends_early: bool
    ) -> None:
        self.core = core
        self.feed = core.feed
        self.observer = observer
        self.batched = batched
        self.ends_early = ends_early
        self.stopped = False

    def emit(self, outputs: list[Any]) -> None:
        if self.batched:
            if outputs:
                self.observer.on_next(outputs)  # type: ignore[arg-type]
        else:
            for output in outputs:
                self.observer.on_next(output)

    def on_next(self, value: Any) -> None:
        if self.stopped:
            return
        try:
            outputs = self.feed(value)
        except Exception as error:
            self.on_error(error)
            return
        self.emit(outputs)
        if self.core.error is not None:
            self.stopped = True
            self.observer.on_error(self.core.error)
        elif self.ends_early and getattr(self.core, "done", False):
            self.on_completed()

    def on_error(self, error: Exception) -> None:
        if self.stopped:
            return
        self.stopped = True
        try:
            owed = self.core.close(error)
        except Exception:  # close(error) must not raise; if a core does, the first error wins
            owed = []
        self.emit(owed)
        self.observer.on_error(error)

    def on_completed(self) -> None:
        if self.stopped:
            return
        try:
            outputs = self.core.close()
        except Exception as error:
            self.on_error(error)
            return
        self.stopped = True
        self.emit(outputs)
        if self.core.error is not None:
            self.observer.on_error(self.core.error)
        else:
            self.observer.on_completed()


def core_operator(
    make_core: Callable[[], Core[A, Any]], *, batched: bool = False, ends_early: bool = False
) -> Callable[[Observable[A]], Observable[B]]:
    """An operator that feeds each subscription's values to a fresh ``make_core()``.

    ``batched``: the core's ``feed`` returns one batch, emitted as one value (unless
    empty); otherwise each returned value is emitted. ``ends_early``: once the
    core's ``done`` is true (``data: [DONE]``), the operator completes and disposes
    of its source.
    """

    def operator(source: Observable[A]) -> Observable[B]:
        def subscribe(
            observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            sink = _CoreObserver(make_core(), observer, batched, ends_early)
            return source.subscribe(sink, scheduler=scheduler)

        return Observable(subscribe)

    return operator
