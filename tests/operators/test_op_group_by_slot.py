"""Marble tests for the ``group_by_slot()`` operator: responses → batches of items."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxgem import (
    EveryPartPolicy,
    FunctionCall,
    GenerateContentResponse,
    MalformedStreamError,
    UsageMetadata,
)
from rxgem.items import CallPart, Finish, Meta, Text, Usage
from rxgem.operators import group_by_slot

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error
subscribe = ReactiveTest.subscribe

SIG = "c2lnbmF0dXJl"


def response(payload: str) -> GenerateContentResponse:
    return msgspec.json.decode(payload, type=GenerateContentResponse)


def call(
    name: str | None,
    args: dict[str, Any] | None = None,
    *,
    signature: str | None = None,
    id: str | None = None,
    candidate: int = 0,
    **extra: Any,
) -> GenerateContentResponse:
    """A response whose one candidate holds one ``functionCall`` part."""
    function_call: dict[str, Any] = {"name": name, "args": args, "id": id, **extra}
    part: dict[str, Any] = {
        "functionCall": {k: v for k, v in function_call.items() if v is not None}
    }
    if signature is not None:
        part["thoughtSignature"] = signature
    body = {"candidates": [{"content": {"parts": [part], "role": "model"}, "index": candidate}]}
    return response(json.dumps(body))


def slots(results: list[Any]) -> list[int]:
    """The slot of every ``CallPart`` in the recorded batches, in order."""
    return [
        item.slot
        for record in results
        if record.value.kind == "N"
        for item in record.value.value
        if isinstance(item, CallPart)
    ]


def test_text_finish_usage_and_meta_in_one_batch() -> None:
    first = response(
        '{"candidates": [{"content": {"parts": [{"text": "Hi"}]}, "index": 0}],'
        ' "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 5},'
        ' "modelVersion": "gemini-2.5-flash", "responseId": "r1"}'
    )
    last = response(
        '{"candidates": [{"content": {"parts": [{"text": " there"}]},'
        ' "finishReason": "STOP", "index": 0}],'
        ' "modelVersion": "gemini-2.5-flash", "responseId": "r1"}'
    )
    usage = UsageMetadata(prompt_token_count=3, total_token_count=5)
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a--b-|", {"a": first, "b": last}).pipe(group_by_slot()))
        expected = exp(
            "-x--y-|",
            {
                "x": [Meta("r1", "gemini-2.5-flash"), Text(0, "Hi"), Usage(usage)],
                # the unchanged Meta is not repeated
                "y": [Text(0, " there"), Finish(0, "STOP")],
            },
        )
    assert expected == results


def test_parallel_same_name_calls_then_a_grown_resend() -> None:
    lookup = {
        "a": call("read_file", {"path": "a.py"}, signature=SIG),
        "b": call("read_file", {"path": "b.py"}),
        "c": call("read_file", {"path": "c.py"}),
        "d": call("search", {"query": "rx"}),
        "e": call("search", {"query": "rxgem operators"}),
    }
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-b-c-d-e-|", lookup).pipe(group_by_slot()))
        expected = exp(
            "-a-b-c-d-e-|",
            {
                "a": [CallPart(0, 0, FunctionCall("read_file", {"path": "a.py"}), SIG)],
                "b": [CallPart(0, 1, FunctionCall("read_file", {"path": "b.py"}))],
                "c": [CallPart(0, 2, FunctionCall("read_file", {"path": "c.py"}))],
                "d": [CallPart(0, 3, FunctionCall("search", {"query": "rx"}))],
                "e": [CallPart(0, 3, FunctionCall("search", {"query": "rxgem operators"}))],
            },
        )
    assert expected == results
    assert slots(results) == [0, 1, 2, 3, 3]


def test_two_parts_of_one_event_are_two_calls() -> None:
    both = response(
        '{"candidates": [{"content": {"parts": ['
        '{"functionCall": {"name": "f", "args": {"x": 1}}},'
        '{"functionCall": {"name": "f", "args": {"x": 1}}}]}}]}'
    )
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("--a-|", {"a": both}).pipe(group_by_slot()))
    assert slots(results) == [0, 1]
    assert [record.time for record in results] == [202, 204]


def test_calls_with_ids_keep_their_slot_when_resent() -> None:
    lookup = {
        "a": call("get_weather", {"city": "Oslo"}, id="c1"),
        "b": call("get_weather", {"city": "Rome"}, id="c2"),
        "c": call("get_weather", {"city": "Oslo", "unit": "C"}, id="c1"),
    }
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-c-|", lookup).pipe(group_by_slot()))
    assert slots(results) == [0, 1, 0]
    assert [on_completed(207)] == results[-1:]


def test_slots_are_numbered_per_candidate() -> None:
    lookup = {
        "a": call("f", {"x": 1}, candidate=0),
        "b": call("g", {"y": 2}, candidate=1),
    }
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-b-|", lookup).pipe(group_by_slot()))
        expected = exp(
            "-a-b-|",
            {
                "a": [CallPart(0, 0, FunctionCall("f", {"x": 1}))],
                "b": [CallPart(1, 0, FunctionCall("g", {"y": 2}))],
            },
        )
    assert expected == results


def test_empty_responses_produce_no_emission() -> None:
    lookup = {
        "a": call("f", {"x": 1}),
        "e": response("{}"),
        "p": response('{"candidates": [{"content": {"parts": []}, "index": 0}]}'),
        # a usage snapshot without token counts (Vertex) is not an item either
        "u": response('{"usageMetadata": {"trafficType": "ON_DEMAND"}}'),
        "b": call("g", {"y": 2}),
    }
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-e-p-u-b-|", lookup).pipe(group_by_slot()))
        expected = exp(
            "-a-------b-|",
            {
                "a": [CallPart(0, 0, FunctionCall("f", {"x": 1}))],
                "b": [CallPart(0, 1, FunctionCall("g", {"y": 2}))],
            },
        )
    assert expected == results


def test_streamed_call_pieces_share_the_open_slot() -> None:
    piece = {"partialArgs": [{"jsonPath": "$.q", "stringValue": "ab"}], "willContinue": True}
    lookup = {
        "a": call("find", willContinue=True),
        "b": call(None, **piece),
        "c": response('{"candidates": [{"content": {"parts": [{"functionCall": {}}]}}]}'),
        "d": call("find", willContinue=True),
    }
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-c-d-|", lookup).pipe(group_by_slot()))
    # the terminal {} joins the open call; a new {name, willContinue} opens slot 1
    assert slots(results) == [0, 0, 0, 1]
    assert [record.time for record in results] == [201, 203, 205, 207, 209]


def test_partial_args_without_an_open_call_is_malformed() -> None:
    orphan = call(None, partialArgs=[{"jsonPath": "$.q", "stringValue": "x"}])
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, call("f", {"x": 1})),
        on_next(20, orphan),
        on_next(30, call("g", {"y": 2})),
        on_completed(40),
    )
    observer = scheduler.start(lambda: xs.pipe(group_by_slot()))
    assert [
        on_next(210, [CallPart(0, 0, FunctionCall("f", {"x": 1}))]),
        on_error(220, lambda e: isinstance(e, MalformedStreamError) and e.event == 2),
    ] == observer.messages
    assert [subscribe(200, 220)] == xs.subscriptions


PARALLEL_THEN_REPLAY = {
    "a": call("read_file", {"path": "a.py"}, signature=SIG),
    "b": call("read_file", {"path": "b.py"}),
    "c": call("read_file", {"path": "c.py"}),
    "d": call("read_file", {"path": "c.py"}),  # an identical re-send of the last call
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
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-c-d-|", PARALLEL_THEN_REPLAY).pipe(group_by_slot(policy)))
    assert slots(results) == expected
    assert [record.time for record in results] == [201, 203, 205, 207, 209]


def test_invalid_policy_name_raises_at_factory_time() -> None:
    with pytest.raises(ValueError, match="unknown slot policy 'first'"):
        group_by_slot("first")  # type: ignore[arg-type]


def test_upstream_error_passes_through() -> None:
    boom = RuntimeError("socket closed")
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a--#", {"a": call("f", {"x": 1})}, boom).pipe(group_by_slot()))
    assert [
        on_next(201, [CallPart(0, 0, FunctionCall("f", {"x": 1}))]),
        on_error(204, lambda e: e is boom),
    ] == results


def test_disposal_unsubscribes_from_the_source() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_hot_observable(
        on_next(210, call("f", {"x": 1})),
        on_next(260, call("g", {"y": 2})),
        on_completed(300),
    )
    observer = scheduler.start(lambda: xs.pipe(group_by_slot()), disposed=250)
    assert [on_next(210, [CallPart(0, 0, FunctionCall("f", {"x": 1}))])] == observer.messages
    assert [subscribe(200, 250)] == xs.subscriptions


def test_take_unsubscribes_from_the_source_at_the_first_batch() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, response("{}")),  # no batch, so take(1) still waits
        on_next(20, call("f", {"x": 1})),
        on_next(30, call("g", {"y": 2})),
        on_completed(40),
    )
    observer = scheduler.start(lambda: xs.pipe(group_by_slot(), ops.take(1)))
    assert [
        on_next(220, [CallPart(0, 0, FunctionCall("f", {"x": 1}))]),
        on_completed(220),
    ] == observer.messages
    assert [subscribe(200, 220)] == xs.subscriptions


def test_two_subscriptions_get_their_own_slot_tables() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, response('{"responseId": "r1"}')),
        on_next(20, call("read_file", {"path": "a.py"})),
        on_next(30, call("read_file", {"path": "b.py"})),
        on_completed(40),
    )
    # every_part: a shared table would number the calls 0..3 across both subscriptions
    stream: Observable[Any] = xs.pipe(group_by_slot("every_part"))  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()

    def expected(at: int) -> list[Any]:
        return [
            on_next(at + 10, [Meta("r1", None)]),  # a shared table would not repeat it
            on_next(at + 20, [CallPart(0, 0, FunctionCall("read_file", {"path": "a.py"}))]),
            on_next(at + 30, [CallPart(0, 1, FunctionCall("read_file", {"path": "b.py"}))]),
            on_completed(at + 40),
        ]

    assert expected(200) == first.messages
    assert expected(205) == second.messages
    assert [subscribe(200, 240), subscribe(205, 245)] == xs.subscriptions
