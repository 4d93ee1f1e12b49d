"""The one place where sans-IO stages meet Rx: a stage object per subscription."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable, Disposable

__all__ = ["Stage", "stage_operator"]

A = TypeVar("A")
B = TypeVar("B")


class Stage(Generic[A, B]):
    """What an operator needs from a sans-IO core; subclasses adapt one core each.

    ``feed`` turns one upstream value into zero or more outputs (it may raise: the
    error ends the stream). ``close`` runs at upstream completion and returns the
    final outputs plus an optional error to end with instead of completing.
    ``abort`` runs at an upstream error and returns outputs to deliver before it.
    ``done`` becomes true when the stage has seen the end of its input early
    (``data: [DONE]``): the operator then closes and disposes of the upstream.
    """

    @property
    def done(self) -> bool:
        return False

    def feed(self, value: A) -> Iterable[B]:
        raise NotImplementedError

    def close(self) -> tuple[Iterable[B], Exception | None]:
        return (), None

    def abort(self, error: Exception) -> Iterable[B]:
        return ()


def stage_operator(factory: Callable[[], Stage[A, B]]) -> Callable[[Observable[A]], Observable[B]]:
    """An operator that runs a fresh stage from ``factory`` for every subscription."""

    def operator(source: Observable[A]) -> Observable[B]:
        def subscribe(
            observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            stage = factory()
            stopped = False
            upstream = CompositeDisposable()

            def stop() -> None:
                nonlocal stopped
                stopped = True
                upstream.dispose()

            def finish() -> None:
                stop()
                try:
                    outputs, error = stage.close()
                    for output in outputs:
                        observer.on_next(output)
                except Exception as exc:  # a bug or a bad value in the stage
                    observer.on_error(exc)
                    return
                if error is not None:
                    observer.on_error(error)
                else:
                    observer.on_completed()

            def on_next(value: A) -> None:
                if stopped:
                    return
                try:
                    outputs = stage.feed(value)
                except Exception as exc:
                    on_error(exc)
                    return
                for output in outputs:
                    observer.on_next(output)
                if stage.done:
                    finish()

            def on_error(error: Exception) -> None:
                if stopped:
                    return
                stop()
                try:
                    for output in stage.abort(error):
                        observer.on_next(output)
                except Exception as exc:
                    observer.on_error(exc)
                    return
                observer.on_error(error)

            def on_completed() -> None:
                if not stopped:
                    finish()

            # added after a synchronous stop, the subscription is disposed at once
            upstream.add(source.subscribe(on_next, on_error, on_completed, scheduler=scheduler))
            return Disposable(stop)

        return Observable(subscribe)

    return operator
