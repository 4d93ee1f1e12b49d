"""Marble tests for ``to_responses()`` (batches → Responses events), ``gemini_to_responses()``
(bytes → events) and ``responses_sse_encode()`` (events → named SSE frames)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from reactivex import Observable
from responses_judge import CLOCK, check_sequence, counter_ids, event_type, sdk_final

from rxgem import GeminiAPIError
from rxgem.core.gemini._models import UsageMetadata
from rxgem.items import End, Meta, Text, ToolCall, Usage
from rxgem.operators import gemini_to_responses, responses_sse_encode, to_responses
from rxgem.testing import event, finish, run_marbles, text, usage

META = Meta("test", "gemini-test")


def op(**options: Any) -> Any:
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", lambda: CLOCK)
    return to_responses(**options)


def timeline(output: Any) -> list[tuple[float, str]]:
    """``(tick, event type)`` of each value, ``(tick, kind)`` of the end."""
    return [(m.time, event_type(m.value)) if m.kind == "next" else (m.time, m.kind) for m in output]


def test_the_docstring_diagram() -> None:
    counts = UsageMetadata(prompt_token_count=3, candidates_token_count=2, total_token_count=5)
    lookup = {
        "a": [META, Text(0, "Hi")],
        "b": [ToolCall(0, 0, "read", None, {"path": "a.py"}), End(0, "STOP", True), Usage(counts)],
    }
    output = run_marbles(op(), "-a---b-|", lookup)
    assert timeline(output) == [
        (1, "response.created"),
        (1, "response.in_progress"),
        (1, "response.output_item.added"),
        (1, "response.content_part.added"),
        (1, "response.output_text.delta"),
        (7, "response.output_text.done"),
        (7, "response.content_part.done"),
        (7, "response.output_item.done"),
        (7, "response.output_item.added"),
        (7, "response.function_call_arguments.delta"),
        (7, "response.function_call_arguments.done"),
        (7, "response.output_item.done"),
        (7, "response.completed"),
        (7, "completed"),
    ]
    response = check_sequence(output.values)
    assert response["usage"]["total_tokens"] == 5
    sdk_final(output.values)


def test_an_upstream_error_fails_the_response_then_passes_the_error_on() -> None:
    error = GeminiAPIError("boom", code=500, status="INTERNAL")
    output = run_marbles(op(), "-a-#", {"a": [META, Text(0, "Part")]}, error=error)
    assert timeline(output)[-3:] == [
        (3, "response.output_item.done"),
        (3, "response.failed"),
        (3, "error"),
    ]
    assert output.error is error
    response = check_sequence(output.values)
    assert response["output"][0]["content"][0]["text"] == "Part"
    assert response["error"]["code"] == "server_error"


def test_each_subscription_has_its_own_builder() -> None:
    operator = op()
    lookup = {"a": [META, Text(0, "x"), End(0, "STOP")]}
    first = run_marbles(operator, "-a-|", lookup)
    second = run_marbles(operator, "-a-|", lookup)
    assert [e.sequence_number for e in second.values] == [e.sequence_number for e in first.values]


def test_bad_options_raise_at_call_time() -> None:
    with pytest.raises(TypeError, match="unknown option"):
        to_responses(reasoning_field=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        to_responses(request=["tools"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="reasoning_field"):
        gemini_to_responses(reasoning_field=None)  # type: ignore[call-arg]


def test_gemini_to_responses_runs_the_whole_pipeline() -> None:
    lookup = {
        "a": event(text("Hel")),
        "b": event(text("lo"), finish("STOP"), usage(4, 2)),
    }
    output = run_marbles(
        gemini_to_responses(id_factory=counter_ids(), clock=lambda: CLOCK), "-a-b-|", lookup
    )
    assert output.completed
    response = check_sequence(output.values)
    assert response["output"][0]["content"][0]["text"] == "Hello"
    assert sdk_final(output.values).output_text == "Hello"


def test_sse_frames_are_named_events_and_end_without_done() -> None:
    lookup: dict[str | float, Any] = {"a": [META, Text(0, "Hi"), End(0, "STOP")]}
    events = run_marbles(op(), "-a-|", lookup).values

    def framed(source: Observable[Any]) -> Observable[bytes]:
        return source.pipe(op(), responses_sse_encode())

    output = run_marbles(framed, "-a-|", lookup)
    assert output.completed
    frames = output.values
    assert len(frames) == len(events)
    for frame, sent in zip(frames, events, strict=True):
        name, data = frame.split(b"\n", 1)
        assert name == f"event: {event_type(sent)}".encode()
        assert data.startswith(b"data: ")
        assert data.endswith(b"\n\n")
        assert json.loads(data[len(b"data: ") :]) == sent.to_dict()
    assert b"[DONE]" not in b"".join(frames)


def test_sse_error_event_when_nothing_reported_the_failure() -> None:
    error = GeminiAPIError("denied", code=403, status="PERMISSION_DENIED")

    def framed(source: Observable[Any]) -> Observable[bytes]:
        return source.pipe(op(), responses_sse_encode())

    output = run_marbles(framed, "-#", error=error)
    assert output.values == [
        b'event: error\ndata: {"type":"error","sequence_number":0,"code":"permission_denied",'
        b'"message":"denied","param":null}\n\n'
    ]
    assert output.error is error
    # after a response.failed, no error event is added
    failed = run_marbles(framed, "-a-#", {"a": [META, Text(0, "x")]}, error=error)
    assert failed.values[-1].startswith(b"event: response.failed\n")
