"""The exchange machine alone, without sockets: what it sends, lets through and decides at
each cut, for generateContent and Interactions (retries, resumption, de-duplication, limits,
errors), and the order of calls it holds a driver to."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from rxgem import (
    GeminiAPIError,
    GeminiTransportError,
    MalformedStreamError,
    RetryPolicy,
    TruncatedStreamError,
)
from rxgem.transport._machine import (
    MAX_ANSWER_BYTES,
    Done,
    ExchangeMachine,
    Fail,
    Resume,
    Retry,
    Target,
)
from rxgem.transport._strategies import GENERATE_CONTENT, INTERACTIONS

GC_URL = "https://gemini.test/v1beta/models/m:streamGenerateContent?alt=sse"
HEADERS = {"content-type": "application/json", "x-goog-api-key": "k"}
EVENT = b'data: {"candidates": []}\r\n\r\n'
QUOTA = json.dumps({"error": {"code": 429, "message": "Slow down", "status": "X"}}).encode()


def connect_failed() -> httpx.ConnectError:
    return httpx.ConnectError("refused")


def read_failed() -> httpx.ReadError:
    return httpx.ReadError("reset")


def gc(policy: RetryPolicy | None = None, max_bytes: int | None = None) -> ExchangeMachine:
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
    return ExchangeMachine(
        GENERATE_CONTENT, Target(GC_URL, HEADERS, body), policy=policy, max_bytes=max_bytes
    )


def stream(machine: ExchangeMachine, *chunks: bytes, status: int = 200) -> bytes:
    """Connect, answer ``status`` and feed ``chunks``: what went out."""
    machine.connect()
    machine.response(status, {})
    return b"".join(machine.data(chunk) for chunk in chunks)


# -- generateContent ------------------------------------------------------------------------


def test_a_whole_body_goes_out_as_it_comes_and_its_end_is_the_end() -> None:
    machine = gc()
    request = machine.connect()
    assert (request.method, request.url, request.headers) == ("POST", GC_URL, HEADERS)
    assert json.loads(request.content or b"") == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]
    }
    machine.response(200, {"content-type": "text/event-stream"})
    assert machine.data(EVENT[:10]) == EVENT[:10]
    assert machine.data(EVENT[10:]) == EVENT[10:]
    assert machine.end() == Done()
    assert machine.complete


def test_a_read_that_fails_is_not_a_connection_that_failed() -> None:
    # the policy retries a connection that could not be made, not one cut while read
    machine = gc(RetryPolicy(attempts=3, backoff=0.5))
    machine.connect()
    machine.response(200, {})
    outcome = machine.transport_error(read_failed())
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiTransportError)


def test_retries_wait_the_policys_backoff_then_give_up_typed() -> None:
    machine = gc(RetryPolicy(attempts=3, backoff=0.5))
    requests = []
    delays = []
    for _ in range(2):
        requests.append(machine.connect())
        outcome = machine.transport_error(connect_failed())
        assert isinstance(outcome, Retry)
        delays.append(outcome.delay)
    requests.append(machine.connect())
    outcome = machine.transport_error(connect_failed())
    assert delays == [0.5, 1.0]
    assert len({r.content for r in requests}) == 1  # the same request each time
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiTransportError)
    assert GC_URL in str(outcome.error)


def test_a_retried_answer_waits_what_google_asked() -> None:
    machine = gc(RetryPolicy(attempts=2))
    stream(machine, QUOTA, status=429)
    outcome = machine.end()
    assert isinstance(outcome, Retry)
    assert outcome.delay == 0.5  # no retry-after: the backoff
    machine.connect()
    machine.response(429, {"retry-after": "7"})
    machine.data(QUOTA)
    outcome = machine.end()
    assert isinstance(outcome, Fail)  # attempts spent
    assert isinstance(outcome.error, GeminiAPIError)
    assert (outcome.error.http_status, outcome.error.retry_after) == (429, 7.0)


def test_retry_after_is_honoured() -> None:
    machine = gc(RetryPolicy(attempts=3))
    machine.connect()
    machine.response(503, {"retry-after": "2"})
    outcome = machine.end()
    assert isinstance(outcome, Retry)
    assert outcome.delay == 2.0


def test_an_answer_the_policy_does_not_retry_fails_typed() -> None:
    machine = gc(RetryPolicy(attempts=5))
    stream(machine, b'{"error": {"code": 400, "message": "Bad model"}}', status=400)
    outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiAPIError)
    assert outcome.error.http_status == 400
    assert "Bad model" in str(outcome.error)


def test_a_cut_after_the_first_byte_is_never_retried() -> None:
    machine = gc(RetryPolicy(attempts=5))
    assert stream(machine, EVENT) == EVENT
    outcome = machine.transport_error(read_failed())
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiTransportError)


def test_without_a_policy_nothing_is_retried() -> None:
    machine = gc()
    machine.connect()
    assert isinstance(machine.transport_error(connect_failed()), Fail)


def test_a_line_too_long_stops_before_any_of_its_chunk_goes_out() -> None:
    machine = gc(max_bytes=16)
    assert stream(machine, b"data: 12345\n", b"data: 1234") == b"data: 12345\ndata: 1234"
    assert not machine.stopped
    assert machine.data(b"5678901234\n") == b""
    assert machine.stopped
    outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, MalformedStreamError)
    assert "max_line_bytes=16" in str(outcome.error)


def test_an_error_answer_is_read_up_to_its_limit() -> None:
    machine = gc()
    machine.connect()
    machine.response(500, {}, "Internal Server Error")
    piece = b"x" * (256 * 1024)
    fed = 0
    while not machine.stopped:
        assert machine.data(piece) == b""
        fed += len(piece)
        assert fed <= 2 * MAX_ANSWER_BYTES, "an endless answer is read forever"
    outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiAPIError)
    assert outcome.error.http_status == 500
    assert not machine.complete


def test_calls_out_of_order_are_refused_and_an_end_is_final() -> None:
    machine = gc()
    with pytest.raises(RuntimeError):
        machine.data(b"x")  # before any connection
    machine.connect()
    with pytest.raises(RuntimeError):
        machine.connect()  # twice
    with pytest.raises(RuntimeError):
        machine.end()  # before the head
    machine.response(200, {})
    assert machine.end() == Done()
    for call in (machine.connect, machine.end, lambda: machine.data(b"x")):
        with pytest.raises(RuntimeError):
            call()
    failed = gc()
    failed.connect()
    assert isinstance(failed.transport_error(connect_failed()), Fail)
    with pytest.raises(RuntimeError):
        failed.connect()


# -- Interactions -------------------------------------------------------------------------

BASE = "https://gemini.test/v1beta"


def event(kind: str, event_id: str, data: dict[str, Any]) -> bytes:
    payload = json.dumps({"event_type": kind, "event_id": event_id, **data})
    return f"event: {kind}\nid: {event_id}\ndata: {payload}\n\n".encode()


CREATED = event("interaction.created", "e1", {"interaction": {"id": "v1_run"}})
STEP = [event("content.delta", f"e{n}", {"delta": {"text": str(n)}}) for n in range(2, 6)]
COMPLETED = event("interaction.completed", "e9", {"interaction": {"id": "v1_run"}})


def interactions(
    *,
    resume: int = 3,
    max_resumes: int = 32,
    stored: bool = True,
    policy: RetryPolicy | None = None,
    stream_id: str | None = None,
    jitter: float = 0.5,
) -> ExchangeMachine:
    return ExchangeMachine(
        INTERACTIONS,
        Target(f"{BASE}/interactions", HEADERS, b'{"input": "Hi", "stream": true}', BASE),
        policy=policy,
        resume=resume,
        max_resumes=max_resumes,
        stored=stored,
        stream_id=stream_id,
        jitter=lambda: jitter,
    )


def test_whole_events_go_out_and_the_stream_ends_where_it_says() -> None:
    machine = interactions()
    request = machine.connect()
    assert (request.method, request.url) == ("POST", f"{BASE}/interactions")
    machine.response(200, {})
    body = CREATED + STEP[0] + COMPLETED
    assert machine.data(body[:30]) == b""  # an event in progress is held back
    assert machine.data(body[30:]) == body
    assert machine.complete  # said done: the consumer may stop here
    assert machine.end() == Done()


def test_a_cut_mid_event_resumes_from_the_last_whole_one_and_it_arrives_whole() -> None:
    machine = interactions(jitter=0.5)
    out = stream(machine, CREATED + STEP[0] + STEP[1][:12])
    assert out == CREATED + STEP[0]
    outcome = machine.transport_error(read_failed())
    assert isinstance(outcome, Resume)
    assert outcome.last_event_id == "e2"
    assert outcome.delay == 0.125  # after a new event: at once but for a jitter
    request = machine.connect()
    assert (request.method, request.url, request.content) == (
        "GET",
        f"{BASE}/interactions/v1_run",
        None,
    )
    assert dict(request.params) == {"stream": "true", "last_event_id": "e2"}
    assert "content-type" not in request.headers
    machine.response(200, {})
    assert machine.data(STEP[1] + COMPLETED) == STEP[1] + COMPLETED
    assert machine.end() == Done()


def test_an_event_the_upstream_repeats_is_dropped() -> None:
    machine = interactions()
    stream(machine, CREATED + STEP[0] + STEP[1])
    assert isinstance(machine.end(), Resume)  # the body ended before it said done
    machine.connect()
    machine.response(200, {})
    # resumed after e3, the upstream sends e2 and e3 again
    assert machine.data(STEP[0] + STEP[1] + STEP[2]) == STEP[2]
    assert machine.framer.last_event_id == "e4"


def test_reconnections_in_a_row_without_a_new_event_back_off_then_stop() -> None:
    machine = interactions(resume=3, jitter=0.5)
    stream(machine, CREATED)
    delays = []
    for _ in range(4):
        outcome = machine.transport_error(read_failed())
        if isinstance(outcome, Fail):
            break
        assert isinstance(outcome, Resume)
        delays.append(outcome.delay)
        machine.connect()
    # the first after progress, at once but for a jitter; then 0.25 s, 0.5 s half jittered
    assert delays == [0.125, 0.1875, 0.375]
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiTransportError)
    assert "3 reconnections in a row failed" in str(outcome.error)


def test_an_upstream_that_repeats_itself_makes_no_progress() -> None:
    machine = interactions(resume=2)
    stream(machine, CREATED + STEP[0])
    assert isinstance(machine.end(), Resume)
    for _ in range(2):
        machine.connect()
        machine.response(200, {})
        assert machine.data(CREATED + STEP[0]) == b""  # nothing new
        outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, TruncatedStreamError)
    assert "2 reconnections in a row failed" in str(outcome.error)


def test_reconnections_in_all_are_bounded_even_with_progress() -> None:
    machine = interactions(max_resumes=2)
    stream(machine, CREATED)
    resumed = 0
    for step in STEP:
        outcome = machine.transport_error(read_failed())
        if isinstance(outcome, Fail):
            break
        resumed += 1
        stream(machine, step)
    assert resumed == 2
    assert isinstance(outcome, Fail)
    assert "max_resumes=2" in str(outcome.error)


def test_a_run_google_does_not_keep_is_not_resumed() -> None:
    machine = interactions(stored=False)
    stream(machine, CREATED + STEP[0])
    outcome = machine.transport_error(read_failed())
    assert isinstance(outcome, Fail)
    assert "not resumed: store is false" in str(outcome.error)


def test_a_body_that_ends_before_the_run_was_named_is_truncated() -> None:
    machine = interactions()
    assert stream(machine, b": keep-alive\n\n") == b": keep-alive\n\n"
    outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, TruncatedStreamError)
    assert "Interactions stream ended before it said done" in str(outcome.error)


def test_the_create_is_retried_by_the_policy_before_its_first_event() -> None:
    machine = interactions(policy=RetryPolicy(attempts=2, backoff=0.25))
    stream(machine, QUOTA, status=429)
    assert isinstance(machine.end(), Retry)
    assert machine.connect().method == "POST"


def test_a_resumption_answered_with_a_status_not_worth_retrying_fails_typed() -> None:
    machine = interactions()
    stream(machine, CREATED)
    assert isinstance(machine.transport_error(read_failed()), Resume)
    stream(machine, b'{"error": {"code": 404, "message": "gone"}}', status=404)
    outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, GeminiAPIError)
    assert outcome.error.http_status == 404
    again = interactions()
    stream(again, CREATED)
    again.transport_error(read_failed())
    stream(again, QUOTA, status=503)
    assert isinstance(again.end(), Resume)


def test_a_kept_run_is_read_from_its_start() -> None:
    machine = interactions(stream_id="v1_run")
    request = machine.connect()
    assert (request.method, request.url) == ("GET", f"{BASE}/interactions/v1_run")
    assert dict(request.params) == {"stream": "true"}


def test_a_created_event_naming_no_interaction_stops_the_stream() -> None:
    machine = interactions()
    bad = event("interaction.created", "e1", {"interaction": {"id": "../models/x"}})
    assert stream(machine, bad + STEP[0]) == b""
    assert machine.stopped
    outcome = machine.end()
    assert isinstance(outcome, Fail)
    assert isinstance(outcome.error, MalformedStreamError)


def test_a_cut_after_the_stream_said_done_ends_it() -> None:
    machine = interactions()
    stream(machine, CREATED + COMPLETED)
    assert machine.transport_error(read_failed()) == Done()
