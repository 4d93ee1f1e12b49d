"""The one place where sans-IO stages meet Rx: stage operators, fused into chains.

Every rxgem operator is a :class:`Stage` (a thin adapter over one sans-IO core)
made into an operator by :func:`stage_operator`. Applied to another stage
operator's Observable, it does not subscribe through it: the two are fused at
assembly time into one Observable over the same source with a longer chain of
stages (the *macro fusion* of Reactor and Akka Streams). Each subscription of a
chain is one :class:`_Chain`: one subscription to the source, and per stage one
small :class:`_Link` whose method calls the stage's ``feed`` and hands what it
returns to the next stage. A value crosses ``gemini_to_openai()``'s six stages in
plain method calls, and subscribing costs one upstream subscription instead of six.

The operators stay what they are to their users, each testable on its own with
its own marble tests, and the semantics are those of the operators composed one
after another: a stage that fails or ends early closes (or aborts) the stages
after it in order, the stages before it are dropped, and the observer gets one
terminal event.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Generic, NoReturn, TypeVar

from reactivex import Observable, abc

from .._errors import MalformedStreamError

__all__ = ["Stage", "stage_operator"]

A = TypeVar("A")
B = TypeVar("B")

Push = Callable[[Any], None]
StageFactory = Callable[[], "Stage[Any, Any]"]


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


class _Stop(Exception):
    """Unwinds the stages of a chain once the chain has ended (never leaves it)."""


class _StageObservable(Observable[B]):
    """The Observable of a chain of stage operators over a source that is not one."""

    def __init__(self, source: Observable[Any], factories: tuple[StageFactory, ...]) -> None:
        super().__init__()
        self._source = source
        self._factories = factories

    def _subscribe_core(
        self, observer: abc.ObserverBase[B], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        chain: _Chain[B] = _Chain([factory() for factory in self._factories], observer)
        chain.start(self._source, scheduler)
        return chain


class _Link:
    """Stage ``k`` of a chain: feeds it one value and emits what it returns.

    One small object per stage and subscription, its bound ``push_*`` method being
    what the stage before calls (cheaper in memory than a closure with its cells).
    """

    __slots__ = ("chain", "emit", "feed", "k", "stage")

    def __init__(self, chain: _Chain[Any], k: int, stage: Stage[Any, Any], emit: Push) -> None:
        self.chain = chain
        self.k = k
        self.stage = stage
        self.feed = stage.feed
        self.emit = emit

    @classmethod
    def push_for(cls, chain: _Chain[Any], k: int, stage: Stage[Any, Any], emit: Push) -> Push:
        link = cls(chain, k, stage, emit)
        if stage.ends_early:
            return link.push_until_done
        return link.push_batch if stage.batched else link.push_each

    def push_batch(self, value: Any) -> None:
        try:
            batch = self.feed(value)
        except Exception as exc:
            self.chain._fail(self.k, exc)
        if batch:
            self.emit(batch)

    def push_each(self, value: Any) -> None:
        try:
            outputs = self.feed(value)
        except Exception as exc:
            self.chain._fail(self.k, exc)
        emit = self.emit
        for output in outputs:
            emit(output)

    def push_until_done(self, value: Any) -> None:
        stage = self.stage
        if stage.batched:
            self.push_batch(value)
        else:
            self.push_each(value)
        if stage.done:
            self.chain._end_early(self.k)


class _Chain(abc.ObserverBase[Any], abc.DisposableBase, Generic[B]):
    """One subscription of a chain of stages: the source's observer and the disposable.

    ``_pushes[k]`` hands a value to stage ``k`` (a :class:`_Link`'s method;
    ``_pushes[-1]`` is the observer's ``on_next``). A stage that fails, or ends
    early, ends the chain right there (see :meth:`_end`) and then raises
    :class:`_Stop`, which unwinds the stages that were still handing values down,
    up to :meth:`on_next`.
    """

    __slots__ = ("_observer", "_pushes", "_stages", "_stopped", "_upstream")

    def __init__(self, stages: list[Stage[Any, Any]], observer: abc.ObserverBase[B]) -> None:
        self._stages = stages
        self._observer = observer
        self._stopped = False
        self._upstream: abc.DisposableBase | None = None
        pushes: list[Push] = [observer.on_next]
        for k in range(len(stages) - 1, -1, -1):
            pushes.append(_Link.push_for(self, k, stages[k], pushes[-1]))
        pushes.reverse()
        self._pushes = pushes

    def start(self, source: Observable[Any], scheduler: abc.SchedulerBase | None) -> None:
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

    # -- the source's observer ------------------------------------------------------

    def on_next(self, value: Any) -> None:
        if self._stopped:
            return
        try:
            self._pushes[0](value)
        except _Stop:  # the chain ended while handling this value (not suppress(): cheaper)
            return

    def on_error(self, error: Exception) -> None:
        if not self._stopped:
            self._end(0, error)

    def on_completed(self) -> None:
        if not self._stopped:
            self._end(0, None)

    # -- ending -------------------------------------------------------------------

    def _fail(self, k: int, error: Exception) -> NoReturn:
        """Stage ``k``'s ``feed`` raised: end the chain with that error from ``k`` on."""
        self._end(k, _stream_error(error))
        raise _Stop

    def _end_early(self, k: int) -> NoReturn:
        """Stage ``k`` is done (``[DONE]``): complete the chain from ``k`` on."""
        self._end(k, None)
        raise _Stop

    def _end(self, k: int, error: Exception | None) -> None:
        """End the chain from stage ``k``: close (or, once there is an error, abort)
        stages ``k``, ``k+1``, … in order, each one's outputs fed to the stages after
        it, then complete the observer or pass it the error. Stages before ``k`` are
        dropped, and the source is disposed of first.
        """
        self.dispose()
        stages = self._stages
        pushes = self._pushes
        for j in range(k, len(stages)):
            stage = stages[j]
            push = pushes[j + 1]
            try:
                if error is None:
                    outputs, error = stage.close()
                else:
                    outputs = stage.abort(error)
                for output in outputs:
                    push(output)
            except _Stop:
                return  # a later stage failed on these outputs and ended the chain itself
            except Exception as exc:  # a bug or a bad value in the stage, or the observer
                error = _stream_error(exc)
        if error is None:
            self._observer.on_completed()
        else:
            self._observer.on_error(error)


def stage_operator(factory: Callable[[], Stage[A, B]]) -> Callable[[Observable[A]], Observable[B]]:
    """An operator that runs a fresh stage from ``factory`` for every subscription.

    Applied to the Observable of another stage operator, it extends that chain
    (fusion at assembly time); applied to any other Observable, it starts one.
    """

    def operator(source: Observable[A]) -> Observable[B]:
        if isinstance(source, _StageObservable):
            return _StageObservable[B](source._source, (*source._factories, factory))
        return _StageObservable[B](source, (factory,))

    return operator
