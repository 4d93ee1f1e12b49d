"""Marble tests for the ``parse()`` operator: ``SSEEvent`` → ``GenerateContentResponse``."""

from __future__ import annotations

from typing import Any

import msgspec
from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxgem import GeminiAPIError, GenerateContentResponse, MalformedStreamError, SSEEvent
from rxgem.operators import parse

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error
subscribe = ReactiveTest.subscribe

TEXT_A = '{"candidates": [{"content": {"parts": [{"text": "A"}]}, "index": 0}]}'
TEXT_B = '{"candidates": [{"content": {"parts": [{"text": "B"}]}}], "responseId": "r1"}'
ERROR = '{"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}}'


def response(payload: str) -> GenerateContentResponse:
    return msgspec.json.decode(payload, type=GenerateContentResponse)


def event(payload: str, kind: str = "message") -> SSEEvent:
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
    lookup = {"a": event(TEXT_A), "b": event(TEXT_B)}
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a---b-|", lookup).pipe(parse()))
        expected = exp("-x---y-|", {"x": response(TEXT_A), "y": response(TEXT_B)})
    assert expected == results
    # the values are typed responses, not the raw payloads
    assert results[1].value.value.candidates[0].content.parts[0].text == "B"
    assert results[1].value.value.response_id == "r1"


def test_whitespace_payload_is_skipped() -> None:
    lookup = {"a": event(TEXT_A), "w": event(" \n "), "b": event(TEXT_B)}
    with marbles_testing() as (start, cold, _hot, exp):
        results = start(cold("-a-w-b-|", lookup).pipe(parse()))
        expected = exp("-x---y-|", {"x": response(TEXT_A), "y": response(TEXT_B)})
    assert expected == results


def test_array_payload_gives_several_responses_at_one_tick() -> None:
    lookup = {"a": event(f"[{TEXT_A},\n{TEXT_B}]", "raw")}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("--a--|", lookup).pipe(parse()))
    assert [
        on_next(202, response(TEXT_A)),
        on_next(202, response(TEXT_B)),
        on_completed(205),
    ] == results


def test_error_payload_ends_with_gemini_api_error() -> None:
    lookup = {"a": event(TEXT_A), "b": event(TEXT_B), "e": event(ERROR)}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-e-b-|", lookup).pipe(parse()))
    assert [
        on_next(201, response(TEXT_A)),
        on_next(203, response(TEXT_B)),
        on_error(205, is_api_error(429, "RESOURCE_EXHAUSTED", 3)),
    ] == results


def test_error_payload_message_text() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-e-|", {"e": event(ERROR)}).pipe(parse()))
    [record] = results
    assert record.time == 201
    error = record.value.exception
    assert type(error) is GeminiAPIError
    assert error.message == "Quota exceeded"
    assert str(error) == "Gemini API error 429 RESOURCE_EXHAUSTED (event 1): Quota exceeded"


def test_raw_pretty_printed_error_block_in_an_array() -> None:
    block = '[{\n  "error": {\n    "code": 499,\n    "status": "CANCELLED"\n  }\n}\n]'
    lookup = {"a": event(TEXT_A), "e": event(block, "raw")}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a--e-|", lookup).pipe(parse()))
    assert [
        on_next(201, response(TEXT_A)),
        on_error(204, is_api_error(499, "CANCELLED", 2)),
    ] == results


def test_error_unsubscribes_from_the_source_at_the_error_tick() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, event(TEXT_A)),
        on_next(20, event(ERROR)),
        on_next(30, event(TEXT_B)),
        on_completed(40),
    )
    observer = scheduler.start(lambda: xs.pipe(parse()))
    assert [
        on_next(210, response(TEXT_A)),
        on_error(220, is_api_error(429, "RESOURCE_EXHAUSTED", 2)),
    ] == observer.messages
    assert [subscribe(200, 220)] == xs.subscriptions


def test_invalid_json_ends_with_malformed_stream_error() -> None:
    lookup = {"a": event(TEXT_A), "w": event("  "), "x": event('{"candidates": [')}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-w-x-a-|", lookup).pipe(parse()))
    # the whitespace-only event is skipped but still counted: the bad one is event 3
    assert [on_next(201, response(TEXT_A)), on_error(205, is_malformed(3))] == results
    assert "candidates" in results[-1].value.exception.snippet


def test_invalid_json_event_number_is_one_based() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("--x-|", {"x": event("not json")}).pipe(parse()))
    assert [on_error(202, is_malformed(1))] == results


def test_wrong_shape_ends_with_malformed_stream_error() -> None:
    lookup = {"a": event(TEXT_A), "b": event(TEXT_B), "x": event('{"candidates": 5}')}
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-b-x-|", lookup).pipe(parse()))
    assert [
        on_next(201, response(TEXT_A)),
        on_next(203, response(TEXT_B)),
        on_error(205, is_malformed(3)),
    ] == results


def test_malformed_unsubscribes_from_the_source_at_the_error_tick() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, event(TEXT_A)),
        on_next(25, event("{oops")),
        on_next(30, event(TEXT_B)),
        on_completed(40),
    )
    observer = scheduler.start(lambda: xs.pipe(parse()))
    assert [on_next(210, response(TEXT_A)), on_error(225, is_malformed(2))] == observer.messages
    assert [subscribe(200, 225)] == xs.subscriptions


def test_upstream_error_passes_through() -> None:
    boom = ConnectionError("reset by peer")
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a--#", {"a": event(TEXT_A)}, boom).pipe(parse()))
    assert [on_next(201, response(TEXT_A)), on_error(204, lambda e: e is boom)] == results


def test_disposal_unsubscribes_from_the_source() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, event(TEXT_A)),
        on_next(50, event(TEXT_B)),
        on_completed(60),
    )
    observer = scheduler.start(lambda: xs.pipe(parse()), disposed=240)
    assert [on_next(210, response(TEXT_A))] == observer.messages
    assert [subscribe(200, 240)] == xs.subscriptions


def test_take_unsubscribes_from_the_source_at_the_first_value() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, event(TEXT_A)), on_next(20, event(TEXT_B)), on_completed(30)
    )
    observer = scheduler.start(lambda: xs.pipe(parse(), ops.take(1)))
    assert [on_next(210, response(TEXT_A)), on_completed(210)] == observer.messages
    assert [subscribe(200, 210)] == xs.subscriptions


def test_two_subscriptions_count_events_independently() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(
        on_next(10, event(TEXT_A)),
        on_next(20, event("{bad")),
        on_completed(30),
    )
    stream: Observable[Any] = xs.pipe(parse())  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()
    # a shared counter would make the second subscription report event 4
    assert [on_next(210, response(TEXT_A)), on_error(220, is_malformed(2))] == first.messages
    assert [on_next(215, response(TEXT_A)), on_error(225, is_malformed(2))] == second.messages
    assert [subscribe(200, 220), subscribe(205, 225)] == xs.subscriptions
