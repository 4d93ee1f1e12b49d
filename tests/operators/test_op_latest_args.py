"""Marble tests for the ``latest_args()`` operator: batches with ``CallPart`` → ``SlotUpdate``."""

from __future__ import annotations

from typing import Any

from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem import MalformedStreamError
from rxgem.core.gemini._models import FunctionCall, PartialArg
from rxgem.items import CallPart, Finish, SlotUpdate, Text
from rxgem.operators import latest_args
from rxgem.testing import expect_marbles, run_marbles

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
subscribe = ReactiveTest.subscribe

SIG1 = "Zmlyc3Q="
SIG2 = "c2Vjb25k"


def part(
    slot: int,
    name: str | None,
    args: dict[str, Any] | None = None,
    signature: str | None = None,
    *,
    candidate: int = 0,
    id: str | None = None,
) -> CallPart:
    return CallPart(candidate, slot, FunctionCall(name=name, args=args, id=id), signature)


def pieces(*partial: PartialArg, more: bool = True) -> CallPart:
    """One Vertex ``partialArgs`` part of the call streaming in slot 0."""
    call = FunctionCall(partial_args=list(partial), will_continue=True if more else None)
    return CallPart(0, 0, call)


def test_first_part_becomes_a_slot_update() -> None:
    lookup = {"a": [part(0, "search", {"q": "A"}, SIG1, id="c1")]}
    output = run_marbles(latest_args(), "--a-|", lookup)
    assert output == expect_marbles(
        "--u-|", {"u": [SlotUpdate(0, 0, "search", "c1", {"q": "A"}, SIG1)]}
    )


def test_identical_replay_is_swallowed_and_grown_replay_updates() -> None:
    # the diagram in latest_args' docstring, then one more grown replay
    lookup = {
        "a": [part(0, "search", {"q": "A"})],
        "b": [part(0, "search", {"q": "AB"})],
        "c": [part(0, "search", {"q": "AB"})],  # identical: nothing at this tick
        "d": [part(0, "search", {"q": "AB", "n": 3})],
    }
    output = run_marbles(latest_args(), "-a-b-c-d-|", lookup)
    assert output == expect_marbles(
        "-x-y---z-|",
        {
            "x": [SlotUpdate(0, 0, "search", None, {"q": "A"})],
            "y": [SlotUpdate(0, 0, "search", None, {"q": "AB"})],
            "z": [SlotUpdate(0, 0, "search", None, {"q": "AB", "n": 3})],
        },
    )


def test_replay_with_a_bool_instead_of_an_int_is_a_change() -> None:
    lookup = {"a": [part(0, "f", {"x": 1})], "b": [part(0, "f", {"x": True})]}
    output = run_marbles(latest_args(), "-a-b-|", lookup)
    assert output == expect_marbles(
        "-x-y-|",
        {
            "x": [SlotUpdate(0, 0, "f", None, {"x": 1})],
            "y": [SlotUpdate(0, 0, "f", None, {"x": True})],
        },
    )
    assert type(output.values[1][0].args["x"]) is bool


def test_other_items_pass_through_in_order() -> None:
    lookup = {
        "a": [Text(0, "Hi"), part(0, "f", {"x": 1}), Finish(0, "STOP")],
        "b": [Text(0, "again"), part(0, "f", {"x": 1})],  # the replay alone is dropped
    }
    output = run_marbles(latest_args(), "-a-b-|", lookup)
    assert output == expect_marbles(
        "-x-y-|",
        {
            "x": [Text(0, "Hi"), SlotUpdate(0, 0, "f", None, {"x": 1}), Finish(0, "STOP")],
            "y": [Text(0, "again")],
        },
    )


def test_slots_are_kept_apart_by_candidate_and_slot() -> None:
    lookup = {
        "a": [part(0, "f", {"x": 1}), part(1, "f", {"x": 1})],
        "b": [part(0, "f", {"x": 1}, candidate=1)],
    }
    output = run_marbles(latest_args(), "-a-b-|", lookup)
    assert output == expect_marbles(
        "-x-y-|",
        {
            "x": [
                SlotUpdate(0, 0, "f", None, {"x": 1}),
                SlotUpdate(0, 1, "f", None, {"x": 1}),
            ],
            "y": [SlotUpdate(1, 0, "f", None, {"x": 1})],
        },
    )


def test_partial_args_are_assembled_over_several_ticks() -> None:
    lookup = {
        "a": [CallPart(0, 0, FunctionCall(name="plan_trip", will_continue=True), SIG1)],
        "b": [pieces(PartialArg(json_path="$.title", string_value="Tok"))],
        "c": [
            pieces(
                PartialArg(json_path="$.title", string_value="yo trip"),
                PartialArg(json_path="$.stops[0].city", string_value="Kyoto"),
            )
        ],
        "d": [
            pieces(
                PartialArg(json_path="$.stops[1].days", number_value=2),
                PartialArg(json_path="$.stops[0].days", number_value=3),
                PartialArg(json_path="$.opts.rail[0]['jr.pass']", bool_value=True),
            )
        ],
        "e": [
            pieces(
                PartialArg(json_path="$.note", null_value="NULL_VALUE"),
                PartialArg(json_path="$.title", string_value=""),  # an empty closing fragment
                more=False,
            )
        ],
        "f": [CallPart(0, 0, FunctionCall())],  # the terminal {} changes nothing
    }
    title = "Tokyo trip"
    after_c = {"title": title, "stops": [{"city": "Kyoto"}]}
    after_d = {
        "title": title,
        "stops": [{"city": "Kyoto", "days": 3}, {"days": 2}],
        "opts": {"rail": [{"jr.pass": True}]},
    }
    output = run_marbles(latest_args(), "-a-b-c-d-e-f-|", lookup)
    # the recorded updates are stable snapshots: later pieces did not mutate them
    assert output == expect_marbles(
        "-a-b-c-d-e---|",
        {
            "a": [SlotUpdate(0, 0, "plan_trip", None, {}, SIG1)],
            "b": [SlotUpdate(0, 0, "plan_trip", None, {"title": "Tok"}, SIG1)],
            "c": [SlotUpdate(0, 0, "plan_trip", None, after_c, SIG1)],
            "d": [SlotUpdate(0, 0, "plan_trip", None, after_d, SIG1)],
            "e": [SlotUpdate(0, 0, "plan_trip", None, {**after_d, "note": None}, SIG1)],
        },
    )


def test_signature_latest_non_empty_wins() -> None:
    lookup = {
        "a": [part(0, "f", {"x": 1}, SIG1)],
        "b": [part(0, "f", {"x": 1})],  # no signature: keeps SIG1, nothing changed
        "c": [part(0, "f", {"x": 1}, "")],  # an empty signature never wins
        "d": [part(0, "f", {"x": 1}, SIG2)],
        "e": [part(0, "f", {"x": 1, "y": 2})],
    }
    output = run_marbles(latest_args(), "-a-b-c-d-e-|", lookup)
    assert output == expect_marbles(
        "-a-----d-e-|",
        {
            "a": [SlotUpdate(0, 0, "f", None, {"x": 1}, SIG1)],
            "d": [SlotUpdate(0, 0, "f", None, {"x": 1}, SIG2)],
            "e": [SlotUpdate(0, 0, "f", None, {"x": 1, "y": 2}, SIG2)],
        },
    )


def test_unsupported_json_path_is_malformed_and_unsubscribes() -> None:
    lookup = {
        "a": [CallPart(0, 0, FunctionCall(name="f", will_continue=True))],
        "b": [pieces(PartialArg(json_path="$.items[*]", string_value="x"))],
        "c": [part(1, "g", {"y": 1})],
    }
    output = run_marbles(latest_args(), "-a-b-c-|", lookup)
    assert output == expect_marbles(
        "-x-#", {"x": [SlotUpdate(0, 0, "f", None, {})]}, error=MalformedStreamError
    )
    assert isinstance(output.error, MalformedStreamError)
    assert "[*]" in output.error.snippet
    assert output.source_subscriptions == [(0, 3)]


def test_upstream_error_passes_through() -> None:
    boom = TimeoutError("read timeout")
    lookup = {"a": [part(0, "f", {"x": 1})], "b": [part(0, "f", {"x": 1})]}
    output = run_marbles(latest_args(), "-a-b-#", lookup, error=boom)
    assert output == expect_marbles(
        "-x---#", {"x": [SlotUpdate(0, 0, "f", None, {"x": 1})]}, error=TimeoutError
    )
    assert output.error is boom


def test_disposal_unsubscribes_from_the_source() -> None:
    lookup = {"a": [part(0, "f", {"x": 1})], "b": [part(0, "f", {"x": 12})]}
    output = run_marbles(latest_args(), "-a---b-|", lookup, dispose_at=3)
    assert output == expect_marbles("-x", {"x": [SlotUpdate(0, 0, "f", None, {"x": 1})]})
    assert output.source_subscriptions == [(0, 3)]


def test_take_unsubscribes_from_the_source_at_the_first_batch() -> None:
    lookup = {"a": [part(0, "f", {"x": 1})], "b": [part(0, "f", {"x": 12})]}
    output = run_marbles([("latest_args", latest_args()), ("take", ops.take(1))], "-a-b-|", lookup)
    assert output == expect_marbles("-(x,|)", {"x": [SlotUpdate(0, 0, "f", None, {"x": 1})]})
    assert output.source_subscriptions == [(0, 1)]


def test_two_subscriptions_do_not_share_slots() -> None:
    # reactivex.testing: the kit subscribes once; this needs two overlapping subscriptions
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, [part(0, "f", {"x": 1})]),
        on_next(20, [part(0, "f", {"x": 1})]),
        on_completed(30),
    )
    stream: Observable[Any] = xs.pipe(latest_args())  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(215, lambda *_: stream.subscribe(second))
    scheduler.start()
    update = [SlotUpdate(0, 0, "f", None, {"x": 1})]
    # with a shared table the second subscription's first part would be a swallowed replay
    assert [on_next(210, update), on_completed(230)] == first.messages
    assert [on_next(225, update), on_completed(245)] == second.messages
    assert [subscribe(200, 230), subscribe(215, 245)] == xs.subscriptions
