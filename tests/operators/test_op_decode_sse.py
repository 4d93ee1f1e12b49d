"""Marble tests for the ``decode_sse()`` operator: bytes → ``SSEEvent``."""

from __future__ import annotations

from typing import Any

from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem.core import SSEEvent
from rxgem.operators import decode_sse
from rxgem.testing import expect_marbles, run_marbles

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
subscribe = ReactiveTest.subscribe


def msg(data: str) -> SSEEvent:
    return SSEEvent(data=data)


def raw(data: str) -> SSEEvent:
    return SSEEvent(data=data, event="raw")


def test_events_split_across_ticks() -> None:
    # the diagram in decode_sse's docstring
    pieces = {
        "a": b'data: {"n": 1}\r\n\r\nda',
        "b": b'ta: {"n": 2}\r\n',
        "c": b"\r\n",
    }
    output = run_marbles(decode_sse(), "---a---b---c---|", pieces)
    assert output == expect_marbles(
        "---x-------y---|", {"x": msg('{"n": 1}'), "y": msg('{"n": 2}')}
    )


def test_crlf_and_utf8_split_across_ticks() -> None:
    # "é" is split between its two bytes, both CRLF pairs between CR and LF
    pieces = {"a": b"data: h\xc3", "b": b"\xa9llo\r", "c": b"\n\r", "d": b"\n"}
    output = run_marbles(decode_sse(), "-a-b-c-d-|", pieces)
    assert output == expect_marbles("-----x---|", {"x": msg("héllo")})


def test_several_events_in_one_tick() -> None:
    output = run_marbles(decode_sse(), "--a----|", {"a": b"data: 1\n\ndata: 2\n\n"})
    assert output == expect_marbles("--(x,y)|", {"x": msg("1"), "y": msg("2")})


def test_comments_only_complete_without_values() -> None:
    output = run_marbles(decode_sse(), "-a-a-|", {"a": b": keep-alive\r\n\r\n"})
    assert output == expect_marbles("-----|")


def test_done_completes_and_unsubscribes_at_that_tick() -> None:
    pieces = {"a": b"data: 1\n\n", "d": b"data: [DONE]\n\n", "b": b"data: 2\n\n"}
    output = run_marbles(decode_sse(), "-a-d-b-|", pieces)
    assert output == expect_marbles("-x-|", {"x": msg("1")})
    assert output.source_subscriptions == [(0, 3)]


def test_done_mid_chunk_drops_the_rest_of_the_chunk() -> None:
    pieces = {"a": b"data: 1\n\ndata: [DONE]\n\ndata: 2\n\n", "b": b"data: 3\n\n"}
    output = run_marbles(decode_sse(), "-a-b-|", pieces)
    assert output == expect_marbles("-(x,|)", {"x": msg("1")})
    assert output.source_subscriptions == [(0, 1)]


def test_done_on_a_hot_source_unsubscribes() -> None:
    # reactivex.testing: the kit's sources are cold; this needs a hot source
    scheduler = TestScheduler()
    xs = scheduler.create_hot_observable(
        on_next(150, b"data: early\n\n"),  # before the subscription: never seen
        on_next(230, b"data: 1\n\n"),
        on_next(260, b"data: [DONE]\n\n"),
        on_next(270, b"data: 2\n\n"),
        on_completed(300),
    )
    observer = scheduler.start(lambda: xs.pipe(decode_sse()))
    assert [on_next(230, msg("1")), on_completed(260)] == observer.messages
    assert [subscribe(200, 260)] == xs.subscriptions


def test_done_split_across_ticks() -> None:
    pieces = {"a": b"data: 1\n\ndata: [DO", "b": b"NE]\n\n", "c": b"data: 2\n\n"}
    output = run_marbles(decode_sse(), "-a-b-c-|", pieces)
    assert output == expect_marbles("-x-|", {"x": msg("1")})
    assert output.source_subscriptions == [(0, 3)]


def test_final_event_without_blank_line_is_emitted_at_completion() -> None:
    output = run_marbles(decode_sse(), "-a---|", {"a": b"data: 1\r\n\r\ndata: 2"})
    assert output == expect_marbles("-x---(y,|)", {"x": msg("1"), "y": msg("2")})
    assert output.source_subscriptions == [(0, 5)]


def test_raw_json_error_block_becomes_one_raw_event() -> None:
    block = '{\n  "error": {\n    "code": 499,\n    "status": "CANCELLED"\n  }\n}'
    lines = block.encode().split(b"\n")
    pieces = {
        "a": b'data: {"a": 1}\n\n',
        "b": b"\n".join(lines[:3]) + b"\n",  # the block is still open
        "c": b"\n".join(lines[3:]) + b"\n",  # it balances here
    }
    output = run_marbles(decode_sse(), "-a-b-c-|", pieces)
    assert output == expect_marbles("-x---y-|", {"x": msg('{"a": 1}'), "y": raw(block)})


def test_unbalanced_raw_block_is_emitted_at_completion() -> None:
    output = run_marbles(decode_sse(), "-a--|", {"a": b'{"error": {\n'})
    assert output == expect_marbles("----(x,|)", {"x": raw('{"error": {')})


def test_upstream_error_passes_through_after_the_events_before_it() -> None:
    boom = ValueError("connection reset")
    # "data: 2" is pending (no blank line yet): an error does not flush it
    pieces = {"a": b"data: 1\n\n", "b": b"data: 2\n"}
    output = run_marbles(decode_sse(), "-a-b-#", pieces, error=boom)
    assert output == expect_marbles("-x---#", {"x": msg("1")}, error=ValueError)
    assert output.error is boom


def test_upstream_error_unsubscribes() -> None:
    boom = OSError("reset")
    output = run_marbles(decode_sse(), "-a-#", {"a": b"data: 1\n\n"}, error=boom)
    assert output == expect_marbles("-x-#", {"x": msg("1")}, error=OSError)
    assert output.error is boom
    assert output.source_subscriptions == [(0, 3)]


def test_disposal_unsubscribes_from_the_source() -> None:
    pieces = {"a": b"data: 1\n\n", "b": b"data: 2\n\n", "c": b"data: 3\n\n"}
    output = run_marbles(decode_sse(), "-a-b---c-|", pieces, dispose_at=5)
    assert output == expect_marbles("-x-y", {"x": msg("1"), "y": msg("2")})
    assert output.source_subscriptions == [(0, 5)]


def test_disposal_does_not_flush_a_pending_event() -> None:
    output = run_marbles(decode_sse(), "-a-------|", {"a": b"data: 1"}, dispose_at=5)
    assert output == []
    assert output.source_subscriptions == [(0, 5)]


def test_take_unsubscribes_from_the_source_at_the_last_value() -> None:
    pieces = {"a": b"data: 1\n\n", "b": b"data: 2\n\ndata: 3\n\n", "c": b"data: 4\n\n"}
    output = run_marbles([("decode_sse", decode_sse()), ("take", ops.take(2))], "-a-b-c-|", pieces)
    assert output == expect_marbles("-x-(y,|)", {"x": msg("1"), "y": msg("2")})
    assert output.source_subscriptions == [(0, 3)]


def test_two_subscriptions_do_not_share_state() -> None:
    # reactivex.testing: the kit subscribes once; this needs two overlapping subscriptions
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, b"data: he"),
        on_next(20, b"llo\n\n"),
        on_next(30, b"data: tail"),
        on_completed(40),
    )
    stream: Observable[Any] = xs.pipe(decode_sse())  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()
    assert [on_next(220, msg("hello")), on_next(240, msg("tail")), on_completed(240)] == (
        first.messages
    )
    assert [on_next(225, msg("hello")), on_next(245, msg("tail")), on_completed(245)] == (
        second.messages
    )
    assert [subscribe(200, 240), subscribe(205, 245)] == xs.subscriptions
