"""Marble tests for the ``to_openai()`` operator: batches → ``ChatCompletionChunk``."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem import ChatCompletionChunk
from rxgem.core.chat import ChoiceDelta, ChunkChoice
from rxgem.core.gemini._models import UsageMetadata
from rxgem.items import End, Meta, Text, TextSignature, ToolCall, ToolCallHeader, Usage
from rxgem.operators import to_openai
from rxgem.testing import chunk, expect_marbles, run_marbles
from rxgem.testing._openai_builders import tool_delta, usage_chunk

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed

NOW = 1_700_000_000
# chunk() and usage_chunk() default to id "chatcmpl-test", model "gemini-test", created 0
META = Meta("test", "gemini-test")
SIG = "c2lnbmF0dXJl"


def counter_ids() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"id{next(numbers):04d}"


def fixed_clock() -> float:
    return 0.75  # created is the clock's whole seconds: 0


def op(**options: Any) -> Callable[[Observable[Any]], Observable[ChatCompletionChunk]]:
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", fixed_clock)
    return to_openai(**options)


def delta_chunk(delta: ChoiceDelta) -> ChatCompletionChunk:
    """A chunk whose one choice carries ``delta`` (for fields ``chunk()`` does not set)."""
    template = chunk()
    return ChatCompletionChunk(
        id=template.id,
        created=template.created,
        model=template.model,
        choices=[ChunkChoice(index=0, delta=delta, finish_reason=None)],
    )


def test_role_only_on_the_first_delta() -> None:
    lookup = {
        "a": [META, Text(0, "Hel")],
        "b": [Text(0, "lo"), Text(0, "!")],  # one run of text: one chunk
        "c": [End(0, "STOP")],
    }
    output = run_marbles(op(), "-a-b-c-|", lookup)
    assert output == expect_marbles(
        "-a-b---(c,|)",  # the finish waits for the end of input
        {
            "a": chunk("Hel", role="assistant"),
            "b": chunk("lo!"),
            "c": chunk(finish="stop", native_finish="STOP"),
        },
    )


def test_text_header_then_the_rest_at_the_end() -> None:
    # the diagram in to_openai's docstring: the finish and the usage at the end of input
    counts = UsageMetadata(prompt_token_count=10, candidates_token_count=4, total_token_count=14)
    lookup = {
        "a": [META, Text(0, "Hi")],
        "b": [ToolCallHeader(0, 0, "read", None)],
        "c": [ToolCall(0, 0, "read", None, {"path": "a.py"}), End(0, "STOP", True), Usage(counts)],
    }
    output = run_marbles(op(), "-a-b-c-------|", lookup)
    assert output == expect_marbles(
        "-a-b-x-------(f,u,|)",
        {
            "a": chunk("Hi", role="assistant"),
            "b": chunk(tool_calls=[tool_delta(0, id="call_id0001", name="read")]),
            "x": chunk(tool_calls=[tool_delta(0, '{"path":"a.py"}')]),
            "f": chunk(finish="tool_calls", native_finish="STOP"),
            "u": usage_chunk(10, 4),
        },
    )


def test_header_then_tool_call_gives_header_chunk_then_arguments_only() -> None:
    lookup = {
        "a": [META, ToolCallHeader(0, 0, "read", None)],
        "b": [ToolCall(0, 0, "read", None, {"path": "a.py"}, SIG), End(0, "STOP", True)],
    }
    header = tool_delta(0, id="call_id0001", name="read")
    arguments = tool_delta(0, '{"path":"a.py"}', signature=SIG)
    output = run_marbles(op(), "-a-b-----|", lookup)
    assert output == expect_marbles(
        "-h-x-----(f,|)",
        {
            "h": chunk(role="assistant", tool_calls=[header]),
            "x": chunk(tool_calls=[arguments]),
            "f": chunk(finish="tool_calls", native_finish="STOP"),
        },
    )


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
    output = run_marbles(op(), "-a-b---------|", lookup)
    assert output == expect_marbles(
        "-a-(f,g,s)---(e,|)",
        {
            "a": chunk("Sure.", role="assistant"),
            "f": chunk(tool_calls=[tool_delta(0, '{"x":1}', id="gem-1", name="f")]),
            "g": chunk(tool_calls=[tool_delta(1, "{}", id="call_id0001", name="g")]),
            "s": chunk(signature=SIG),
            "e": chunk(finish="tool_calls", native_finish="STOP"),
        },
    )


def test_id_factory_and_clock_make_deterministic_ids() -> None:
    ticks = iter([NOW + 0.5, NOW + 9.0, NOW + 20.0])
    lookup = {
        "a": [Text(0, "Hi")],  # no Meta: the chat id is minted
        "b": [ToolCall(0, 0, "f", None, {}), End(0, "STOP", True)],
    }
    output = run_marbles(op(clock=lambda: next(ticks)), "-a-b-|", lookup)
    chunks = output.values
    assert output.completed
    assert [c.id for c in chunks] == ["chatcmpl-id0001"] * 3
    assert [c.created for c in chunks] == [NOW] * 3  # the clock is read once
    assert [c.model for c in chunks] == ["gemini"] * 3  # no modelVersion seen
    assert chunks[1].choices[0].delta.tool_calls[0].id == "call_id0002"


def test_model_option_overrides_the_model_version() -> None:
    lookup = {"a": [Meta("r1", "models/gemini-2.5-pro"), Text(0, "Hi")], "b": [End(0, "STOP")]}
    named = run_marbles(op(model="my-gemini"), "-a-b-|", lookup)
    default = run_marbles(op(), "-a-b-|", lookup)
    assert [c.model for c in named.values] == ["my-gemini", "my-gemini"]
    assert [c.model for c in default.values] == ["gemini-2.5-pro", "gemini-2.5-pro"]


def test_usage_chunk_is_last_and_can_be_dropped() -> None:
    counts = UsageMetadata(
        prompt_token_count=10,
        candidates_token_count=4,
        thoughts_token_count=6,
        total_token_count=20,
    )
    lookup = {"a": [META, Text(0, "Hi")], "b": [End(0, "STOP"), Usage(counts)]}
    expected = {
        "a": chunk("Hi", role="assistant"),
        "f": chunk(finish="stop", native_finish="STOP"),
        "u": usage_chunk(10, 10, 20, reasoning=6),
    }
    with_usage = run_marbles(op(), "-a-b-|", lookup)
    without = run_marbles(op(include_usage=False), "-a-b-|", lookup)
    assert with_usage == expect_marbles("-a---(f,u,|)", expected)
    assert without == expect_marbles("-a---(f,|)", expected)


@pytest.mark.parametrize(
    ("field", "marbles", "expected"),
    [
        (
            "reasoning_content",
            "-a-b-|",
            {"a": chunk(reasoning="Hmm.", role="assistant"), "b": chunk("Hi")},
        ),
        (
            "reasoning",
            "-a-b-|",
            {"a": delta_chunk(ChoiceDelta(role="assistant", reasoning="Hmm.")), "b": chunk("Hi")},
        ),
        # thought text dropped: nothing at tick 1, the first delta sent carries the role
        (None, "---b-|", {"b": chunk("Hi", role="assistant")}),
    ],
)
def test_reasoning_field(field: Any, marbles: str, expected: dict[str | float, Any]) -> None:
    lookup = {"a": [META, Text(0, "Hmm.", thought=True)], "b": [Text(0, "Hi")]}
    output = run_marbles(op(reasoning_field=field), "-a-b-|", lookup)
    assert output == expect_marbles(marbles, expected)


def test_invalid_reasoning_field_raises_at_factory_time() -> None:
    with pytest.raises(ValueError, match="reasoning_field"):
        to_openai(reasoning_field="thinking")  # type: ignore[arg-type]


def test_choices_open_in_index_order() -> None:
    lookup = {"a": [META, Text(1, "B")], "b": [Text(0, "A")]}
    output = run_marbles(op(), "-a-----b-|", lookup)
    assert output == expect_marbles(
        "-(x,y)-b-|",
        {
            "x": chunk(role="assistant", choice=0),
            "y": chunk("B", role="assistant", choice=1),
            "b": chunk("A", choice=0),
        },
    )


def test_upstream_error_passes_through() -> None:
    boom = RuntimeError("upstream failed")
    output = run_marbles(op(), "-a--#", {"a": [META, Text(0, "Hi")]}, error=boom)
    assert output == expect_marbles(
        "-x--#", {"x": chunk("Hi", role="assistant")}, error=RuntimeError
    )
    assert output.error is boom


def test_disposal_unsubscribes_from_the_source() -> None:
    lookup = {"a": [META, Text(0, "Hi")], "b": [End(0, "STOP")]}
    output = run_marbles(op(), "-a---b-|", lookup, dispose_at=3)
    assert output == expect_marbles("-x", {"x": chunk("Hi", role="assistant")})
    assert output.source_subscriptions == [(0, 3)]


def test_take_unsubscribes_from_the_source_at_the_last_chunk() -> None:
    lookup = {"a": [META, Text(0, "Hi")], "b": [End(0, "STOP")]}
    output = run_marbles([("to_openai", op()), ("take", ops.take(1))], "-a-b-|", lookup)
    assert output == expect_marbles("-(x,|)", {"x": chunk("Hi", role="assistant")})
    assert output.source_subscriptions == [(0, 1)]


def test_two_subscriptions_get_independent_ids_and_state() -> None:
    # reactivex.testing: the kit subscribes once; this needs two overlapping subscriptions
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
        tool = tool_delta(0, "{}", id=f"call_{call}", name="f")
        same: dict[str, Any] = {"id": f"chatcmpl-{chat}", "model": "gemini"}
        return [
            on_next(at + 10, chunk("Hi", role="assistant", **same)),
            on_next(at + 20, chunk(tool_calls=[tool], **same)),
            on_next(at + 30, chunk(finish="tool_calls", native_finish="STOP", **same)),
            on_completed(at + 30),
        ]

    # the factory is shared, so ids interleave: 210 id0001, 215 id0002, 220 id0003, 225 id0004
    assert expected(200, "id0001", "id0003") == first.messages
    assert expected(205, "id0002", "id0004") == second.messages


def test_two_subscriptions_with_random_ids_differ() -> None:
    operator = to_openai()  # one operator instance, subscribed twice
    lookup = {"a": [Text(0, "Hi")], "b": [End(0, "STOP")]}
    first = run_marbles(operator, "-a-b-|", lookup)
    second = run_marbles(operator, "-a-b-|", lookup)
    ids_1 = {c.id for c in first.values}
    ids_2 = {c.id for c in second.values}
    assert len(first.values) == len(second.values) == 2
    assert len(ids_1) == 1
    assert len(ids_2) == 1
    assert ids_1 != ids_2
    assert next(iter(ids_1)).startswith("chatcmpl-")
