"""The one place where sans-IO stages meet Rx: a stage object per subscription."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Generic, TypeVar

from reactivex import Observable, abc

from .._errors import MalformedStreamError

__all__ = ["Stage", "stage_operator"]

A = TypeVar("A")
B = TypeVar("B")


class Stage(Generic[A, B]):
    """What an operator needs from a sans-IO core; subclasses adapt one core each.

    ``feed`` is normally the core's own bound method (no extra call per event).
    It turns one upstream value into the outputs to emit: an iterable of them, or,
    when ``batched`` is true, one batch (a list) to emit as a single value unless
    it is empty. It may raise: the error ends the stream. ``close`` runs at
    upstream completion and returns the final outputs plus an optional error to end
    with instead of completing. ``abort`` runs at an upstream error and returns
    outputs to deliver before it. When ``ends_early`` is true, ``done`` is checked
    after each value: once it is true (``data: [DONE]``) the operator closes and
    disposes of the upstream.
    """

    batched: ClassVar[bool] = False
    ends_early: ClassVar[bool] = False
    feed: Callable[[A], Any]

    @property
    def done(self) -> bool:
        return False

    def close(self) -> tuple[Iterable[B], Exception | None]:
        return (), None

    def abort(self, error: Exception) -> Iterable[B]:
        return ()


def _stream_error(error: Exception) -> Exception:
    """Values nested beyond Python's recursion limit are malformed input, not a crash."""
    if isinstance(error, RecursionError):
        return MalformedStreamError(f"JSON nested too deeply to process ({error})")
    return error


class _StageObservable(Observable[B]):
    """The Observable a stage operator returns.

    When the next operator is a stage operator too, it subscribes with
    :meth:`subscribe_fused`, skipping reactivex's per-subscription observer
    wrapper (every stage already guards itself against values after its end and
    disposes of its upstream when it stops), so a value crosses the pipeline in
    plain function calls. Any other subscriber gets the ordinary ``subscribe``.
    """

    def __init__(
        self,
        subscribe: Callable[[abc.ObserverBase[B], abc.SchedulerBase | None], abc.DisposableBase],
    ) -> None:
        super().__init__(subscribe)
        self._fused = subscribe

    def subscribe_fused(
        self, observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None
    ) -> abc.DisposableBase:
        return self._fused(observer, scheduler)


class _Run(abc.ObserverBase[A], abc.DisposableBase, Generic[A, B]):
    """One subscription of a stage operator: its stage, its observer, its upstream.

    It is the observer the operator gives its source and the disposable it returns
    (one small object per stage and subscription, instead of a set of closures).
    Values after the end are ignored, and stopping disposes of the upstream.
    """

    __slots__ = ("_emit", "_feed", "_observer", "_stage", "_stopped", "_upstream")

    def __init__(self, stage: Stage[A, B], observer: abc.ObserverBase[B]) -> None:
        self._stage = stage
        self._feed = stage.feed
        self._observer = observer
        self._emit = observer.on_next
        self._stopped = False
        self._upstream: abc.DisposableBase | None = None

    def start(self, source: Observable[A], scheduler: abc.SchedulerBase | None) -> None:
        if isinstance(source, _StageObservable):
            subscription = source.subscribe_fused(self, scheduler)
        else:
            subscription = source.subscribe(
                self.on_next, self.on_error, self.on_completed, scheduler=scheduler
            )
        if self._stopped:  # the source ended (or failed) during subscribe
            subscription.dispose()
        else:
            self._upstream = subscription

    def dispose(self) -> None:
        """Stop (idempotent; only a flag and the upstream's dispose, so no lock)."""
        self._stopped = True
        subscription, self._upstream = self._upstream, None
        if subscription is not None:
            subscription.dispose()

    def on_next(self, value: A) -> None:
        if self._stopped:
            return
        try:
            outputs = self._feed(value)
        except Exception as exc:
            self.on_error(_stream_error(exc))
            return
        emit = self._emit
        for output in outputs:
            emit(output)
        if self._stage.ends_early and self._stage.done:
            self._finish()

    def on_error(self, error: Exception) -> None:
        if self._stopped:
            return
        self.dispose()
        observer = self._observer
        try:
            for output in self._stage.abort(error):
                self._emit(output)
        except Exception as exc:
            observer.on_error(exc)
            return
        observer.on_error(error)

    def on_completed(self) -> None:
        if not self._stopped:
            self._finish()

    def _finish(self) -> None:
        self.dispose()
        observer = self._observer
        try:
            outputs, error = self._stage.close()
            for output in outputs:
                self._emit(output)
        except Exception as exc:  # a bug or a bad value in the stage
            observer.on_error(_stream_error(exc))
            return
        if error is not None:
            observer.on_error(error)
        else:
            observer.on_completed()


class _BatchRun(_Run[A, B]):
    """A run whose stage returns one batch per value, emitted as one value if not empty."""

    __slots__ = ()

    def on_next(self, value: A) -> None:
        if self._stopped:
            return
        try:
            batch = self._feed(value)
        except Exception as exc:
            self.on_error(_stream_error(exc))
            return
        if batch:
            self._emit(batch)


def stage_operator(factory: Callable[[], Stage[A, B]]) -> Callable[[Observable[A]], Observable[B]]:
    """An operator that runs a fresh stage from ``factory`` for every subscription."""

    def operator(source: Observable[A]) -> Observable[B]:
        def subscribe(
            observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            stage = factory()
            kind = _BatchRun if stage.batched and not stage.ends_early else _Run
            run: _Run[A, B] = kind(stage, observer)
            run.start(source, scheduler)
            return run

        return _StageObservable(subscribe)

    return operator
