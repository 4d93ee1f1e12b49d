"""The marble runner: an operator on a cold or hot marble source, under virtual time.

:func:`run_marbles` runs an operator on a marble source under a fresh
``TestScheduler`` and returns what it emitted; :func:`expect_marbles` parses the
expected marbles into the same form. A ``^`` in a source makes it hot, subscribed
there (tick 0). The values usually come from the builders
(:mod:`._gemini_builders`, :mod:`._openai_builders`); a failed comparison is shown
as marble strings (:mod:`._marble_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from reactivex import Observable, abc
from reactivex.notification import OnCompleted, OnError, OnNext
from reactivex.observable.marbles import parse
from reactivex.scheduler import VirtualTimeScheduler
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.subscription import Subscription

if TYPE_CHECKING:  # rxgem.viz is imported on first use: it is heavy and most tests never draw
    from ..viz import Diagram, Recorder, XMode

__all__ = ["ExpectedMarbles", "Marble", "MarbleOutput", "expect_marbles", "run_marbles"]


def _same_error(a: Any, b: Any) -> bool:
    if isinstance(b, type):
        return isinstance(a, b)
    if isinstance(a, type):
        return isinstance(b, a)
    return type(a) is type(b) and a.args == b.args


@dataclass(frozen=True, eq=False)
class Marble:
    """One notification at a virtual time: ``kind`` is ``"next"``, ``"error"`` or ``"completed"``.

    Equality compares time, kind and value; errors compare by class and ``args``
    (not by message text), and an exception *class* as the value matches any
    instance of it: ``Marble(3, "error", MalformedStreamError)``.
    """

    time: float
    kind: Literal["next", "error", "completed"]
    value: Any = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Marble):
            return NotImplemented
        if self.time != other.time or self.kind != other.kind:
            return False
        if self.kind == "error":
            return _same_error(self.value, other.value)
        return bool(self.value == other.value)

    __hash__ = None  # type: ignore[assignment]


class MarbleOutput(list[Marble]):
    """What an operator emitted under :func:`run_marbles`: a list of :class:`Marble`.

    Compares equal to the list :func:`expect_marbles` returns; ``values``,
    ``error`` and ``completed`` summarise it, ``recorder`` holds every lane (the
    source, each stage) and ``diagram()`` draws them. ``source_subscriptions``
    tells when the operator subscribed to the marble source and when it let go:
    ``[(0, 4)]`` is one subscription from tick 0, disposed of at tick 4 (``None``
    while still subscribed).
    """

    def __init__(
        self,
        records: Sequence[Marble],
        recorder: Recorder,
        source_subscriptions: Sequence[tuple[float, float | None]] = (),
    ) -> None:
        super().__init__(records)
        self.recorder = recorder
        self.source_subscriptions = list(source_subscriptions)

    @property
    def values(self) -> list[Any]:
        """The emitted values, in order."""
        return [r.value for r in self if r.kind == "next"]

    @property
    def error(self) -> BaseException | None:
        """The error the output ended with, if any."""
        return next((r.value for r in self if r.kind == "error"), None)

    @property
    def completed(self) -> bool:
        """Whether the output completed."""
        return any(r.kind == "completed" for r in self)

    def explain(self, expected: Sequence[Marble]) -> list[str]:
        """This output against ``expected`` as two marble strings and a legend: what a
        failed ``assert output == expect_marbles(...)`` prints under pytest.

        Values are written with the letters of ``expected``'s lookup; a value in none
        gets a capital letter and a line of its own, an error its class and arguments.
        """
        from ._marble_text import explain_marbles

        lookup = expected.lookup if isinstance(expected, ExpectedMarbles) else None
        return explain_marbles(self, expected, lookup)

    def diagram(self, **options: Any) -> Diagram:
        """The marble diagram of every lane (see :meth:`rxgem.viz.Recorder.diagram`)."""
        x: XMode = options.pop("x", "time")
        return self.recorder.diagram(x=x, **options)


class _StrictLookup(dict[str | float, Any]):
    """A lookup that refuses marbles it does not know (instead of emitting their text)."""

    def get(self, key: str | float, default: Any = None) -> Any:
        if key not in self:
            raise KeyError(
                f"marble {key!r} is not in the lookup (keys: {sorted(map(str, self))});"
                " adjacent letters are one marble: write '-a-b-' or '(a,b)', not 'ab'"
            )
        return self[key]


def _seconds(time: Any) -> float:
    return float(time) if isinstance(time, int | float) else float(time.total_seconds())


def _caret(marbles: str, timespan: int) -> tuple[str, float]:
    """``marbles`` with its ``^`` (the subscription point) made a plain tick, and the
    tick of the ``^`` (0 without one)."""
    plain = marbles.replace(" ", "")
    count = plain.count("^")
    if count > 1:
        raise ValueError(f"one '^' at most (the subscription point), not {count}: {marbles!r}")
    if not count:
        return plain, 0.0
    at = plain.index("^")
    caret = _seconds(parse(plain[:at] + "x", timespan=timespan)[-1][0])
    return plain[:at] + "-" + plain[at + 1 :], caret


def _instance(error: Exception | type[Exception]) -> Exception:
    if not isinstance(error, type):
        return error
    try:
        return error("marble error")
    except TypeError as failed:
        raise TypeError(
            f"cannot make {error.__name__}('marble error'): pass an instance"
        ) from failed


def _records(
    marbles: str,
    lookup: Mapping[str | float, Any] | None,
    error: Exception | None,
    timespan: int,
) -> list[Marble]:
    """The marbles' notifications, at their ticks from the ``^`` (negative before it)."""
    records: list[Marble] = []
    strict = _StrictLookup(lookup) if lookup else None
    plain, caret = _caret(marbles, timespan)
    for time, notification in parse(plain, timespan=timespan, lookup=strict, error=error):
        at = _seconds(time) - caret
        if isinstance(notification, OnNext):
            records.append(Marble(at, "next", notification.value))
        elif isinstance(notification, OnError):
            records.append(Marble(at, "error", notification.exception))
        elif isinstance(notification, OnCompleted):
            records.append(Marble(at, "completed"))
    return records


def expect_marbles(
    marbles: str,
    lookup: Mapping[str | float, Any] | None = None,
    *,
    error: Exception | type[Exception] | None = None,
    timespan: int = 1,
) -> list[Marble]:
    """Marbles as the list of :class:`Marble` that :func:`run_marbles` is compared with.

    Each character is ``timespan`` ticks from 0: ``"-a-(bc)-|"`` is ``a`` at 1,
    ``b`` and ``c`` at 3, completion at 8 (a group takes its length in ticks).
    ``#`` is ``error`` (an exception, or a class matching any instance of it).
    Numeric tokens are cast before the lookup: the key for ``"1"`` is the int ``1``.
    With a ``lookup``, a marble that is not in it raises ``KeyError`` (adjacent
    letters make one marble: ``"ab"`` is the value ``"ab"``, not ``a`` then ``b``).
    A ``^`` is tick 0 (spaces do not count: ``"   ^-b-|"`` lines up under a hot source).
    """
    marker = RuntimeError("marble error")
    records = _records(marbles, lookup, marker, timespan)
    if error is not None:
        records = [
            Marble(r.time, "error", error) if r.kind == "error" and r.value is marker else r
            for r in records
        ]
    return ExpectedMarbles(records, marbles, lookup)


class ExpectedMarbles(list[Marble]):
    """What :func:`expect_marbles` returns: the list, and the string and lookup it was
    read from (to show a failed comparison in the test's own letters)."""

    def __init__(
        self, records: Sequence[Marble], marbles: str, lookup: Mapping[str | float, Any] | None
    ) -> None:
        super().__init__(records)
        self.marbles = marbles
        self.lookup = lookup


Operator = Callable[[Observable[Any]], Observable[Any]]


_NEVER = Subscription(0).unsubscribe  # reactivex's mark for "not disposed of yet"


def _ignore(_: Exception) -> None:
    """Errors are recorded by the last tap; nothing else to do with them."""


def run_marbles(
    operator: Operator | Sequence[tuple[str, Operator]],
    source: str,
    lookup: Mapping[str | float, Any] | None = None,
    *,
    error: Exception | type[Exception] | None = None,
    timespan: int = 1,
    dispose_at: float | None = None,
) -> MarbleOutput:
    """Run ``operator`` on a cold or hot marble ``source`` under a fresh ``TestScheduler``.

    .. code::

        run_marbles(group_by_slot(), "-a-b-|", {"a": response(call("f", x=1)), "b": ...})

    The subscription happens at tick 0, so times line up with the marble strings
    (see :func:`expect_marbles`). ``operator`` may also be a list of
    ``(name, operator)`` stages: each becomes a lane of ``MarbleOutput.recorder`` and
    the result is what the last one emitted. ``#`` in ``source`` emits ``error``
    (an exception, or a class made with the message ``"marble error"``; default:
    ``RuntimeError("marble error")``); ``dispose_at`` disposes of the subscription at
    that tick.

    A ``^`` makes ``source`` hot: it runs from its first character, the operator
    subscribes at the ``^``, and every time (the output's, ``dispose_at``,
    ``source_subscriptions``) counts from there, so what the source emitted before is
    lost: ``run_marbles(op, "-a-^-b-|")`` sees ``b`` at tick 2.
    """
    from ..viz import Recorder  # here, not at the top: see the TYPE_CHECKING import

    scheduler = TestScheduler()
    recorder = Recorder(scheduler)
    failure = _instance(error) if error is not None else RuntimeError("marble error")
    records = _records(source, lookup, failure, timespan)
    messages = [
        ReactiveTest.on_next(int(r.time), r.value)
        if r.kind == "next"
        else ReactiveTest.on_error(int(r.time), r.value)
        if r.kind == "error"
        else ReactiveTest.on_completed(int(r.time))
        for r in records
    ]
    stages = [("output", operator)] if callable(operator) else list(operator)
    # a hot source's messages before the "^" are at negative ticks: they run first, unseen
    marbles = (
        scheduler.create_hot_observable(messages)
        if "^" in source
        else scheduler.create_cold_observable(messages)
    )
    stream: Observable[Any] = marbles.pipe(recorder.tap("source"))
    for name, stage in stages:
        stream = stream.pipe(stage, recorder.tap(name))
    holder: list[abc.DisposableBase] = []

    def subscribe(scheduler_: abc.SchedulerBase, state: Any = None) -> None:
        holder.append(stream.subscribe(on_error=_ignore, scheduler=scheduler_))

    def dispose(scheduler_: abc.SchedulerBase, state: Any = None) -> None:
        for subscription in holder:
            subscription.dispose()

    scheduler.schedule_absolute(0.0, subscribe)
    if dispose_at is not None:
        scheduler.schedule_absolute(float(dispose_at), dispose)
    VirtualTimeScheduler.start(scheduler)
    last = stages[-1][0] if stages else "source"
    output = [Marble(e.time, e.kind, e.value) for e in recorder.emissions if e.stage == last]
    held = [
        (float(s.subscribe), None if s.unsubscribe == _NEVER else float(s.unsubscribe))
        for s in marbles.subscriptions
    ]
    return MarbleOutput(output, recorder, held)
