"""The one place where sans-IO stages meet Rx: a stage object per subscription."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Generic, TypeVar, cast

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


class _Sink:
    """The observer one fused stage hands the stage before it: plain callbacks."""

    __slots__ = ("on_completed", "on_error", "on_next")

    def __init__(
        self,
        on_next: Callable[[Any], None],
        on_error: Callable[[Exception], None],
        on_completed: Callable[[], None],
    ) -> None:
        self.on_next = on_next
        self.on_error = on_error
        self.on_completed = on_completed


class _Stop(abc.DisposableBase):
    """Disposes of a stage subscription: lighter than reactivex's lock-holding kinds.

    ``stop`` is idempotent and only flips a flag and disposes of the upstream, so
    no lock is needed to call it from any thread.
    """

    __slots__ = ("_stop",)

    def __init__(self, stop: Callable[[], None]) -> None:
        self._stop = stop

    def dispose(self) -> None:
        self._stop()


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


def stage_operator(factory: Callable[[], Stage[A, B]]) -> Callable[[Observable[A]], Observable[B]]:
    """An operator that runs a fresh stage from ``factory`` for every subscription."""

    def operator(source: Observable[A]) -> Observable[B]:
        def subscribe(
            observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            stage = factory()
            feed = stage.feed
            emit = observer.on_next
            ends_early = stage.ends_early
            stopped = False
            upstream: abc.DisposableBase | None = None

            def stop() -> None:
                nonlocal stopped, upstream
                stopped = True
                subscription, upstream = upstream, None
                if subscription is not None:
                    subscription.dispose()

            def finish() -> None:
                stop()
                try:
                    outputs, error = stage.close()
                    for output in outputs:
                        emit(output)
                except Exception as exc:  # a bug or a bad value in the stage
                    observer.on_error(_stream_error(exc))
                    return
                if error is not None:
                    observer.on_error(error)
                else:
                    observer.on_completed()

            def on_next_batch(value: A) -> None:
                if stopped:
                    return
                try:
                    batch = feed(value)
                except Exception as exc:
                    on_error(_stream_error(exc))
                    return
                if batch:
                    emit(batch)

            def on_next(value: A) -> None:
                if stopped:
                    return
                try:
                    outputs = feed(value)
                except Exception as exc:
                    on_error(_stream_error(exc))
                    return
                for output in outputs:
                    emit(output)
                if ends_early and stage.done:
                    finish()

            def on_error(error: Exception) -> None:
                if stopped:
                    return
                stop()
                try:
                    for output in stage.abort(error):
                        emit(output)
                except Exception as exc:
                    observer.on_error(exc)
                    return
                observer.on_error(error)

            def on_completed() -> None:
                if not stopped:
                    finish()

            handler = on_next_batch if stage.batched and not ends_early else on_next
            if isinstance(source, _StageObservable):
                sink = cast(abc.ObserverBase[A], _Sink(handler, on_error, on_completed))
                subscription = source.subscribe_fused(sink, scheduler)
            else:
                subscription = source.subscribe(
                    handler, on_error, on_completed, scheduler=scheduler
                )
            if stopped:  # the source ended (or failed) during subscribe
                subscription.dispose()
            else:
                upstream = subscription
            return _Stop(stop)

        return _StageObservable(subscribe)

    return operator
