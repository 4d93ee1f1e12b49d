"""Stage operators applied one after another fuse into one chain (one subscription).

The fused chain must behave exactly like the same operators composed with an
ordinary Rx hop between each two (``ops.map(identity)`` stops the fusion): the
same values, the same terminal event, the same stages closed or aborted. These
tests check that with the real operators on every sample and with small
synthetic stages that fail, end early, or return an error from ``close``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pytest
import reactivex
from conftest import counter_ids
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from rxgem.operators._stage import Stage, _StageObservable, stage_operator

import rxgem
from rxgem import samples
from rxgem.operators import pipeline_stages

Operator = Callable[[Observable[Any]], Observable[Any]]

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error
subscribe = ReactiveTest.subscribe


def _identity(value: Any) -> Any:
    return value


def unfused(*operators: Operator) -> Operator:
    """The operators composed with an Rx ``map`` between each two: no fusion."""
    steps: list[Operator] = []
    for operator in operators:
        steps += [operator, ops.map(_identity)]
    return reactivex.compose(*steps)


def notifications(source: Observable[Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []

    def error(exc: Exception) -> None:
        out.append(("error", (type(exc), str(exc))))

    source.subscribe(
        lambda value: out.append(("next", value)), error, lambda: out.append(("completed", None))
    )
    return out


# -- assembly ---------------------------------------------------------------------


def test_adjacent_stage_operators_make_one_chain_over_the_source() -> None:
    source = reactivex.from_iterable([b"data: {}\n\n"])
    stages = [stage for _, stage in pipeline_stages()]
    piped = source.pipe(*stages)
    assert isinstance(piped, _StageObservable)
    assert piped._source is source
    assert len(piped._factories) == 6


def test_the_source_is_subscribed_once_per_subscription() -> None:
    subscriptions = 0

    def body(observer: Any, scheduler: Any = None) -> Any:
        nonlocal subscriptions
        subscriptions += 1
        observer.on_next(samples.read("text"))
        observer.on_completed()
        return reactivex.disposable.Disposable()

    chunks = notifications(reactivex.create(body).pipe(rxgem.gemini_to_openai()))
    assert subscriptions == 1
    assert chunks[-1] == ("completed", None)


def test_an_intermediate_observable_stays_a_working_pipeline_of_its_own() -> None:
    source = reactivex.from_iterable([samples.read("text")])
    events = source.pipe(rxgem.operators.decode_sse())
    parsed = events.pipe(rxgem.operators.parse())
    event_notes = notifications(events)
    parsed_notes = notifications(parsed)
    assert all(isinstance(value, rxgem.SSEEvent) for kind, value in event_notes[:-1])
    assert all(isinstance(v, rxgem.GenerateContentResponse) for _, v in parsed_notes[:-1])
    assert len(event_notes) == len(parsed_notes) > 1
    assert event_notes[-1] == parsed_notes[-1] == ("completed", None)


# -- the real operators: fused == unfused -------------------------------------------


def _pipeline_operators() -> list[Operator]:
    return [stage for _, stage in pipeline_stages(id_factory=counter_ids(), clock=lambda: 0)]


@pytest.mark.parametrize("name", samples.names())
@pytest.mark.parametrize("piece", [None, 7])
def test_fused_pipeline_equals_unfused_on_every_sample(name: str, piece: int | None) -> None:
    body = samples.read(name)
    chunks = [body] if piece is None else [body[i : i + piece] for i in range(0, len(body), piece)]
    fused = notifications(reactivex.from_iterable(chunks).pipe(*_pipeline_operators()))
    separate = notifications(reactivex.from_iterable(chunks).pipe(unfused(*_pipeline_operators())))
    assert fused == separate


@pytest.mark.parametrize("cut", [10, 200, 400])
def test_fused_pipeline_equals_unfused_when_the_source_fails(cut: int) -> None:
    body = samples.read("thinking_tools")
    failing = reactivex.concat(
        reactivex.from_iterable([body[:cut]]), reactivex.throw(OSError("connection reset"))
    )
    fused = notifications(failing.pipe(*_pipeline_operators()))
    separate = notifications(failing.pipe(unfused(*_pipeline_operators())))
    assert fused == separate
    assert fused[-1] == ("error", (OSError, "connection reset"))


# -- synthetic stages: every way a chain can end --------------------------------------


class Log:
    def __init__(self) -> None:
        self.calls: list[str] = []


def make(
    log: Log,
    name: str,
    *,
    fail_on: Any = None,
    close_error: Exception | None = None,
    close_raises: bool = False,
    done_on: Any = None,
    batched: bool = False,
) -> Operator:
    """A stage that tags values with ``name`` and records close/abort in ``log``."""

    class _Tag(Stage[Any, Any]):
        def __init__(self) -> None:
            self.feed = self._feed
            self._done = False

        def _feed(self, value: Any) -> Any:
            if value == fail_on or (isinstance(value, list) and fail_on in value):
                raise ValueError(f"{name} failed on {value!r}")
            if value == done_on:
                self._done = True
            out = f"{value}>{name}" if not isinstance(value, list) else [*value, name]
            return [out] if batched else (out,)

        @property
        def done(self) -> bool:
            return self._done

        def close(self) -> tuple[Iterable[Any], Exception | None]:
            log.calls.append(f"close {name}")
            if close_raises:
                raise RuntimeError(f"{name} close raised")
            return ((f"end-{name}",), close_error)

        def abort(self, error: Exception) -> Iterable[Any]:
            log.calls.append(f"abort {name}: {error}")
            return (f"abort-{name}",)

    _Tag.batched = batched
    _Tag.ends_early = done_on is not None
    return stage_operator(_Tag)


def both(build: Callable[[Log], list[Operator]], values: list[Any]) -> tuple[Any, list[str]]:
    """Run the chain fused and unfused; both notifications and logs must agree."""
    results = []
    for compose in (lambda ops_: reactivex.compose(*ops_), lambda ops_: unfused(*ops_)):
        log = Log()
        out = notifications(reactivex.from_iterable(values).pipe(compose(build(log))))
        results.append((out, log.calls))
    assert results[0] == results[1]
    return results[0]


def test_a_chain_completes_closing_every_stage_in_order() -> None:
    out, calls = both(lambda log: [make(log, "a"), make(log, "b"), make(log, "c")], [1, 2])
    assert out == [
        ("next", "1>a>b>c"),
        ("next", "2>a>b>c"),
        ("next", "end-a>b>c"),
        ("next", "end-b>c"),
        ("next", "end-c"),
        ("completed", None),
    ]
    assert calls == ["close a", "close b", "close c"]


def test_a_failing_middle_stage_aborts_the_later_ones_and_drops_the_earlier() -> None:
    out, calls = both(
        lambda log: [make(log, "a"), make(log, "b", fail_on="2>a"), make(log, "c")], [1, 2, 3]
    )
    assert out == [
        ("next", "1>a>b>c"),
        ("next", "abort-b>c"),
        ("next", "abort-c"),
        ("error", (ValueError, "b failed on '2>a'")),
    ]
    assert calls == ["abort b: b failed on '2>a'", "abort c: b failed on '2>a'"]


def test_a_close_error_becomes_the_error_of_the_later_stages() -> None:
    out, calls = both(
        lambda log: [make(log, "a", close_error=KeyError("late")), make(log, "b")], [1]
    )
    assert out == [
        ("next", "1>a>b"),
        ("next", "end-a>b"),
        ("next", "abort-b"),
        ("error", (KeyError, "'late'")),
    ]
    assert calls == ["close a", "abort b: 'late'"]


def test_a_close_that_raises_ends_the_chain_with_that_error() -> None:
    out, calls = both(lambda log: [make(log, "a", close_raises=True), make(log, "b")], [1])
    assert out == [
        ("next", "1>a>b"),
        ("next", "abort-b"),
        ("error", (RuntimeError, "a close raised")),
    ]
    assert calls == ["close a", "abort b: a close raised"]


def test_a_later_stage_failing_on_a_close_output_wins() -> None:
    out, calls = both(
        lambda log: [make(log, "a"), make(log, "b", fail_on="end-a"), make(log, "c")], [1]
    )
    assert out == [
        ("next", "1>a>b>c"),
        ("next", "abort-b>c"),
        ("next", "abort-c"),
        ("error", (ValueError, "b failed on 'end-a'")),
    ]
    assert calls == ["close a", "abort b: b failed on 'end-a'", "abort c: b failed on 'end-a'"]


def test_a_stage_that_ends_early_completes_the_chain_and_stops_the_source() -> None:
    pulled: list[int] = []

    def values() -> Iterable[int]:
        for value in range(1, 10):
            pulled.append(value)
            yield value

    log = Log()
    chain = [make(log, "a"), make(log, "b", done_on="2>a"), make(log, "c")]
    out = notifications(reactivex.from_iterable(values()).pipe(*chain))
    assert out == [
        ("next", "1>a>b>c"),
        ("next", "2>a>b>c"),
        ("next", "end-b>c"),
        ("next", "end-c"),
        ("completed", None),
    ]
    assert log.calls == ["close b", "close c"]
    assert pulled == [1, 2]  # disposed at once: no value after the one that ended it


class _KeepOdd(Stage[list[int], list[int]]):
    batched = True

    def __init__(self) -> None:
        self.feed = self._feed

    @staticmethod
    def _feed(batch: list[int]) -> list[int]:
        return [value for value in batch if value % 2]


def test_empty_batches_are_not_handed_on() -> None:
    seen: list[list[int]] = []

    class _Record(Stage[list[int], list[int]]):
        batched = True

        def __init__(self) -> None:
            self.feed = self._feed

        @staticmethod
        def _feed(batch: list[int]) -> list[int]:
            seen.append(batch)
            return batch

    source = reactivex.from_iterable([[2], [1, 2, 3], [4, 6]])
    out = notifications(source.pipe(stage_operator(_KeepOdd), stage_operator(_Record)))
    assert out == [("next", [1, 3]), ("completed", None)]
    assert seen == [[1, 3]]


def test_an_upstream_error_aborts_every_stage() -> None:
    log = Log()
    source = reactivex.concat(reactivex.of(1), reactivex.throw(OSError("gone")))
    out = notifications(source.pipe(make(log, "a"), make(log, "b")))
    assert out == [
        ("next", "1>a>b"),
        ("next", "abort-a>b"),
        ("next", "abort-b"),
        ("error", (OSError, "gone")),
    ]
    assert log.calls == ["abort a: gone", "abort b: gone"]


def test_disposing_a_chain_mid_stream_stops_every_stage_and_the_source() -> None:
    log = Log()
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, "a"), on_next(20, "b"), on_next(30, "c"), on_completed(40)
    )
    observer = scheduler.start(lambda: xs.pipe(make(log, "x"), make(log, "y"), ops.take(2)))
    assert observer.messages == [on_next(210, "a>x>y"), on_next(220, "b>x>y"), on_completed(220)]
    assert xs.subscriptions == [subscribe(200, 220)]
    assert log.calls == []  # disposed, not completed: nothing closed or aborted


def test_disposing_from_outside_stops_the_source() -> None:
    log = Log()
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(on_next(10, "a"), on_next(50, "b"), on_completed(60))
    observer = scheduler.start(lambda: xs.pipe(make(log, "x"), make(log, "y")), disposed=230)
    assert observer.messages == [on_next(210, "a>x>y")]
    assert xs.subscriptions == [subscribe(200, 230)]
    assert log.calls == []
