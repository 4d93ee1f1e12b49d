"""Tests of ``from_body()``, the light bytes source, alone and under ``gemini_to_openai()``.

``from_body`` must behave as ``reactivex.from_iterable`` does for bytes (values, completion,
errors, disposal, schedulers, reentrancy), read no piece after its subscription is disposed
of, and close a generator it stops reading. Piped into a core operator it feeds the core
directly (``core_operator``'s fast path), which must not change what comes out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import reactivex
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_harness import counter_ids
from reactivex import Observable, abc
from reactivex import operators as ops
from reactivex.scheduler import CurrentThreadScheduler
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem import GeminiAPIError, samples
from rxgem.core import SSEEvent
from rxgem.operators import core_operator, decode_sse, from_body, gemini_to_openai, pipeline_stages
from rxgem.testing import call, event, expect_marbles, run_marbles

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error

CLOCK = 1_700_000_000.0
SAMPLES = samples.names()


def msg(data: str) -> SSEEvent:
    return SSEEvent(data=data)


class Pieces:
    """A generator of byte pieces that records what was read and whether it was closed."""

    def __init__(self, pieces: Sequence[bytes], *, then: Exception | None = None) -> None:
        self.pieces = pieces
        self.then = then
        self.read: list[bytes] = []
        self.closed = False

    def __call__(self) -> Iterator[bytes]:
        try:
            for piece in self.pieces:
                self.read.append(piece)
                yield piece
            if self.then is not None:
                raise self.then
        finally:
            self.closed = True


def endless() -> Pieces:
    return Pieces([b"data: %d\n\n" % n for n in range(10_000)])


Notification = tuple[str, Any]


def notifications(source: Observable[Any], *more: Callable[[Any], Any]) -> list[Notification]:
    """Everything ``source.pipe(*more)`` sends to a synchronous subscriber, in order."""
    seen: list[Notification] = []
    stream = source.pipe(*more) if more else source
    stream.subscribe(
        lambda value: seen.append(("next", value)),
        lambda error: seen.append(("error", error)),
        lambda: seen.append(("completed", None)),
    )
    return seen


# --------------------------------------------------------------------------- the source


def test_pieces_then_completion_in_one_tick() -> None:
    # the diagram in from_body's docstring, on a marble source of bodies
    bodies: dict[str | float, Any] = {"a": [b"x", b"y"], "b": [b"z"]}
    output = run_marbles(ops.flat_map(from_body), "-a------b-|", bodies)
    assert output == expect_marbles("-(x,y)--z-|", {"x": b"x", "y": b"y", "z": b"z"})


def test_a_whole_body_is_one_piece() -> None:
    body = b"data: 1\n\ndata: 2\n\n"
    assert notifications(from_body(body)) == [("next", body), ("completed", None)]
    assert notifications(from_body(bytearray(body))) == [("next", body), ("completed", None)]


def test_a_str_is_refused_at_call_time() -> None:
    with pytest.raises(TypeError, match="not str"):
        from_body("data: 1\n\n")  # type: ignore[arg-type]


def test_an_empty_body_completes() -> None:
    assert notifications(from_body([])) == [("completed", None)]


def test_the_pieces_before_an_error_are_delivered_then_the_error() -> None:
    boom = ConnectionResetError("reset")
    source = Pieces([b"a", b"b"], then=boom)
    assert notifications(from_body(source())) == [("next", b"a"), ("next", b"b"), ("error", boom)]


def test_an_iterable_that_cannot_be_iterated_is_an_error() -> None:
    class Broken:
        def __iter__(self) -> Iterator[bytes]:
            raise OSError("no body")

    ((kind, error),) = notifications(from_body(Broken()))
    assert kind == "error"
    assert isinstance(error, OSError)


Outcome = tuple[list[Notification], tuple[type[BaseException], tuple[Any, ...]] | None]


def raising(
    source: Observable[Any],
    on_next: Callable[[Any], None],
    on_error: Callable[[Exception], None] | None = None,
    on_completed: Callable[[], None] | None = None,
    *,
    scheduler: TestScheduler | None = None,
) -> tuple[type[BaseException], tuple[Any, ...]] | None:
    """What ``subscribe`` (or, with ``scheduler``, running it) raises, if anything."""
    try:
        source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)
        if scheduler is not None:
            scheduler.start()
    except Exception as error:
        return type(error), error.args
    return None


def faulty(source: Observable[Any], fail_on: Any, *, with_on_error: bool) -> Outcome:
    """A subscriber whose ``on_next`` raises on ``fail_on``: what it saw, what was raised."""
    seen: list[Notification] = []

    def take(value: Any) -> None:
        seen.append(("next", value))
        if value == fail_on:
            raise ValueError("consumer failed")

    def error(e: Exception) -> None:
        seen.append(("error", type(e)))

    raised = raising(source, take, error if with_on_error else None)
    return seen, raised


@pytest.mark.parametrize("with_on_error", [True, False])
def test_an_observer_that_raises_gets_the_error_as_from_iterable_does(with_on_error: bool) -> None:
    pieces = [b"a", b"b", b"c"]
    light = faulty(from_body(pieces), b"b", with_on_error=with_on_error)
    assert light == faulty(reactivex.from_iterable(pieces), b"b", with_on_error=with_on_error)
    assert light[1] is not None  # never silent: the error reaches the subscriber's caller
    assert CurrentThreadScheduler.singleton().schedule_required()  # the trampoline recovered


@pytest.mark.parametrize("with_on_error", [True, False])
def test_an_observer_that_raises_under_a_core_operator_as_from_iterable(
    with_on_error: bool,
) -> None:
    pieces = [b"data: 1\n\n", b"data: 2\n\n", b"data: 3\n\n"]

    def run(source: Observable[bytes]) -> Outcome:
        return faulty(source.pipe(decode_sse()), msg("2"), with_on_error=with_on_error)

    light = run(from_body(pieces))
    assert light == run(reactivex.from_iterable(pieces))
    assert light[1] is not None


def test_an_observer_that_raises_on_completion_as_from_iterable() -> None:
    def done() -> None:
        raise ValueError("consumer failed at the end")

    def run(source: Observable[bytes]) -> tuple[type[BaseException], tuple[Any, ...]] | None:
        return raising(source, lambda _: None, None, done)

    assert run(from_body([b"a"])) == run(reactivex.from_iterable([b"a"])) is not None
    direct = from_body([b"data: 1\n\n"]).pipe(decode_sse())
    plain = reactivex.from_iterable([b"data: 1\n\n"]).pipe(decode_sse())
    assert run(direct) == run(plain) is not None


def test_an_observer_that_raises_on_a_scheduler_as_from_iterable() -> None:
    def fail(_: Any) -> None:
        raise ValueError("consumer failed")

    light = raising(from_body([b"a"]), fail, scheduler=TestScheduler())
    assert light == raising(reactivex.from_iterable([b"a"]), fail, scheduler=TestScheduler())
    assert light is not None


@pytest.mark.parametrize("name", SAMPLES)
def test_a_subscriber_without_on_error_gets_what_from_iterable_gives(name: str) -> None:
    # a stream's error (error_mid_stream: GeminiAPIError) is raised to the subscriber's
    # caller, as on from_iterable; never dropped
    pieces = split(samples.read(name), 97)

    def run(source: Observable[bytes]) -> Outcome:
        seen: list[Notification] = []
        operator = gemini_to_openai(id_factory=counter_ids(), clock=lambda: CLOCK)
        raised = raising(source.pipe(operator), lambda c: seen.append(("next", c.to_dict())))
        return seen, raised

    assert run(from_body(pieces)) == run(reactivex.from_iterable(pieces))


def test_the_issue_s_error_mid_stream_is_raised_not_dropped() -> None:
    printed: list[Any] = []
    stream = from_body([samples.read("error_mid_stream")]).pipe(gemini_to_openai(model="m"))
    with pytest.raises(GeminiAPIError):
        stream.subscribe(printed.append)
    assert printed  # the chunks before the error, then the error


def test_a_source_error_without_on_error_is_raised_as_from_iterable() -> None:
    class Broken:
        def __iter__(self) -> Iterator[bytes]:
            raise OSError("no body")

    def body() -> Iterator[bytes]:
        yield b"a"
        raise ConnectionResetError("reset")

    def run(source: Observable[bytes]) -> Outcome:
        seen: list[Notification] = []
        return seen, raising(source, lambda piece: seen.append(("next", piece)))

    for make in (Broken, body):
        light = run(from_body(make()))
        assert light == run(reactivex.from_iterable(make()))
        assert light[1] is not None


def test_take_stops_reading_and_closes_the_generator() -> None:
    source = endless()
    generator = source()  # held here: only from_body can close it
    seen = notifications(from_body(generator), ops.take(2))
    assert seen == [("next", b"data: 0\n\n"), ("next", b"data: 1\n\n"), ("completed", None)]
    assert source.read == [b"data: 0\n\n", b"data: 1\n\n"]  # not one piece more
    assert source.closed


def test_dispose_between_pieces_stops_reading() -> None:
    scheduler = TestScheduler()
    source = endless()
    seen: list[bytes] = []
    holder: list[abc.DisposableBase] = []

    def take(piece: bytes) -> None:
        seen.append(piece)
        if len(seen) == 3:
            holder[0].dispose()

    generator = source()
    holder.append(from_body(generator, scheduler=scheduler).subscribe(take))
    assert seen == []  # scheduled, not run yet
    scheduler.start()
    assert len(seen) == 3
    assert len(source.read) == 3
    assert source.closed


def test_dispose_before_the_loop_runs_reads_nothing() -> None:
    scheduler = TestScheduler()
    source = endless()
    subscription = from_body(source()).subscribe(scheduler=scheduler)
    subscription.dispose()
    scheduler.start()
    assert source.read == []


def test_the_subscribe_scheduler_runs_the_loop_once() -> None:
    scheduler = TestScheduler()
    observer = scheduler.start(lambda: from_body([b"a", b"b"]))  # subscribes at 200
    assert [on_next(200, b"a"), on_next(200, b"b"), on_completed(200)] == observer.messages


def test_its_own_scheduler_wins_over_the_subscribe_scheduler() -> None:
    own, other = TestScheduler(), TestScheduler()
    seen: list[bytes] = []
    from_body([b"a"], scheduler=own).subscribe(seen.append, scheduler=other)
    other.start()
    assert seen == []
    own.start()
    assert seen == [b"a"]


def test_a_list_can_be_subscribed_to_again_a_generator_is_read_once() -> None:
    listed = from_body([b"a", b"b"])
    assert notifications(listed) == notifications(listed)
    once = from_body(Pieces([b"a"])())
    assert notifications(once) == [("next", b"a"), ("completed", None)]
    assert notifications(once) == [("completed", None)]


def order(make: Callable[[list[bytes]], Observable[Any]]) -> list[str]:
    """What a subscriber that subscribes to another synchronous source from ``on_next`` sees.

    Rx queues the inner source's loop on the trampoline until the outer loop is done.
    """
    log: list[str] = []

    def outer(value: Any) -> None:
        log.append(f"outer {value}")
        reactivex.of("i").subscribe(lambda _: log.append(f"inner after {value}"))

    make([b"data: a\n\n", b"data: b\n\n"]).subscribe(outer)
    return log


def test_nested_subscriptions_keep_the_trampoline_order_of_from_iterable() -> None:
    expected = order(reactivex.from_iterable)
    assert expected[-1].startswith("inner")
    assert order(from_body) == expected
    assert order(lambda pieces: from_body(pieces).pipe(ops.map(lambda b: b))) == expected


# --------------------------------------------------------------------------- under a core operator


def test_done_stops_reading_and_closes_the_generator() -> None:
    source = Pieces([b"data: 1\n\n", b"data: [DONE]\n\n", b"data: 2\n\n"])
    generator = source()
    seen = notifications(from_body(generator), decode_sse())
    assert seen == [("next", msg("1")), ("completed", None)]
    assert source.read == [b"data: 1\n\n", b"data: [DONE]\n\n"]
    assert source.closed


def test_the_operator_lets_go_of_the_body_even_if_its_observer_does_not() -> None:
    # an observer reached without Observable.subscribe (no auto-detach) never disposes
    scheduler = TestScheduler()
    observer = scheduler.create_observer()
    source = Pieces([b"data: 1\n\n", b"data: [DONE]\n\n", b"data: 2\n\n"])
    generator = source()
    stream = from_body(generator).pipe(decode_sse())
    stream._subscribe_core(observer)
    assert [on_next(0, msg("1")), on_completed(0)] == observer.messages
    assert len(source.read) == 2
    assert source.closed


def test_take_after_the_operator_stops_reading() -> None:
    source = endless()
    generator = source()
    seen = notifications(from_body(generator), decode_sse(), ops.take(2))
    assert seen == [("next", msg("0")), ("next", msg("1")), ("completed", None)]
    assert len(source.read) == 2
    assert source.closed


def test_the_operator_on_a_marble_source_of_bodies() -> None:
    bodies: dict[str | float, Any] = {
        "a": [b"data: 1\n\nda", b"ta: 2\n\n"],
        "b": [b"data: [DONE]\n\n", b"data: 3\n\n"],
    }

    def body_events(pieces: list[bytes]) -> Observable[SSEEvent]:
        return from_body(pieces).pipe(decode_sse())

    output = run_marbles(ops.concat_map(body_events), "-a---b-|", bodies)
    assert output == expect_marbles("-(x,y)-|", {"x": msg("1"), "y": msg("2")})


def test_a_source_error_comes_after_what_the_core_owes() -> None:
    boom = ConnectionResetError("reset")
    source = Pieces([event(call("f", q=1))], then=boom)
    seen = notifications(from_body(source()), gemini_to_openai())
    assert seen[-1] == ("error", boom)
    names = [
        tool_call["function"].get("name")
        for _, chunk in seen[:-1]
        for tool_call in chunk.to_dict()["choices"][0]["delta"].get("tool_calls", [])
    ]
    assert "f" in names  # the pending call was flushed before the error


def test_a_core_that_cannot_be_made_is_an_error_to_a_direct_subscriber() -> None:
    def broken() -> Any:
        raise RuntimeError("no core")

    operator: Callable[[Observable[bytes]], Observable[Any]] = core_operator(broken)()
    seen = notifications(from_body([b"a"]), operator)
    assert [kind for kind, _ in seen] == ["error"]
    assert isinstance(seen[0][1], RuntimeError)


def test_an_observer_object_can_subscribe_directly() -> None:
    scheduler = TestScheduler()
    observer = scheduler.create_observer()
    from_body([b"data: 1\n\n"]).pipe(decode_sse()).subscribe(observer)
    assert [on_next(0, msg("1")), on_completed(0)] == observer.messages


def test_nested_subscriptions_under_the_operator_keep_the_order_of_from_iterable() -> None:
    expected = order(lambda pieces: reactivex.from_iterable(pieces).pipe(decode_sse()))
    assert expected[-1].startswith("inner")
    assert order(lambda pieces: from_body(pieces).pipe(decode_sse())) == expected


def test_the_direct_subscription_leaves_the_trampoline_idle() -> None:
    notifications(from_body([b"data: 1\n\n"]), decode_sse())
    assert CurrentThreadScheduler.singleton().schedule_required()


def test_disposing_a_direct_subscription_stops_its_observer() -> None:
    seen: list[SSEEvent] = []
    subscription = from_body([b"data: 1\n\n"]).pipe(decode_sse()).subscribe(seen.append)
    subscription.dispose()  # after the end: harmless
    assert seen == [msg("1")]


# --------------------------------------------------------------------------- same as from_iterable


def outcome(source: Observable[bytes], *more: Callable[[Any], Any]) -> list[Notification]:
    """The notifications of ``source | gemini_to_openai() | more``, chunks as dicts."""
    operator = gemini_to_openai(id_factory=counter_ids(), clock=lambda: CLOCK)
    return [
        (kind, value.to_dict() if kind == "next" else value and (type(value), value.args))
        for kind, value in notifications(source, operator, *more)
    ]


def split(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_gives_what_from_iterable_gives(name: str) -> None:
    pieces = split(samples.read(name), 97)
    assert outcome(from_body(pieces)) == outcome(reactivex.from_iterable(pieces))


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(SAMPLES),
    size=st.integers(1, 4096),
    take=st.none() | st.integers(0, 6),
    fail_after=st.none() | st.integers(0, 5),
    six_stages=st.booleans(),
)
def test_same_as_from_iterable_split_anywhere(
    name: str, size: int, take: int | None, fail_after: int | None, six_stages: bool
) -> None:
    pieces = split(samples.read(name), size)
    boom = ConnectionResetError("reset")

    def body() -> Iterator[bytes]:
        for number, piece in enumerate(pieces):
            if number == fail_after:
                raise boom
            yield piece

    more: list[Callable[[Any], Any]] = [] if take is None else [ops.take(take)]
    if six_stages:  # the fast path feeds decode_sse; the five others subscribe as usual

        def stages() -> list[Callable[[Any], Any]]:
            options: dict[str, Any] = {"id_factory": counter_ids(), "clock": lambda: CLOCK}
            return [op for _, op in pipeline_stages(**options)]

        def comparable(seen: list[Notification]) -> list[Notification]:
            return [
                (kind, value.to_dict() if kind == "next" else value and type(value))
                for kind, value in seen
            ]

        light = notifications(from_body(body()), *stages(), *more)
        plain = notifications(reactivex.from_iterable(body()), *stages(), *more)
        assert comparable(light) == comparable(plain)
    else:
        assert outcome(from_body(body()), *more) == outcome(reactivex.from_iterable(body()), *more)
