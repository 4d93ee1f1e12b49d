"""Slot and finish rules on inputs that once broke them, judged through the openai SDK.

Each case is a whole stream through rxgem.Converter; assert_openai_stream checks the
OpenAI protocol (one finish per choice, names in headers, strict tool arguments) and
returns the assembled completion.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipeline_harness import counter_ids

import rxgem
from rxgem.testing import assert_openai_stream, blocked, call, event, finish, text


def sse(*responses: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(r).encode() + b"\r\n\r\n" for r in responses)


def parts(*items: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(items)}}
    if reason is not None:
        candidate["finishReason"] = reason
    return {"candidates": [candidate]}


def convert(body: bytes, tools: list[str]) -> dict[str, Any]:
    converter = rxgem.Converter(id_factory=counter_ids(), clock=lambda: 0)
    chunks = [*converter.feed(body), *converter.close()]
    result: dict[str, Any] = assert_openai_stream(chunks, tools=tools)
    return result


def calls(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    message = result["choices"][0]["message"]
    return [
        (c["id"], c["function"]["name"], c["function"]["arguments"])
        for c in message.get("tool_calls") or ()
    ]


def test_a_prompt_block_then_a_candidate_gives_choice_zero_one_finish() -> None:
    body = event(blocked("SAFETY")) + event(text("Hello"), finish("STOP"))
    result = convert(body, [])
    (choice,) = result["choices"]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["content"] == "Hello"


def test_an_id_call_seen_first_without_its_name_is_announced_with_its_name() -> None:
    body = sse(
        parts({"functionCall": {"id": "c1", "args": {}}}),
        parts({"functionCall": {"id": "c1", "name": "search", "args": {"q": "rx"}}}),
        parts({"text": ""}, reason="STOP"),
    )
    result = convert(body, ["search"])
    assert calls(result) == [("c1", "search", '{"q":"rx"}')]
    assert result["choices"][0]["finish_reason"] == "tool_calls"


def test_a_resent_call_joins_the_slot_with_identical_args_not_a_newer_placeholder() -> None:
    body = (
        event(call("read", path="a.py"))
        + event(call("read", {}))  # a second call announced with placeholder args
        + event(call("read", path="a.py"))  # the first call, re-sent unchanged
        + event(call("read", path="b.py"))  # the placeholder's args
        + event(finish("STOP"))
    )
    result = convert(body, ["read"])
    assert [args for _, _, args in calls(result)] == ['{"path":"a.py"}', '{"path":"b.py"}']


def test_parallel_calls_with_their_own_ids_stay_apart() -> None:
    body = (
        event(call("read", {"path": "a.py"}, id="c1"))
        + event(call("read", {"path": "a.py"}, id="c2"))
        + event(finish("STOP"))
    )
    assert [i for i, _, _ in calls(convert(body, ["read"]))] == ["c1", "c2"]


def test_a_call_seen_first_without_its_id_then_with_it_is_one_call() -> None:
    body = (
        event(call("read", {"path": "a.py"}))
        + event(call("read", {"path": "a.py"}, id="c1"))
        + event(finish("STOP"))
    )
    assert [args for _, _, args in calls(convert(body, ["read"]))] == ['{"path":"a.py"}']


def test_a_call_seen_first_with_its_id_then_without_it_is_one_call() -> None:
    body = (
        event(call("read", {"path": "a.py"}, id="c1"))
        + event(call("read", {"path": "a.py"}))
        + event(finish("STOP"))
    )
    assert calls(convert(body, ["read"])) == [("c1", "read", '{"path":"a.py"}')]


def test_an_idless_call_with_other_args_than_an_id_call_is_another_call() -> None:
    body = (
        event(call("read", {"path": "a.py"}, id="c1"))
        + event(call("read", {"path": "a.py", "lines": 5}))  # growth joins only id-less slots
        + event(call("read", {"path": "b.py"}, id="c2"))  # a new id: another call
        + event(finish("STOP"))
    )
    result = calls(convert(body, ["read"]))
    assert [args for _, _, args in result] == [
        '{"path":"a.py"}',
        '{"path":"a.py","lines":5}',
        '{"path":"b.py"}',
    ]
    assert result[0][0] == "c1"
    assert result[2][0] == "c2"


_RATINGS = [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]


def _unfinished(candidate_ratings: bool) -> bytes:
    """One event: a candidate with content but no parts and no finishReason, and prompt
    feedback with safety ratings but no blockReason."""
    candidate: dict[str, Any] = {"content": {"role": "model"}, "index": 0}
    if candidate_ratings:
        candidate["safetyRatings"] = _RATINGS
    return sse({"candidates": [candidate], "promptFeedback": {"safetyRatings": _RATINGS}})


@pytest.mark.parametrize("candidate_ratings", [True, False])
def test_prompt_feedback_without_block_reason_is_no_block_the_stream_is_truncated(
    candidate_ratings: bool,
) -> None:
    converter = rxgem.Converter(id_factory=counter_ids(), clock=lambda: 0)
    chunks: list[rxgem.ChatCompletionChunk] = []
    with pytest.raises(rxgem.TruncatedStreamError):
        chunks.extend(converter.iterate([_unfinished(candidate_ratings)]))
    assert [c.choices[0].finish_reason for c in chunks if c.choices] == [None] * len(chunks)


@pytest.mark.parametrize("candidate_ratings", [True, False])
def test_allow_truncated_ends_the_unfinished_candidate_with_a_finish(
    candidate_ratings: bool,
) -> None:
    converter = rxgem.Converter(id_factory=counter_ids(), clock=lambda: 0, allow_truncated=True)
    chunks = [*converter.feed(_unfinished(candidate_ratings)), *converter.close()]
    assert converter.error is None
    (choice,) = assert_openai_stream(chunks, tools=[])["choices"]
    assert choice["finish_reason"] == "stop"


def test_prompt_feedback_with_block_reason_still_ends_with_its_finish() -> None:
    body = sse(
        {"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": _RATINGS}},
    )
    (choice,) = convert(body, [])["choices"]
    assert choice["finish_reason"] == "content_filter"
