"""Marble tests for the ``flush_on_finish()`` operator: text now, calls and finishes at the end."""

from __future__ import annotations

from typing import Any

import pytest
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem import TruncatedStreamError
from rxgem.core.gemini._models import FunctionCall, UsageMetadata
from rxgem.items import (
    Blocked,
    CallPart,
    End,
    Finish,
    Meta,
    SlotUpdate,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    Usage,
)
from rxgem.operators import flush_on_finish
from rxgem.testing import expect_marbles, run_marbles

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
subscribe = ReactiveTest.subscribe

TEXT_SIG = "dGV4dCBzaWc="
USAGE_1 = Usage(UsageMetadata(prompt_token_count=10, total_token_count=12))
USAGE_2 = Usage(
    UsageMetadata(prompt_token_count=10, candidates_token_count=5, total_token_count=15)
)


def update(slot: int, name: str, args: dict[str, Any], *, candidate: int = 0) -> SlotUpdate:
    return SlotUpdate(candidate, slot, name, None, args)


def is_truncated(*candidates: int) -> Any:
    def check(error: Exception) -> bool:
        return isinstance(error, TruncatedStreamError) and error.candidates == candidates

    return check


def test_text_passes_at_once_and_calls_finishes_and_usage_wait_for_the_end() -> None:
    # the diagram in flush_on_finish's docstring (the usage comes with the finish)
    lookup = {
        "a": [Text(0, "Reading.")],
        "b": [update(0, "read", {"path": "a.py"})],
        "c": [Finish(0, "STOP"), USAGE_1],
        "d": [Text(0, "Done.")],
    }
    output = run_marbles(flush_on_finish(), "---a---b---c---d---|", lookup)
    assert output == expect_marbles(
        "---a---h-------d---(z,|)",
        {
            "a": [Text(0, "Reading.")],
            "h": [ToolCallHeader(0, 0, "read", None)],
            "d": [Text(0, "Done.")],
            "z": [
                ToolCall(0, 0, "read", None, {"path": "a.py"}),
                End(0, "STOP", has_calls=True),
                USAGE_1,
            ],
        },
    )


def test_text_and_meta_pass_at_their_tick() -> None:
    lookup = {
        "a": [Meta("r1", "gemini-2.5-flash"), Text(0, "Hel")],
        "b": [Text(0, "lo"), Text(0, "", signature=TEXT_SIG)],  # empty text: held as signature
        "c": [Finish(0, "STOP")],
    }
    output = run_marbles(flush_on_finish(), "-a-b-c-|", lookup)
    assert output == expect_marbles(
        "-a-b---(z,|)",
        {
            "a": [Meta("r1", "gemini-2.5-flash"), Text(0, "Hel")],
            "b": [Text(0, "lo")],
            "z": [TextSignature(0, TEXT_SIG), End(0, "STOP")],
        },
    )


def test_mid_stream_finish_flushes_nothing() -> None:
    lookup = {
        "a": [Text(0, "Let me run code.")],
        "b": [Finish(0, "STOP")],  # code execution: a STOP mid-stream
        "c": [Text(0, "Now the call."), update(0, "save", {"v": 1})],
        "d": [update(0, "save", {"v": 12})],
        "e": [Finish(0, "STOP"), USAGE_1],
    }
    output = run_marbles(flush_on_finish(announce="none"), "-a-b-c-d-e-|", lookup)
    assert output == expect_marbles(
        "-a---c-----(z,|)",
        {
            "a": [Text(0, "Let me run code.")],
            "c": [Text(0, "Now the call.")],
            "z": [
                ToolCall(0, 0, "save", None, {"v": 12}),
                End(0, "STOP", has_calls=True),
                USAGE_1,
            ],
        },
    )


def test_completion_batch_order() -> None:
    lookup = {
        "a": [Text(0, "thinking", thought=True, signature=TEXT_SIG)],
        "b": [update(1, "read", {"path": "b.py"})],
        "c": [update(0, "read", {"path": "a.py"}), USAGE_1],
        "d": [Finish(0, "STOP"), USAGE_2],
    }
    output = run_marbles(flush_on_finish(announce="none"), "-a-b-c-d-|", lookup)
    assert output == expect_marbles(
        "-a-------(z,|)",
        {
            "a": [Text(0, "thinking", thought=True, signature=TEXT_SIG)],
            "z": [
                ToolCall(0, 0, "read", None, {"path": "a.py"}),
                ToolCall(0, 1, "read", None, {"path": "b.py"}),
                TextSignature(0, TEXT_SIG),
                End(0, "STOP", has_calls=True),
                USAGE_2,  # the last snapshot
            ],
        },
    )


def test_completion_batch_is_ordered_by_candidate() -> None:
    lookup = {
        "a": [update(0, "g", {"y": 1}, candidate=1), Finish(1, "STOP")],
        "b": [Text(0, "Hi"), Finish(0, "MAX_TOKENS", "too long")],
    }
    output = run_marbles(flush_on_finish(announce="none"), "-a-b-|", lookup)
    assert output == expect_marbles(
        "---a-(z,|)",
        {
            "a": [Text(0, "Hi")],
            "z": [
                End(0, "MAX_TOKENS", message="too long"),
                ToolCall(1, 0, "g", None, {"y": 1}),
                End(1, "STOP", has_calls=True),
            ],
        },
    )


def test_announce_first_emits_one_header_when_the_first_slot_appears() -> None:
    lookup = {
        "a": [Text(0, "Reading.")],
        "b": [update(0, "read", {"path": "a.py"})],
        "c": [update(1, "read", {"path": "b.py"})],  # not the first slot: no header
        "d": [update(0, "read", {"path": "a.py", "n": 2}), Finish(0, "STOP")],
    }
    output = run_marbles(flush_on_finish(announce="first"), "-a-b-c-d-|", lookup)
    assert output == expect_marbles(
        "-a-h-----(z,|)",
        {
            "a": [Text(0, "Reading.")],
            "h": [ToolCallHeader(0, 0, "read", None)],
            "z": [
                ToolCall(0, 0, "read", None, {"path": "a.py", "n": 2}),
                ToolCall(0, 1, "read", None, {"path": "b.py"}),
                End(0, "STOP", has_calls=True),
            ],
        },
    )


def test_announce_first_is_per_candidate_and_carries_the_gemini_id() -> None:
    lookup = {
        "a": [SlotUpdate(0, 0, "f", "id-0", {}), SlotUpdate(1, 0, "g", "id-1", {})],
        "b": [Finish(0, "STOP"), Finish(1, "STOP")],
    }
    output = run_marbles(flush_on_finish(), "-a-b-|", lookup)
    assert output == expect_marbles(
        "-h---(z,|)",
        {
            "h": [ToolCallHeader(0, 0, "f", "id-0"), ToolCallHeader(1, 0, "g", "id-1")],
            "z": [
                ToolCall(0, 0, "f", "id-0", {}),
                End(0, "STOP", has_calls=True),
                ToolCall(1, 0, "g", "id-1", {}),
                End(1, "STOP", has_calls=True),
            ],
        },
    )


def test_announce_none_emits_no_header() -> None:
    lookup = {
        "a": [Text(0, "Reading.")],
        "b": [update(0, "read", {"path": "a.py"})],
        "c": [Finish(0, "STOP")],
    }
    output = run_marbles(flush_on_finish(announce="none"), "-a-b-c-|", lookup)
    assert output == expect_marbles(
        "-a-----(z,|)",
        {
            "a": [Text(0, "Reading.")],
            "z": [ToolCall(0, 0, "read", None, {"path": "a.py"}), End(0, "STOP", True)],
        },
    )


def test_invalid_announce_raises_at_factory_time() -> None:
    with pytest.raises(ValueError, match="announce"):
        flush_on_finish(announce="all")  # type: ignore[arg-type]


def test_upstream_error_flushes_pending_calls_then_passes_the_error() -> None:
    boom = ConnectionResetError("peer reset")
    lookup = {
        "a": [Text(0, "Calling.", signature=TEXT_SIG)],
        "b": [update(0, "f", {"x": 1}), update(1, "g", {"y": 2})],
        "c": [Finish(0, "STOP"), USAGE_1],
    }
    output = run_marbles(flush_on_finish(), "-a-b-c-#", lookup, error=boom)
    assert output == expect_marbles(
        "-a-h---(z,#)",
        {
            "a": [Text(0, "Calling.", signature=TEXT_SIG)],
            "h": [ToolCallHeader(0, 0, "f", None)],
            # no End and no Usage: only the pending calls (and the text signature)
            "z": [
                ToolCall(0, 0, "f", None, {"x": 1}),
                ToolCall(0, 1, "g", None, {"y": 2}),
                TextSignature(0, TEXT_SIG),
            ],
        },
        error=ConnectionResetError,
    )
    assert output.error is boom


def test_upstream_error_with_nothing_pending_emits_no_batch() -> None:
    boom = ConnectionResetError("peer reset")
    lookup = {"a": [Text(0, "Hi")]}
    output = run_marbles(flush_on_finish(), "-a-#", lookup, error=boom)
    assert output == expect_marbles("-a-#", lookup, error=ConnectionResetError)
    assert output.error is boom


def test_upstream_error_unsubscribes() -> None:
    boom = OSError("gone")
    lookup = {"a": [update(0, "f", {"x": 1})]}
    output = run_marbles(flush_on_finish(announce="none"), "-a-#", lookup, error=boom)
    assert output == expect_marbles(
        "---(z,#)", {"z": [ToolCall(0, 0, "f", None, {"x": 1})]}, error=OSError
    )
    assert output.error is boom
    assert output.source_subscriptions == [(0, 3)]


def test_output_without_finish_is_truncated_after_calls_are_flushed() -> None:
    lookup = {
        "a": [Text(0, "Partial answer")],
        "b": [update(0, "f", {"x": 1}), USAGE_1],
    }
    output = run_marbles(flush_on_finish(announce="none"), "-a-b--|", lookup)
    assert output == expect_marbles(
        "-a----(z,#)",
        {
            "a": [Text(0, "Partial answer")],
            "z": [ToolCall(0, 0, "f", None, {"x": 1})],  # no End, no Usage
        },
        error=TruncatedStreamError,
    )
    assert is_truncated(0)(output.error)


def test_only_the_unfinished_candidate_is_truncated() -> None:
    lookup = {"a": [Text(0, "A"), Text(1, "B")], "b": [Finish(0, "STOP")]}
    output = run_marbles(flush_on_finish(), "-a-b-|", lookup)
    assert output == expect_marbles(
        "-a---(z,#)",
        {"a": [Text(0, "A"), Text(1, "B")], "z": [End(0, "STOP")]},
        error=TruncatedStreamError,
    )
    assert is_truncated(1)(output.error)


def test_allow_truncated_completes_with_an_end_without_reason() -> None:
    lookup = {
        "a": [Text(0, "Partial answer")],
        "b": [update(0, "f", {"x": 1}), USAGE_1],
    }
    operator = flush_on_finish(announce="none", allow_truncated=True)
    output = run_marbles(operator, "-a-b--|", lookup)
    assert output == expect_marbles(
        "-a----(z,|)",
        {
            "a": [Text(0, "Partial answer")],
            "z": [ToolCall(0, 0, "f", None, {"x": 1}), End(0, None, has_calls=True), USAGE_1],
        },
    )


def test_empty_stream_is_truncated() -> None:
    output = run_marbles(flush_on_finish(), "---|")
    assert output == expect_marbles("---#", error=TruncatedStreamError)
    assert is_truncated()(output.error)
    assert "before any response" in str(output.error)


def test_empty_stream_with_allow_truncated_ends_choice_zero() -> None:
    """allow_truncated promises a finish: even an empty stream ends choice 0."""
    output = run_marbles(flush_on_finish(allow_truncated=True), "---|")
    assert output == expect_marbles("---(z,|)", {"z": [End(0, None)]})


def test_blocked_prompt_ends_candidate_zero() -> None:
    lookup = {"a": [Blocked("PROHIBITED_CONTENT"), USAGE_1]}
    output = run_marbles(flush_on_finish(), "-a-|", lookup)
    assert output == expect_marbles(
        "---(z,|)", {"z": [End(0, "PROHIBITED_CONTENT", blocked=True), USAGE_1]}
    )


def test_call_part_is_a_pipeline_misuse() -> None:
    lookup = {
        "a": [Text(0, "Hi")],
        "b": [CallPart(0, 0, FunctionCall("f", {"x": 1}))],
        "c": [Finish(0, "STOP")],
    }
    output = run_marbles(flush_on_finish(), "-a-b-c-|", lookup)
    assert output == expect_marbles("-a-#", {"a": [Text(0, "Hi")]}, error=TypeError)
    assert "latest_args()" in str(output.error)
    assert output.source_subscriptions == [(0, 3)]


def test_disposal_unsubscribes_and_flushes_nothing() -> None:
    lookup = {
        "a": [Text(0, "Hi")],
        "b": [update(0, "f", {"x": 1})],
        "c": [Finish(0, "STOP")],
    }
    operator = flush_on_finish(announce="none")
    output = run_marbles(operator, "-a-b---c-|", lookup, dispose_at=5)
    assert output == expect_marbles("-a", {"a": [Text(0, "Hi")]})
    assert output.source_subscriptions == [(0, 5)]


def test_take_unsubscribes_from_the_source_at_the_first_batch() -> None:
    lookup = {
        "a": [update(0, "f", {"x": 1})],  # held back: no batch
        "b": [Text(0, "Hi")],
        "c": [Finish(0, "STOP")],
    }
    output = run_marbles(
        [("flush_on_finish", flush_on_finish(announce="none")), ("take", ops.take(1))],
        "-a-b-c-|",
        lookup,
    )
    assert output == expect_marbles("---(b,|)", {"b": [Text(0, "Hi")]})
    assert output.source_subscriptions == [(0, 3)]


def test_two_subscriptions_do_not_share_state() -> None:
    # reactivex.testing: the kit subscribes once; this needs two overlapping subscriptions
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, [update(0, "f", {"x": 1})]),
        on_next(20, [Text(0, "done"), Finish(0, "STOP")]),
        on_completed(30),
    )
    stream: Observable[Any] = xs.pipe(flush_on_finish())  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(215, lambda *_: stream.subscribe(second))
    scheduler.start()

    def expected(at: int) -> list[Any]:
        return [
            on_next(at + 10, [ToolCallHeader(0, 0, "f", None)]),
            on_next(at + 20, [Text(0, "done")]),
            on_next(at + 30, [ToolCall(0, 0, "f", None, {"x": 1}), End(0, "STOP", True)]),
            on_completed(at + 30),
        ]

    assert expected(200) == first.messages
    assert expected(215) == second.messages
    assert [subscribe(200, 230), subscribe(215, 245)] == xs.subscriptions
