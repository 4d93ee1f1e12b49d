"""Marble tests for the ``group_by_slot()`` operator: responses → batches of items."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem import MalformedStreamError
from rxgem.core import GenerateContentResponse
from rxgem.core.gemini._models import FunctionCall, PartialArg, UsageMetadata
from rxgem.core.slots._policies import EveryPartPolicy
from rxgem.items import Batch, CallPart, Finish, Meta, Text, Usage
from rxgem.operators import group_by_slot
from rxgem.testing import (
    call,
    call_end,
    call_start,
    expect_marbles,
    finish,
    partial_args,
    response,
    run_marbles,
    text,
    usage,
)

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
subscribe = ReactiveTest.subscribe

SIG = "c2lnbmF0dXJl"
# the responseId and modelVersion every response() carries: the first batch opens with it
META = Meta("test", "gemini-test")
EMPTY = response(response_id=None, model=None)  # {}


def decode(payload: str) -> GenerateContentResponse:
    """A response the builders do not make (empty parts, a usage without counts)."""
    return msgspec.json.decode(payload, type=GenerateContentResponse)


def slots(batches: list[Batch]) -> list[int]:
    """The slot of every ``CallPart`` in the batches, in order."""
    return [item.slot for batch in batches for item in batch if isinstance(item, CallPart)]


def test_text_calls_and_finish_become_batches() -> None:
    # the diagram in group_by_slot's docstring
    lookup = {
        "a": response(text("Let me read.")),
        "b": response(call("read", path="a")),
        "c": response(call("read", path="b")),
        "d": response(finish("STOP")),
    }
    output = run_marbles(group_by_slot(), "---a---b---c---d--|", lookup)
    assert output == expect_marbles(
        "---a---b---c---d--|",
        {
            "a": [META, Text(0, "Let me read.")],
            "b": [CallPart(0, 0, FunctionCall("read", {"path": "a"}))],
            "c": [CallPart(0, 1, FunctionCall("read", {"path": "b"}))],
            "d": [Finish(0, "STOP")],
        },
    )


def test_text_finish_usage_and_meta_in_one_batch() -> None:
    lookup = {
        "a": response(text("Hi"), usage(3, total=5), model="gemini-2.5-flash", response_id="r1"),
        "b": response(text(" there"), finish("STOP"), model="gemini-2.5-flash", response_id="r1"),
    }
    counts = UsageMetadata(prompt_token_count=3, total_token_count=5)
    output = run_marbles(group_by_slot(), "-a--b-|", lookup)
    assert output == expect_marbles(
        "-x--y-|",
        {
            "x": [Meta("r1", "gemini-2.5-flash"), Text(0, "Hi"), Usage(counts)],
            # the unchanged Meta is not repeated
            "y": [Text(0, " there"), Finish(0, "STOP")],
        },
    )


def test_parallel_same_name_calls_then_a_grown_resend() -> None:
    lookup = {
        "a": response(call("read_file", path="a.py", sig=SIG)),
        "b": response(call("read_file", path="b.py")),
        "c": response(call("read_file", path="c.py")),
        "d": response(call("search", query="rx")),
        "e": response(call("search", query="rxgem operators")),
    }
    output = run_marbles(group_by_slot(), "-a-b-c-d-e-|", lookup)
    assert output == expect_marbles(
        "-a-b-c-d-e-|",
        {
            "a": [META, CallPart(0, 0, FunctionCall("read_file", {"path": "a.py"}), SIG)],
            "b": [CallPart(0, 1, FunctionCall("read_file", {"path": "b.py"}))],
            "c": [CallPart(0, 2, FunctionCall("read_file", {"path": "c.py"}))],
            "d": [CallPart(0, 3, FunctionCall("search", {"query": "rx"}))],
            "e": [CallPart(0, 3, FunctionCall("search", {"query": "rxgem operators"}))],
        },
    )
    assert slots(output.values) == [0, 1, 2, 3, 3]


def test_two_parts_of_one_event_are_two_calls() -> None:
    lookup = {"a": response(call("f", x=1), call("f", x=1))}
    output = run_marbles(group_by_slot(), "--a-|", lookup)
    assert output == expect_marbles(
        "--x-|",
        {
            "x": [
                META,
                CallPart(0, 0, FunctionCall("f", {"x": 1})),
                CallPart(0, 1, FunctionCall("f", {"x": 1})),
            ]
        },
    )


def test_calls_with_ids_keep_their_slot_when_resent() -> None:
    lookup = {
        "a": response(call("get_weather", city="Oslo", id="c1")),
        "b": response(call("get_weather", city="Rome", id="c2")),
        "c": response(call("get_weather", city="Oslo", unit="C", id="c1")),
    }
    output = run_marbles(group_by_slot(), "-a-b-c-|", lookup)
    assert output == expect_marbles(
        "-a-b-c-|",
        {
            "a": [META, CallPart(0, 0, FunctionCall("get_weather", {"city": "Oslo"}, "c1"))],
            "b": [CallPart(0, 1, FunctionCall("get_weather", {"city": "Rome"}, "c2"))],
            "c": [CallPart(0, 0, FunctionCall("get_weather", {"city": "Oslo", "unit": "C"}, "c1"))],
        },
    )
    assert slots(output.values) == [0, 1, 0]


def test_slots_are_numbered_per_candidate() -> None:
    lookup = {"a": response(call("f", x=1)), "b": response(call("g", y=2), candidate=1)}
    output = run_marbles(group_by_slot(), "-a-b-|", lookup)
    assert output == expect_marbles(
        "-a-b-|",
        {
            "a": [META, CallPart(0, 0, FunctionCall("f", {"x": 1}))],
            "b": [CallPart(1, 0, FunctionCall("g", {"y": 2}))],
        },
    )


def test_empty_responses_produce_no_emission() -> None:
    lookup = {
        "a": response(call("f", x=1)),
        "e": EMPTY,
        "p": decode('{"candidates": [{"content": {"parts": []}, "index": 0}]}'),
        # a usage snapshot without token counts (Vertex) is not an item either
        "u": decode('{"usageMetadata": {"trafficType": "ON_DEMAND"}}'),
        "b": response(call("g", y=2)),  # the same Meta as "a": not repeated
    }
    output = run_marbles(group_by_slot(), "-a-e-p-u-b-|", lookup)
    assert output == expect_marbles(
        "-a-------b-|",
        {
            "a": [META, CallPart(0, 0, FunctionCall("f", {"x": 1}))],
            "b": [CallPart(0, 1, FunctionCall("g", {"y": 2}))],
        },
    )


def test_streamed_call_pieces_share_the_open_slot() -> None:
    lookup = {
        "a": response(call_start("find")),
        "b": response(partial_args("$.q", "ab")),
        "c": response(call_end()),
        "d": response(call_start("find")),
    }
    output = run_marbles(group_by_slot(), "-a-b-c-d-|", lookup)
    piece = PartialArg(json_path="$.q", string_value="ab", will_continue=True)
    # the terminal {} joins the open call; a new {name, willContinue} opens slot 1
    assert output == expect_marbles(
        "-a-b-c-d-|",
        {
            "a": [META, CallPart(0, 0, FunctionCall("find", will_continue=True))],
            "b": [CallPart(0, 0, FunctionCall(partial_args=[piece], will_continue=True))],
            "c": [CallPart(0, 0, FunctionCall())],
            "d": [CallPart(0, 1, FunctionCall("find", will_continue=True))],
        },
    )


def test_partial_args_without_an_open_call_is_malformed() -> None:
    lookup = {
        "a": response(call("f", x=1)),
        "o": response(partial_args("$.q", "x", more=False)),  # no call is open
        "b": response(call("g", y=2)),
    }
    output = run_marbles(group_by_slot(), "-a-o-b-|", lookup)
    first = [META, CallPart(0, 0, FunctionCall("f", {"x": 1}))]
    assert output == expect_marbles("-x-#", {"x": first}, error=MalformedStreamError)
    assert isinstance(output.error, MalformedStreamError)
    assert output.error.event == 2
    assert output.source_subscriptions == [(0, 3)]


PARALLEL_THEN_REPLAY = {
    "a": response(call("read_file", path="a.py", sig=SIG)),
    "b": response(call("read_file", path="b.py")),
    "c": response(call("read_file", path="c.py")),
    "d": response(call("read_file", path="c.py")),  # an identical re-send of the last call
}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # latest: parallel calls are distinct, the replay joins its call
        ("latest", [0, 1, 2, 2]),
        # positional: (part 0, name, signature) merges every unsigned later call
        ("positional", [0, 1, 1, 1]),
        # every_part: never merges, so the replay is a duplicate call
        ("every_part", [0, 1, 2, 3]),
        (EveryPartPolicy(), [0, 1, 2, 3]),
    ],
)
def test_slot_policies(policy: Any, expected: list[int]) -> None:
    output = run_marbles(group_by_slot(slot_policy=policy), "-a-b-c-d-|", PARALLEL_THEN_REPLAY)
    a, b, c, d = expected
    replay = policy == "latest"  # it compared the args and found them the same
    assert output == expect_marbles(
        "-a-b-c-d-|",
        {
            "a": [META, CallPart(0, a, FunctionCall("read_file", {"path": "a.py"}), SIG)],
            "b": [CallPart(0, b, FunctionCall("read_file", {"path": "b.py"}))],
            "c": [CallPart(0, c, FunctionCall("read_file", {"path": "c.py"}))],
            "d": [CallPart(0, d, FunctionCall("read_file", {"path": "c.py"}), None, replay)],
        },
    )


def test_invalid_policy_name_raises_at_factory_time() -> None:
    with pytest.raises(ValueError, match="unknown slot policy 'first'"):
        group_by_slot(slot_policy="first")  # type: ignore[arg-type]


def test_upstream_error_passes_through() -> None:
    boom = RuntimeError("socket closed")
    output = run_marbles(group_by_slot(), "-a--#", {"a": response(call("f", x=1))}, error=boom)
    assert output == expect_marbles(
        "-x--#", {"x": [META, CallPart(0, 0, FunctionCall("f", {"x": 1}))]}, error=RuntimeError
    )
    assert output.error is boom


def test_disposal_unsubscribes_from_the_source() -> None:
    lookup = {"a": response(call("f", x=1)), "b": response(call("g", y=2))}
    output = run_marbles(group_by_slot(), "-a---b-|", lookup, dispose_at=3)
    first = [META, CallPart(0, 0, FunctionCall("f", {"x": 1}))]
    assert output == expect_marbles("-x", {"x": first})
    assert output.source_subscriptions == [(0, 3)]


def test_take_unsubscribes_from_the_source_at_the_first_batch() -> None:
    lookup = {
        "e": EMPTY,  # no batch, so take(1) still waits
        "a": response(call("f", x=1)),
        "b": response(call("g", y=2)),
    }
    output = run_marbles(
        [("group_by_slot", group_by_slot()), ("take", ops.take(1))], "-e-a-b-|", lookup
    )
    assert output == expect_marbles(
        "---(x,|)", {"x": [META, CallPart(0, 0, FunctionCall("f", {"x": 1}))]}
    )
    assert output.source_subscriptions == [(0, 3)]


def test_two_subscriptions_get_their_own_slot_tables() -> None:
    # reactivex.testing: the kit subscribes once; this needs two overlapping subscriptions
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, response()),
        on_next(20, response(call("read_file", path="a.py"))),
        on_next(30, response(call("read_file", path="b.py"))),
        on_completed(40),
    )
    # every_part: a shared table would number the calls 0..3 across both subscriptions
    operator = group_by_slot(slot_policy="every_part")  # one operator instance
    stream: Observable[Any] = xs.pipe(operator)
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()

    def expected(at: int) -> list[Any]:
        return [
            on_next(at + 10, [META]),  # a shared table would not repeat it
            on_next(at + 20, [CallPart(0, 0, FunctionCall("read_file", {"path": "a.py"}))]),
            on_next(at + 30, [CallPart(0, 1, FunctionCall("read_file", {"path": "b.py"}))]),
            on_completed(at + 40),
        ]

    assert expected(200) == first.messages
    assert expected(205) == second.messages
    assert [subscribe(200, 240), subscribe(205, 245)] == xs.subscriptions
