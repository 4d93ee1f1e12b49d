"""Marble tests for the ``sse_encode()`` operator: ``ChatCompletionChunk`` → SSE bytes."""

from __future__ import annotations

import json
from typing import Any

from reactivex import Observable
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from reactivex.testing.marbles import marbles_testing

from rxgem import (
    ChatCompletionChunk,
    ChoiceDelta,
    ChunkChoice,
    GeminiAPIError,
    MalformedStreamError,
    sse_encode,
)

on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
on_error = ReactiveTest.on_error
subscribe = ReactiveTest.subscribe

DONE = b"data: [DONE]\n\n"


def chunk(content: str) -> ChatCompletionChunk:
    choice = ChunkChoice(index=0, delta=ChoiceDelta(content=content), finish_reason=None)
    return ChatCompletionChunk(id="chatcmpl-r1", created=1_700_000_000, model="m", choices=[choice])


C1 = chunk("Hi")
C2 = chunk(" there")
FRAME_1 = (
    b'data: {"id":"chatcmpl-r1","object":"chat.completion.chunk","created":1700000000,'
    b'"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
)


def frame_payload(frame: bytes) -> Any:
    assert frame.startswith(b"data: ")
    assert frame.endswith(b"\n\n")
    return json.loads(frame[len(b"data: ") : -2])


def test_one_frame_per_chunk_then_done_at_completion() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a--b--|", {"a": C1, "b": C2}).pipe(sse_encode()))
    assert [
        on_next(201, FRAME_1),
        on_next(204, b"data: " + C2.to_json() + b"\n\n"),
        on_next(207, DONE),
        on_completed(207),
    ] == results


def test_frame_payload_is_the_chunk_json() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-b-|", {"b": C2}).pipe(sse_encode()))
    payload = frame_payload(results[0].value.value)
    assert payload == C2.to_dict()
    assert payload["object"] == "chat.completion.chunk"
    assert payload["choices"][0]["finish_reason"] is None  # sent as null, not left out


def test_empty_stream_sends_only_done() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("---|").pipe(sse_encode()))
    assert [on_next(203, DONE), on_completed(203)] == results


def test_error_sends_an_error_frame_then_the_error_without_done() -> None:
    boom = MalformedStreamError("invalid JSON", event=3)
    error_frame = {
        "error": {
            "message": "malformed Gemini stream at event 3: invalid JSON",
            "type": "MalformedStreamError",
            "code": None,
        }
    }
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a--#", {"a": C1}, boom).pipe(sse_encode()))
    assert [
        on_next(201, FRAME_1),
        on_next(204, lambda frame: frame_payload(frame) == error_frame),
        on_error(204, lambda e: e is boom),
    ] == results


def test_gemini_api_error_frame_carries_the_gemini_code() -> None:
    boom = GeminiAPIError("Quota exceeded", code=429, status="RESOURCE_EXHAUSTED", event=2)
    error_frame = {
        "error": {
            "message": "Gemini API error 429 RESOURCE_EXHAUSTED (event 2): Quota exceeded",
            "type": "GeminiAPIError",
            "code": 429,
        }
    }
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-#", {"a": C1}, boom).pipe(sse_encode()))
    assert [
        on_next(201, FRAME_1),
        on_next(203, lambda frame: frame_payload(frame) == error_frame),
        on_error(203, lambda e: e is boom),
    ] == results


def test_error_unsubscribes_from_the_source() -> None:
    boom = OSError("reset")
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(on_next(10, C1), on_error(20, boom))
    observer = scheduler.start(lambda: xs.pipe(sse_encode()))
    assert [
        on_next(210, FRAME_1),
        on_next(220, lambda frame: frame_payload(frame)["error"]["type"] == "OSError"),
        on_error(220, lambda e: e is boom),
    ] == observer.messages
    assert [subscribe(200, 220)] == xs.subscriptions


def test_disposal_unsubscribes_and_sends_no_done() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(on_next(10, C1), on_next(30, C2), on_completed(40))
    observer = scheduler.start(lambda: xs.pipe(sse_encode()), disposed=220)
    assert [on_next(210, FRAME_1)] == observer.messages
    assert [subscribe(200, 220)] == xs.subscriptions


def test_take_unsubscribes_from_the_source_at_the_first_frame() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(on_next(10, C1), on_next(20, C2), on_completed(30))
    observer = scheduler.start(lambda: xs.pipe(sse_encode(), ops.take(1)))
    assert [on_next(210, FRAME_1), on_completed(210)] == observer.messages
    assert [subscribe(200, 210)] == xs.subscriptions


def test_two_subscriptions_each_get_the_full_output() -> None:
    scheduler = TestScheduler()
    xs = scheduler.create_cold_observable(on_next(10, C1), on_completed(20))
    stream: Observable[Any] = xs.pipe(sse_encode())  # one operator instance
    first = scheduler.create_observer()
    second = scheduler.create_observer()
    scheduler.schedule_absolute(200, lambda *_: stream.subscribe(first))
    scheduler.schedule_absolute(205, lambda *_: stream.subscribe(second))
    scheduler.start()
    assert [on_next(210, FRAME_1), on_next(220, DONE), on_completed(220)] == first.messages
    assert [on_next(215, FRAME_1), on_next(225, DONE), on_completed(225)] == second.messages
    assert [subscribe(200, 220), subscribe(205, 225)] == xs.subscriptions
