"""What every rxgem operator does with its core, in RxPY's own operator model: the
compiled half of :func:`~rxgem.operators.core_operator` (``_own_operator``, not compiled,
so that its docstring and typed overloads survive mypyc), for operators of your own.

An operator is ``Observable(subscribe)`` over a fresh sans-IO core per
subscription (:class:`rxgem.core.Core`): each value is fed to the core and what
the core returns is emitted, either value by value or, for the middle stages, as
one batch. The end of input closes the core; an error (upstream, or raised by the
core) first closes it with that error, so that what it owes (pending tool calls)
is emitted before ``on_error``. An error the core raised (or kept) gets a note naming
the stage, so that a traceback says which operator it came from.

On :func:`~rxgem.operators.from_body`, the operator skips the inner
``subscribe`` and its own ``subscribe`` costs one trampoline item, not two: the
body's loop feeds the core directly, and stops as soon as the core's stream is
over. That ``subscribe`` restates reactivex 6.1's ``Observable.subscribe`` (with
its own ``AutoDetachObserver``) minus the first trampoline item. Measured against
plain ``Observable(subscribe)`` on the compiled build, it halves what a one-event
stream costs beyond its cores (72 Python calls instead of 143; ``benchmarks/README.md``,
"The from_body fast path"); ``tests/operators/test_core_operator.py`` fails when
reactivex changes the code it restates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

from reactivex import Observable, abc
from reactivex.disposable import Disposable
from reactivex.observer import AutoDetachObserver

from ..core import Core
from ._from_body import BodyRun, BodySource

__all__ = ["core_stage"]

A = TypeVar("A")
B = TypeVar("B")


def _named(error: Exception, name: str) -> Exception:
    """``error``, with a note naming the stage that raised it (once)."""
    note = f"raised by the {name} operator"
    if note not in getattr(error, "__notes__", ()):
        error.add_note(note)
    return error


class _CoreObserver(abc.ObserverBase[Any], Generic[B]):
    """One subscription: the upstream's observer, feeding one core."""

    __slots__ = (
        "batched",
        "core",
        "ends_early",
        "feed",
        "name",
        "observer",
        "stopped",
        "upstream",
    )

    def __init__(
        self,
        core: Core[Any, Any],
        observer: abc.ObserverBase[B],
        batched: bool,
        ends_early: bool,
        name: str | None = None,
    ) -> None:
        self.core = core
        self.name = name or type(core).__name__
        self.feed = core.feed
        self.observer = observer
        self.batched = batched
        self.ends_early = ends_early
        self.stopped = False
        self.upstream: abc.DisposableBase | None = None  # set when nothing else disposes it

    def emit(self, outputs: list[Any]) -> None:
        if self.batched:
            if outputs:
                self.observer.on_next(outputs)  # type: ignore[arg-type]
        else:
            for output in outputs:
                self.observer.on_next(output)

    def stop(self) -> None:
        """Ignore what comes next, and let go of the source (when this sink holds it)."""
        self.stopped = True
        if self.upstream is not None:
            self.upstream.dispose()

    def on_next(self, value: Any) -> None:
        if self.stopped:
            return
        try:
            outputs = self.feed(value)
        except Exception as error:
            self.on_error(_named(error, self.name))
            return
        self.emit(outputs)
        if self.core.error is not None:
            self.stop()
            self.observer.on_error(_named(self.core.error, self.name))
        elif self.ends_early and getattr(self.core, "done", False):
            self.on_completed()

    def on_error(self, error: Exception) -> None:
        if self.stopped:
            return
        self.stop()
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
            self.on_error(_named(error, self.name))
            return
        self.stop()
        self.emit(outputs)
        if self.core.error is not None:
            self.observer.on_error(_named(self.core.error, self.name))
        else:
            self.observer.on_completed()


class _OnBody(Observable[B]):
    """A core operator on :func:`~rxgem.operators.from_body`: the loop feeds the core.

    ``subscribe`` is ``Observable.subscribe`` (the same observer or callbacks, the
    same ``AutoDetachObserver``, an error while subscribing sent to it) without its
    own trampoline item: that item is there so that a source that emits during
    ``subscribe`` emits only once the subscription is wired; this one never does (it
    schedules its loop, after wiring), so the item would only cost time. Each
    subscription costs one trampoline item (the loop's), not two.
    """

    def __init__(
        self,
        body: BodySource,
        make_core: Callable[[], Core[Any, Any]],
        batched: bool,
        ends_early: bool,
        name: str | None,
    ) -> None:
        super().__init__()
        self.body = body
        self.make_core = make_core
        self.batched = batched
        self.ends_early = ends_early
        self.name = name

    def _prepare(self, observer: abc.ObserverBase[B]) -> BodyRun:
        sink: _CoreObserver[B] = _CoreObserver(
            self.make_core(), observer, self.batched, self.ends_early, self.name
        )
        run = self.body.prepare(sink)
        sink.upstream = run  # the sink lets go of the body as soon as the core is done
        return run

    def _subscribe_core(
        self, observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        run = self._prepare(observer)
        run.start(self.body.scheduler or scheduler)
        return run

    def subscribe(
        self,
        on_next: abc.ObserverBase[B] | abc.OnNext[B] | None = None,
        on_error: abc.OnError | None = None,
        on_completed: abc.OnCompleted | None = None,
        *,
        scheduler: abc.SchedulerBase | None = None,
    ) -> abc.DisposableBase:
        if isinstance(on_next, abc.ObserverBase) or callable(getattr(on_next, "on_next", None)):
            given = cast(abc.ObserverBase[B], on_next)
            on_next, on_error, on_completed = given.on_next, given.on_error, given.on_completed
        observer: AutoDetachObserver[B] = AutoDetachObserver(on_next, on_error, on_completed)
        try:
            run = self._prepare(observer)
        except Exception as error:  # as Observable.subscribe does
            if not observer.fail(error):
                raise
            return Disposable(observer.dispose)
        observer.subscription = run  # wired before the loop can start
        run.start(self.body.scheduler or scheduler)
        return Disposable(observer.dispose)


def core_stage(
    make_core: Callable[[], Core[A, Any]], batched: bool, ends_early: bool, name: str | None
) -> Callable[[Observable[A]], Observable[Any]]:
    """The operator that feeds each subscription's values to a fresh ``make_core()``."""

    def operator(source: Observable[A]) -> Observable[Any]:
        if isinstance(source, BodySource):
            return _OnBody(source, make_core, batched, ends_early, name)

        def subscribe(
            observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
        ) -> abc.DisposableBase:
            sink = _CoreObserver(make_core(), observer, batched, ends_early, name)
            return source.subscribe(sink, scheduler=scheduler)

        return Observable(subscribe)

    return operator
