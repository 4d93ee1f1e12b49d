"""Marble tests for the Interactions operators: ``parse_interactions()`` (SSE events → typed
events), ``read_steps()`` (typed events → batches of items) and the whole pipeline,
``interactions_to_openai()`` / ``interactions_to_responses()`` (bytes → chunks, events)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxgem import GeminiAPIError, MalformedStreamError, TruncatedStreamError
from rxgem.core import InteractionsParser, SSEEvent
from rxgem.core.interactions import InteractionEvent
from rxgem.items import (
    ArgsDelta,
    End,
    Meta,
    Sources,
    Text,
    ToolCall,
    ToolCallHeader,
    UnknownStep,
    Usage,
)
from rxgem.operators import (
    gemini_to_openai,
    interactions_to_openai,
    interactions_to_responses,
    parse_interactions,
    read_steps,
)
from rxgem.testing import expect_marbles, run_marbles

CREATED = {
    "event_type": "interaction.created",
    "interaction": {"id": "i1", "status": "in_progress", "model": "gemini-test"},
}
HI = {
    "event_type": "step.start",
    "index": 0,
    "step": {"type": "model_output", "content": [{"type": "text", "text": "Hi"}]},
}
THERE = {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": " there"}}
STOP_0 = {"event_type": "step.stop", "index": 0}
CALL = {
    "event_type": "step.start",
    "index": 1,
    "step": {"type": "function_call", "id": "c1", "name": "f", "arguments": {}},
}
ARGS_A = {
    "event_type": "step.delta",
    "index": 1,
    "delta": {"type": "arguments_delta", "arguments": '{"a":'},
}
ARGS_B = {
    "event_type": "step.delta",
    "index": 1,
    "delta": {"type": "arguments_delta", "arguments": "1}"},
}
STOP_1 = {"event_type": "step.stop", "index": 1}
NEW_STEP = {"event_type": "step.start", "index": 2, "step": {"type": "brand_new"}}
USAGE = {"total_input_tokens": 3, "total_output_tokens": 4, "total_tokens": 7}


def completed(status: str) -> dict[str, Any]:
    return {
        "event_type": "interaction.completed",
        "interaction": {"id": "i1", "status": status, "usage": USAGE},
    }


def sse(obj: dict[str, Any] | str) -> SSEEvent:
    """An SSE event as Google sends it: ``event:`` names the type, the JSON says it too."""
    if isinstance(obj, str):
        return SSEEvent(data=obj, event="message")
    return SSEEvent(data=json.dumps(obj), event=obj["event_type"])


def typed(*objs: dict[str, Any]) -> list[InteractionEvent]:
    """The typed events of ``objs`` (as one parser reads them, in order)."""
    parser = InteractionsParser()
    return [event for obj in objs for event in parser.feed(sse(obj))]


def frame(obj: dict[str, Any] | str) -> bytes:
    if isinstance(obj, str):
        return f"data: {obj}\n\n".encode()
    return f"event: {obj['event_type']}\ndata: {json.dumps(obj)}\n\n".encode()


def fixed(**options: Any) -> dict[str, Any]:
    return {"id_factory": lambda: "x", "clock": lambda: 0.0, **options}


# parse_interactions ----------------------------------------------------------------------


def test_one_typed_event_per_sse_event_at_its_tick() -> None:
    lookup = {"a": sse(CREATED), "b": sse(HI), "c": sse(THERE)}
    output = run_marbles(parse_interactions(), "-a--b-c-|", lookup)
    x, y, z = typed(CREATED, HI, THERE)
    assert output == expect_marbles("-x--y-z-|", {"x": x, "y": y, "z": z})
    assert output.values[1].step.content[0].text == "Hi"  # typed, not the raw payload


def test_a_blank_payload_is_skipped() -> None:
    lookup = {"a": sse(CREATED), "w": sse("  \n"), "b": sse(HI)}
    output = run_marbles(parse_interactions(), "-a-w-b-|", lookup)
    x, y = typed(CREATED, HI)
    assert output == expect_marbles("-x---y-|", {"x": x, "y": y})


def test_invalid_json_ends_with_malformed_stream_naming_the_event() -> None:
    lookup = {"a": sse(CREATED), "b": sse(HI), "c": sse('{"event_type": "step.delta", ')}
    output = run_marbles(parse_interactions(), "-a-b-c-d-|", {**lookup, "d": sse(THERE)})
    assert output.values == typed(CREATED, HI)
    assert isinstance(output.error, MalformedStreamError)
    assert output.error.event == 3
    assert output[-1].time == 5  # at the bad event's tick; nothing after it
    assert output.source_subscriptions == [(0, 5)]


def test_the_old_schema_is_refused_saying_so() -> None:
    old = {"event_type": "interaction.start", "interaction": {"id": "i1"}}
    output = run_marbles(parse_interactions(), "-a-|", {"a": sse(old)})
    assert isinstance(output.error, MalformedStreamError)
    assert "June 2026" in str(output.error)
    assert output.values == []


def test_a_generate_content_event_is_not_an_interactions_event() -> None:
    gemini = json.dumps({"candidates": [{"content": {"parts": [{"text": "Hi"}]}}]})
    output = run_marbles(parse_interactions(), "-a-|", {"a": sse(gemini)})
    assert isinstance(output.error, MalformedStreamError)
    assert output.error.event == 1


def test_an_error_body_ends_with_gemini_api_error() -> None:
    body = json.dumps({"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}})
    output = run_marbles(parse_interactions(), "-a-b-|", {"a": sse(CREATED), "b": sse(body)})
    assert output.values == typed(CREATED)
    assert isinstance(output.error, GeminiAPIError)
    assert (output.error.code, output.error.event) == (429, 2)


# read_steps ------------------------------------------------------------------------------


def test_text_and_its_deltas_pass_at_once_and_the_end_at_completion() -> None:
    # the events of a text answer, one batch per event that completes items
    a, b, c, d, e = typed(CREATED, HI, THERE, STOP_0, completed("completed"))
    output = run_marbles(
        read_steps(), "-a-b-c-d-e-|", dict(zip("abcde", (a, b, c, d, e), strict=True))
    )
    assert output.values[:3] == [
        [Meta("i1", "gemini-test")],
        [Sources(0), Text(0, "Hi")],  # Sources(0): the outputs keep the text for citations
        [Text(0, " there")],
    ]
    assert [m.time for m in output] == [1, 3, 5, 9, 11]  # step.stop completes nothing
    end, usage = output.values[3]
    assert end == End(0, "completed")
    assert isinstance(usage, Usage)
    assert usage.usage.total_token_count == 7
    assert output.completed


def test_a_call_streams_its_argument_fragments_as_they_arrive() -> None:
    # the diagram in read_steps' docstring
    events = typed(CREATED, CALL, ARGS_A, ARGS_B, STOP_1, completed("requires_action"))
    lookup = dict(zip("abcdef", events, strict=True))
    output = run_marbles(read_steps(), "-a-b-c-d-e-f-|", lookup)
    assert output.values[1:5] == [
        [ToolCallHeader(0, 0, "f", "c1")],
        [ArgsDelta(0, 0, '{"a":')],
        [ArgsDelta(0, 0, "1}")],
        [ToolCall(0, 0, "f", "c1", {"a": 1}, arguments='{"a":1}')],
    ]
    assert [m.time for m in output][1:5] == [3, 5, 7, 9]
    assert output.values[5][0] == End(0, "requires_action", has_calls=True)


def test_a_step_type_it_does_not_know_passes_as_an_item_with_a_warning() -> None:
    events = typed(CREATED, NEW_STEP)
    with pytest.warns(UserWarning, match="brand_new"):
        output = run_marbles(
            read_steps(allow_truncated=True), "-a-b-|", dict(zip("ab", events, strict=True))
        )
    assert isinstance(output.values[1][0], UnknownStep)
    assert output.values[1][0].kind == "brand_new"


def test_a_stream_without_completion_is_truncated_after_what_was_valid() -> None:
    events = typed(CREATED, HI)
    output = run_marbles(read_steps(), "-a-b-|", dict(zip("ab", events, strict=True)))
    assert output.values[:2] == [[Meta("i1", "gemini-test")], [Sources(0), Text(0, "Hi")]]
    assert isinstance(output.error, TruncatedStreamError)
    allowed = run_marbles(
        read_steps(allow_truncated=True), "-a-b-|", dict(zip("ab", events, strict=True))
    )
    assert allowed.completed
    assert allowed.error is None
    assert isinstance(allowed.values[-1][0], End)


def test_an_upstream_error_comes_after_what_the_reader_owed() -> None:
    events = typed(CREATED, CALL, ARGS_A)
    boom = OSError("cut")
    output = run_marbles(
        read_steps(), "-a-b-c-#", dict(zip("abc", events, strict=True)), error=boom
    )
    assert output.values[:3] == [
        [Meta("i1", "gemini-test")],
        [ToolCallHeader(0, 0, "f", "c1")],
        [ArgsDelta(0, 0, '{"a":')],
    ]
    assert output.error is boom
    assert output[-1].time == 7


# the whole pipeline ----------------------------------------------------------------------


def test_interactions_to_openai_emits_chunks_at_the_ticks_of_their_bytes() -> None:
    pieces = [frame(o) for o in (CREATED, HI, THERE, STOP_0, completed("completed"))]
    lookup = dict(zip("abcde", pieces, strict=True))
    output = run_marbles(interactions_to_openai(**fixed()), "-a-b-c-d-e-|", lookup)
    # nothing at `created` (no delta yet); role and text with the first text; the finish
    # and the usage at the end of input (an operator before to_openai may still hold text)
    assert [m.time for m in output] == [3, 5, 11, 11, 11]
    deltas = [v.choices[0].delta for v in output.values[:2]]
    assert (deltas[0].role, deltas[0].content, deltas[1].content) == ("assistant", "Hi", " there")
    assert output.values[2].choices[0].finish_reason == "stop"
    assert output.values[3].usage.total_tokens == 7
    assert output.completed
    same = run_marbles(gemini_to_openai(upstream="interactions", **fixed()), "-a-b-c-d-e-|", lookup)
    assert same == output


def test_done_ends_the_stream_and_lets_go_of_the_source() -> None:
    pieces = {"a": frame(CREATED), "b": frame(HI), "e": frame(completed("completed"))}
    output = run_marbles(
        interactions_to_openai(**fixed()), "-a-b-e-d-b-|", {**pieces, "d": frame("[DONE]")}
    )
    assert output.completed
    assert output[-1].time == 7  # completes at [DONE]
    assert output.source_subscriptions == [(0, 7)]


def test_interactions_to_responses_ends_with_the_terminal_event() -> None:
    pieces = [
        frame(o) for o in (CREATED, CALL, ARGS_A, ARGS_B, STOP_1, completed("requires_action"))
    ]
    lookup = dict(zip("abcdef", pieces, strict=True))
    output = run_marbles(interactions_to_responses(**fixed()), "-a-b-c-d-e-f-|", lookup)
    events = [event.to_dict() for event in output.values]
    kinds = [event["type"] for event in events]
    assert kinds[0] == "response.created"
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    assert "".join(deltas) == '{"a":1}'
    assert kinds[-1] == "response.completed"
    assert output.completed


def test_a_malformed_event_after_text_ends_the_chunks_with_its_error() -> None:
    lookup = {"a": frame(CREATED), "b": frame(HI), "c": b"event: step.delta\ndata: {oops\n\n"}
    output = run_marbles(interactions_to_openai(**fixed()), "-a-b-c-|", lookup)
    assert output.values[0].choices[0].delta.content == "Hi"
    assert isinstance(output.error, MalformedStreamError)
    assert output.error.event == 3
