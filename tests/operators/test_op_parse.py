"""Marble tests for the ``parse()`` operator: ``SSEEvent`` → ``GenerateContentResponse``."""

from __future__ import annotations

import json
from typing import Any

from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler

from rxgem import GeminiAPIError, MalformedStreamError
from rxgem.core import SSEEvent
from rxgem.operators import parse
from rxgem.testing import api_error, expect_marbles, response, run_marbles, text
from rxgem.testing._gemini_builders import event_json

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error
subscribe = ReactiveTest.subscribe

TEXT_A = json.dumps(event_json(text("A")))
TEXT_B = json.dumps(event_json(text("B"), response_id="r1"))
ERROR = json.dumps(event_json(api_error(429, "RESOURCE_EXHAUSTED", "Quota exceeded")))
RESPONSE_A = response(text("A"))
RESPONSE_B = response(text("B"), response_id="r1")


def sse(payload: str, kind: str = "message") -> SSEEvent:
    return SSEEvent(data=payload, event=kind)


def is_api_error(code: int, status: str, number: int) -> Any:
    def check(error: Exception) -> bool:
        return (
            isinstance(error, GeminiAPIError)
            and error.code == code
            and error.status == status
            and error.event == number
        )

    return check


def is_malformed(number: int) -> Any:
    def check(error: Exception) -> bool:
        return isinstance(error, MalformedStreamError) and error.event == number

    return check


def test_one_response_per_event_at_its_tick() -> None:
    lookup = {"a": sse(TEXT_A), "b": sse(TEXT_B)}
    output = run_marbles(parse(), "-a---b-|", lookup)
    assert output == expect_marbles("-x---y-|", {"x": RESPONSE_A, "y": RESPONSE_B})
    # the values are typed responses, not the raw payloads
    assert output.values[1].candidates[0].content.parts[0].text == "B"
    assert output.values[1].response_id == "r1"


def test_whitespace_payload_is_skipped() -> None:
    lookup = {"a": sse(TEXT_A), "w": sse(" \n "), "b": sse(TEXT_B)}
    output = run_marbles(parse(), "-a-w-b-|", lookup)
    assert output == expect_marbles("-x---y-|", {"x": RESPONSE_A, "y": RESPONSE_B})


def test_array_payload_gives_several_responses_at_one_tick() -> None:
    lookup = {"a": sse(f"[{TEXT_A},\n{TEXT_B}]", "raw")}
    output = run_marbles(parse(), "--a----|", lookup)
    assert output == expect_marbles("--(x,y)|", {"x": RESPONSE_A, "y": RESPONSE_B})


def test_error_payload_ends_with_gemini_api_error() -> None:
    # the diagram in parse's docstring
    lookup = {"a": sse(TEXT_A), "b": sse(TEXT_B), "e": sse(ERROR)}
    output = run_marbles(parse(), "-a-b-e-b-|", lookup)
    assert output == expect_marbles(
        "-x-y-#", {"x": RESPONSE_A, "y": RESPONSE_B}, error=GeminiAPIError
    )
    assert is_api_error(429, "RESOURCE_EXHAUSTED", 3)(output.error)


def test_error_payload_message_text() -> None:
    output = run_marbles(parse(), "-e-|", {"e": sse(ERROR)})
    assert output == expect_marbles("-#", error=GeminiAPIError)
    error = output.error
    assert type(error) is GeminiAPIError
    assert error.message == "Quota exceeded"
    assert str(error) == "Gemini API error 429 RESOURCE_EXHAUSTED (event 1): Quota exceeded"


def test_raw_pretty_printed_error_block_in_an_array() -> None:
    block = '[{\n  "error": {\n    "code": 499,\n    "status": "CANCELLED"\n  }\n}\n]'
    lookup = {"a": sse(TEXT_A), "e": sse(block, "raw")}
    output = run_marbles(parse(), "-a--e-|", lookup)
    assert output == expect_marbles("-x--#", {"x": RESPONSE_A}, error=GeminiAPIError)
    assert is_api_error(499, "CANCELLED", 2)(output.error)


def test_error_unsubscribes_from_the_source_at_the_error_tick() -> None:
    lookup = {"a": sse(TEXT_A), "e": sse(ERROR), "b": sse(TEXT_B)}
    output = run_marbles(parse(), "-a-e-b-|", lookup)
    assert output == expect_marbles("-x-#", {"x": RESPONSE_A}, error=GeminiAPIError)
    assert is_api_error(429, "RESOURCE_EXHAUSTED", 2)(output.error)
    assert output.source_subscriptions == [(0, 3)]


def test_invalid_json_ends_with_malformed_stream_error() -> None:
    lookup = {"a": sse(TEXT_A), "w": sse("  "), "x": sse('{"candidates": [')}
    output = run_marbles(parse(), "-a-w-x-a-|", lookup)
    # the whitespace-only event is skipped but still counted: the bad one is event 3
    assert output == expect_marbles("-y---#", {"y": RESPONSE_A}, error=MalformedStreamError)
    assert is_malformed(3)(output.error)
    assert isinstance(output.error, MalformedStreamError)
    assert "candidates" in output.error.snippet


def test_invalid_json_event_number_is_one_based() -> None:
    output = run_marbles(parse(), "--x-|", {"x": sse("not json")})
    assert output == expect_marbles("--#", error=MalformedStreamError)
    assert is_malformed(1)(output.error)


def test_wrong_shape_ends_with_malformed_stream_error() -> None:
    lookup = {"a": sse(TEXT_A), "b": sse(TEXT_B), "x": sse('{"candidates": 5}')}
    output = run_marbles(parse(), "-a-b-x-|", lookup)
    assert output == expect_marbles(
        "-a-b-#", {"a": RESPONSE_A, "b": RESPONSE_B}, error=MalformedStreamError
    )
    assert is_malformed(3)(output.error)


def test_malformed_unsubscribes_from_the_source_at_the_error_tick() -> None:
    lookup = {"a": sse(TEXT_A), "x": sse("{oops"), "b": sse(TEXT_B)}
    output = run_marbles(parse(), "-a--x-b-|", lookup)
    assert output == expect_marbles("-y--#", {"y": RESPONSE_A}, error=MalformedStreamError)
    assert is_malformed(2)(output.error)
    assert output.source_subscriptions == [(0, 4)]


def test_upstream_error_passes_through() -> None:
    boom = ConnectionError("reset by peer")
    output = run_marbles(parse(), "-a--#", {"a": sse(TEXT_A)}, error=boom)
    assert output == expect_marbles("-x--#", {"x": RESPONSE_A}, error=ConnectionError)
    assert output.error is boom


def test_disposal_unsubscribes_from_the_source() -> None:
    lookup = {"a": sse(TEXT_A), "b": sse(TEXT_B)}
    output = run_marbles(parse(), "-a---b-|", lookup, dispose_at=3)
    assert output == expect_marbles("-x", {"x": RESPONSE_A})
    assert output.source_subscriptions == [(0, 3)]


def test_take_unsubscribes_from_the_source_at_the_first_value() -> None:
    output = run_marbles(
        [("parse", parse()), ("take", ops.take(1))], "-a-b-|", {"a": sse(TEXT_A), "b": sse(TEXT_B)}
    )
    assert output == expect_marbles("-(x,|)", {"x": RESPONSE_A})
    assert output.source_subscriptions == [(0, 1)]


def test_two_subscriptions_count_events_independently() -> None:
    # reactivex.testing: the kit subscribes once; this needs two overlapping subscriptions
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, sse(TEXT_A)),
        on_next(20, sse("{bad")),
        on_completed(30),
    )
    stream: Observable[Any] = xs.pipe(parse())  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()
    # a shared counter would make the second subscription report event 4
    assert [on_next(210, RESPONSE_A), on_error(220, is_malformed(2))] == first.messages
    assert [on_next(215, RESPONSE_A), on_error(225, is_malformed(2))] == second.messages
    assert [subscribe(200, 220), subscribe(205, 225)] == xs.subscriptions
