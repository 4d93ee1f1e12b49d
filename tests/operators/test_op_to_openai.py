"""Marble tests for the ``to_openai()`` operator: batches → ``ChatCompletionChunk``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxgem import (
    ChatCompletionChunk,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    UsageMetadata,
)
from rxgem.items import End, Meta, Text, TextSignature, ToolCall, ToolCallHeader, Usage
from rxgem.operators import to_openai

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error
subscribe = ReactiveTest.subscribe

NOW = 1_700_000_000
META = Meta("r1", "gemini-2.5-flash")
SIG = "c2lnbmF0dXJl"


def counter_ids() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"id{next(numbers):04d}"


def fixed_clock() -> float:
    return NOW + 0.75


def op(**options: Any) -> Callable[[Observable[Any]], Observable[ChatCompletionChunk]]:
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", fixed_clock)
    return to_openai(**options)


def chunk(
    delta: ChoiceDelta,
    finish: Any = None,
    native: str | None = None,
    *,
    index: int = 0,
    id: str = "chatcmpl-r1",
    model: str = "gemini-2.5-flash",
) -> ChatCompletionChunk:
    choice = ChunkChoice(
        index=index, delta=delta, finish_reason=finish, native_finish_reason=native
    )
    return ChatCompletionChunk(id=id, created=NOW, model=model, choices=[choice])


def deltas(results: list[Any]) -> list[ChoiceDelta]:
    return [r.value.value.choices[0].delta for r in results if r.value.kind == "N"]


def test_role_only_on_the_first_delta() -> None:
    lookup = {
        "a": [META, Text(0, "Hel")],
        "b": [Text(0, "lo"), Text(0, "!")],  # one run of text: one chunk
        "c": [End(0, "STOP")],
    }
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-b-c-|", lookup).pipe(op()))
        expected = exp(
            "-a-b-c-|",
            {
                "a": chunk(ChoiceDelta(role="assistant", content="Hel")),
                "b": chunk(ChoiceDelta(content="lo!")),
                "c": chunk(ChoiceDelta(), "stop", "STOP"),
            },
        )
    assert expected == results


def test_header_then_tool_call_gives_header_chunk_then_arguments_only() -> None:
    lookup = {
        "a": [META, ToolCallHeader(0, 0, "read", None)],
        "b": [ToolCall(0, 0, "read", None, {"path": "a.py"}, SIG), End(0, "STOP", True)],
    }
    header = ChoiceDeltaToolCall(
        index=0,
        id="call_id0001",
        type="function",
        function=ChoiceDeltaToolCallFunction(name="read", arguments=""),
    )
    arguments = ChoiceDeltaToolCall(
        index=0,
        function=ChoiceDeltaToolCallFunction(arguments='{"path":"a.py"}'),
        extra_content={"google": {"thought_signature": SIG}},
    )
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-|", lookup).pipe(op()))
    assert [
        on_next(201, chunk(ChoiceDelta(role="assistant", tool_calls=[header]))),
        on_next(203, chunk(ChoiceDelta(tool_calls=[arguments]))),
        on_next(203, chunk(ChoiceDelta(), "tool_calls", "STOP")),
        on_completed(205),
    ] == results


def test_tool_call_without_header_is_one_full_chunk_with_the_gemini_id() -> None:
    lookup = {
        "a": [META, Text(0, "Sure.")],
        "b": [
            ToolCall(0, 0, "f", "gem-1", {"x": 1}),
            ToolCall(0, 1, "g", None, {}),
            TextSignature(0, SIG),
            End(0, "STOP", True),
        ],
    }
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-|", lookup).pipe(op()))
    assert deltas(results) == [
        ChoiceDelta(role="assistant", content="Sure."),
        ChoiceDelta(
            tool_calls=[
                ChoiceDeltaToolCall(
                    index=0,
                    id="gem-1",
                    type="function",
                    function=ChoiceDeltaToolCallFunction(name="f", arguments='{"x":1}'),
                )
            ]
        ),
        ChoiceDelta(
            tool_calls=[
                ChoiceDeltaToolCall(
                    index=1,
                    id="call_id0001",
                    type="function",
                    function=ChoiceDeltaToolCallFunction(name="g", arguments="{}"),
                )
            ]
        ),
        ChoiceDelta(extra_content={"google": {"thought_signature": SIG}}),
        ChoiceDelta(),
    ]
    assert [r.time for r in results] == [201, 203, 203, 203, 203, 205]
    assert results[-2].value.value.choices[0].finish_reason == "tool_calls"


def test_id_factory_and_clock_make_deterministic_ids() -> None:
    ticks = iter([NOW + 0.5, NOW + 9.0, NOW + 20.0])
    lookup = {
        "a": [Text(0, "Hi")],  # no Meta: the chat id is minted
        "b": [ToolCall(0, 0, "f", None, {}), End(0, "STOP", True)],
    }
    operator = op(clock=lambda: next(ticks))
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-|", lookup).pipe(operator))
    chunks = [r.value.value for r in results if r.value.kind == "N"]
    assert [c.id for c in chunks] == ["chatcmpl-id0001"] * 3
    assert [c.created for c in chunks] == [NOW] * 3  # the clock is read once
    assert [c.model for c in chunks] == ["gemini"] * 3  # no modelVersion seen
    assert chunks[1].choices[0].delta.tool_calls[0].id == "call_id0002"


def test_model_option_overrides_the_model_version() -> None:
    lookup = {"a": [Meta("r1", "models/gemini-2.5-pro"), Text(0, "Hi")], "b": [End(0, "STOP")]}
    with marbles_testing() as (start, cold, _hot, _exp):
        named = start(cold("-a-b-|", lookup).pipe(op(model="my-gemini")))
    with marbles_testing() as (start, cold, _hot, _exp):
        default = start(cold("-a-b-|", lookup).pipe(op()))
    assert [r.value.value.model for r in named[:2]] == ["my-gemini", "my-gemini"]
    assert [r.value.value.model for r in default[:2]] == ["gemini-2.5-pro", "gemini-2.5-pro"]


def test_usage_chunk_is_last_and_can_be_dropped() -> None:
    usage = UsageMetadata(
        prompt_token_count=10,
        candidates_token_count=4,
        thoughts_token_count=6,
        total_token_count=20,
    )
    lookup = {"a": [META, Text(0, "Hi")], "b": [End(0, "STOP"), Usage(usage)]}
    with marbles_testing() as (start, cold, _hot, _exp):
        with_usage = start(cold("-a-b-|", lookup).pipe(op()))
    with marbles_testing() as (start, cold, _hot, _exp):
        without = start(cold("-a-b-|", lookup).pipe(op(include_usage=False)))
    usage_chunk = ChatCompletionChunk(
        id="chatcmpl-r1",
        created=NOW,
        model="gemini-2.5-flash",
        choices=[],
        usage=CompletionUsage(
            prompt_tokens=10,
            completion_tokens=10,
            total_tokens=20,
            completion_tokens_details={"reasoning_tokens": 6},
        ),
    )
    finish = chunk(ChoiceDelta(), "stop", "STOP")
    assert [
        on_next(201, chunk(ChoiceDelta(role="assistant", content="Hi"))),
        on_next(203, finish),
        on_next(203, usage_chunk),
        on_completed(205),
    ] == with_usage
    assert [
        on_next(201, chunk(ChoiceDelta(role="assistant", content="Hi"))),
        on_next(203, finish),
        on_completed(205),
    ] == without


@pytest.mark.parametrize(
    ("field", "expected", "times"),
    [
        (
            "reasoning_content",
            [
                ChoiceDelta(role="assistant", reasoning_content="Hmm."),
                ChoiceDelta(content="Hi"),
            ],
            [201, 203, 205],
        ),
        (
            "reasoning",
            [ChoiceDelta(role="assistant", reasoning="Hmm."), ChoiceDelta(content="Hi")],
            [201, 203, 205],
        ),
        # thought text dropped: nothing at tick 1, the first delta sent carries the role
        (None, [ChoiceDelta(role="assistant", content="Hi")], [203, 205]),
    ],
)
def test_reasoning_field(field: Any, expected: list[ChoiceDelta], times: list[int]) -> None:
    lookup = {"a": [META, Text(0, "Hmm.", thought=True)], "b": [Text(0, "Hi")]}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-|", lookup).pipe(op(reasoning_field=field)))
    assert deltas(results) == expected
    assert [r.time for r in results] == times


def test_invalid_reasoning_field_raises_at_factory_time() -> None:
    with pytest.raises(ValueError, match="reasoning_field"):
        to_openai(reasoning_field="thinking")  # type: ignore[arg-type]


def test_choices_open_in_index_order() -> None:
    lookup = {"a": [META, Text(1, "B")], "b": [Text(0, "A")]}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-|", lookup).pipe(op()))
    assert [
        on_next(201, chunk(ChoiceDelta(role="assistant"), index=0)),
        on_next(201, chunk(ChoiceDelta(role="assistant", content="B"), index=1)),
        on_next(203, chunk(ChoiceDelta(content="A"), index=0)),
        on_completed(205),
    ] == results


def test_upstream_error_passes_through() -> None:
    boom = RuntimeError("upstream failed")
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a--#", {"a": [META, Text(0, "Hi")]}, boom).pipe(op()))
    assert [
        on_next(201, chunk(ChoiceDelta(role="assistant", content="Hi"))),
        on_error(204, lambda e: e is boom),
    ] == results


def test_disposal_unsubscribes_from_the_source() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, [META, Text(0, "Hi")]),
        on_next(30, [End(0, "STOP")]),
        on_completed(40),
    )
    observer = scheduler.start(lambda: xs.pipe(op()), disposed=220)
    assert [on_next(210, chunk(ChoiceDelta(role="assistant", content="Hi")))] == (observer.messages)
    assert [subscribe(200, 220)] == xs.subscriptions


def test_take_unsubscribes_from_the_source_at_the_last_chunk() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, [META, Text(0, "Hi")]),
        on_next(20, [End(0, "STOP")]),
        on_completed(30),
    )
    observer = scheduler.start(lambda: xs.pipe(op(), ops.take(1)))
    assert [
        on_next(210, chunk(ChoiceDelta(role="assistant", content="Hi"))),
        on_completed(210),
    ] == observer.messages
    assert [subscribe(200, 210)] == xs.subscriptions


def test_two_subscriptions_get_independent_ids_and_state() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, [Text(0, "Hi")]),
        on_next(20, [ToolCall(0, 0, "f", None, {}), End(0, "STOP", True)]),
        on_completed(30),
    )
    stream: Observable[Any] = xs.pipe(op())  # one operator instance, one id factory
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()

    def expected(at: int, chat: str, call: str) -> list[Any]:
        tool = ChoiceDeltaToolCall(
            index=0,
            id=f"call_{call}",
            type="function",
            function=ChoiceDeltaToolCallFunction(name="f", arguments="{}"),
        )
        same = {"id": f"chatcmpl-{chat}", "model": "gemini"}
        return [
            on_next(at + 10, chunk(ChoiceDelta(role="assistant", content="Hi"), **same)),
            on_next(at + 20, chunk(ChoiceDelta(tool_calls=[tool]), **same)),
            on_next(at + 20, chunk(ChoiceDelta(), "tool_calls", "STOP", **same)),
            on_completed(at + 30),
        ]

    # the factory is shared, so ids interleave: 210 id0001, 215 id0002, 220 id0003, 225 id0004
    assert expected(200, "id0001", "id0003") == first.messages
    assert expected(205, "id0002", "id0004") == second.messages


def test_two_subscriptions_with_random_ids_differ() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, [Text(0, "Hi")]), on_next(20, [End(0, "STOP")]), on_completed(30)
    )
    stream: Observable[Any] = xs.pipe(to_openai())
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(second))
    scheduler.start()
    ids_1 = {r.value.value.id for r in first.messages if r.value.kind == "N"}
    ids_2 = {r.value.value.id for r in second.messages if r.value.kind == "N"}
    assert len(ids_1) == 1
    assert len(ids_2) == 1
    assert ids_1 != ids_2
    assert next(iter(ids_1)).startswith("chatcmpl-")
