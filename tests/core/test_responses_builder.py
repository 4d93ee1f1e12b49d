"""The sans-IO ``ResponsesBuilder``: items (or Gemini bytes) → Responses events, judged by
the ``openai`` SDK's strict validation and accumulator."""

from __future__ import annotations

import json
from typing import Any

import pytest
from responses_judge import (
    CLOCK,
    check_sequence,
    counter_ids,
    event_type,
    run_converter,
    sdk_final,
)

from rxgem.core import GeminiAPIError, TruncatedStreamError, assemble_response
from rxgem.core.gemini._models import UsageMetadata
from rxgem.core.responses import CarriedSignature, ResponsesBuilder, decode_signatures
from rxgem.items import (
    Batch,
    End,
    Logprobs,
    Meta,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    Usage,
)
from rxgem.testing import blocked, call, event, finish, text, thought, usage
from rxgem.testing._gemini_builders import candidate, candidate_fields, code, code_result, media

META = Meta("abc", "models/gemini-test")
SIG = "c2lnbmF0dXJl"


def build(*batches: Batch, error: Exception | None = None, **options: Any) -> list[Any]:
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", lambda: CLOCK)
    builder = ResponsesBuilder(**options)
    events: list[Any] = []
    for batch in batches:
        events += builder.feed(batch)
    events += builder.close(error)
    return events


def types(events: list[Any]) -> list[str]:
    return [event_type(e) for e in events]


def terminal(events: list[Any]) -> dict[str, Any]:
    response: dict[str, Any] = events[-1].to_dict()["response"]
    return response


def test_a_text_stream_is_the_sequence_every_client_accepts() -> None:
    counts = UsageMetadata(prompt_token_count=10, candidates_token_count=4, total_token_count=14)
    events = build([META, Text(0, "Hel")], [Text(0, "lo")], [End(0, "STOP"), Usage(counts)])
    assert types(events) == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    response = check_sequence(events)
    assert response["id"] == "resp_abc"
    assert response["model"] == "gemini-test"
    assert response["created_at"] == int(CLOCK)
    assert response["status"] == "completed"
    (message,) = response["output"]
    assert message["id"].startswith("msg_")
    assert message["status"] == "completed"
    assert message["content"] == [
        {"type": "output_text", "text": "Hello", "annotations": [], "logprobs": []}
    ]
    assert response["usage"] == {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 4,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 14,
    }
    final = sdk_final(events)
    assert final.output_text == "Hello"
    assert final.model_dump(exclude_none=True)["output"] == response["output"]


def test_the_request_is_echoed_with_openai_defaults_when_absent() -> None:
    plain = terminal(build([META, Text(0, "x")], [End(0, "STOP")]))
    assert (plain["tools"], plain["tool_choice"], plain["parallel_tool_calls"]) == (
        [],
        "auto",
        True,
    )
    assert "instructions" not in plain
    tools = [{"type": "function", "name": "f", "parameters": {}, "strict": True}]
    request = {
        "tools": tools,
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "instructions": "Be brief.",
        "metadata": {"k": "v"},
        "temperature": 0.5,
        "max_output_tokens": 99,
        "store": False,
        "input": "not echoed",
    }
    echoed = terminal(build([META, Text(0, "x")], [End(0, "STOP")], request=request))
    for key in ("tools", "tool_choice", "parallel_tool_calls", "instructions", "metadata"):
        assert echoed[key] == request[key]
    assert (echoed["temperature"], echoed["max_output_tokens"], echoed["store"]) == (0.5, 99, False)
    assert "input" not in echoed
    with pytest.raises(TypeError):
        ResponsesBuilder(request=[("tools", [])])  # type: ignore[arg-type]


def test_parallel_calls_are_function_call_items_the_first_announced_early() -> None:
    events = build(
        [META, Text(0, "Looking.")],
        [ToolCallHeader(0, 0, "read", "g3-id-1")],
        [
            ToolCall(0, 0, "read", "g3-id-1", {"path": "a.py"}),
            ToolCall(0, 1, "read", None, {"path": "b.py"}),
            End(0, "STOP", True),
        ],
    )
    response = check_sequence(events)
    message, first, second = response["output"]
    assert message["type"] == "message"
    assert (first["call_id"], first["name"], first["arguments"]) == (
        "g3-id-1",
        "read",
        '{"path":"a.py"}',
    )
    assert second["call_id"].startswith("call_")
    assert json.loads(second["arguments"]) == {"path": "b.py"}
    assert first["id"].startswith("fc_")
    assert first["id"] != second["id"]
    assert {first["status"], second["status"]} == {"completed"}
    # the header's item was added before the last batch, with empty arguments
    added = [e.to_dict() for e in events if event_type(e) == "response.output_item.added"]
    assert added[1]["item"]["arguments"] == ""
    assert types(events).index("response.output_item.added", 3) < types(events).index(
        "response.function_call_arguments.delta"
    )
    final = sdk_final(events)
    assert [item.call_id for item in final.output[1:]] == ["g3-id-1", second["call_id"]]


NAMESPACED = {"tools.read": ("tools", "read")}


def test_a_namespaced_function_call_is_named_as_the_request_named_it() -> None:
    events = build(
        [META, ToolCallHeader(0, 0, "tools.read", "id-1")],
        [
            ToolCall(0, 0, "tools.read", "id-1", {"path": "a.py"}),
            ToolCall(0, 1, "tools.read", None, {"path": "b.py"}),  # never announced
            ToolCall(0, 2, "plain", None, {}),
            End(0, "STOP", True),
        ],
        namespaced=NAMESPACED,
    )
    response = check_sequence(events)
    first, second, plain = response["output"]
    for item in (first, second):
        assert (item["name"], item["namespace"]) == ("read", "tools")
    assert plain["name"] == "plain"
    assert "namespace" not in plain
    added = [e.to_dict()["item"] for e in events if event_type(e) == "response.output_item.added"]
    assert [(a["name"], a.get("namespace")) for a in added] == [
        ("read", "tools"),
        ("read", "tools"),
        ("plain", None),
    ]
    final = sdk_final(events)
    assert [(item.name, item.namespace) for item in final.output] == [  # type: ignore[union-attr]
        ("read", "tools"),
        ("read", "tools"),
        ("plain", None),
    ]


def test_without_namespaced_a_dotted_name_is_left_as_gemini_sent_it() -> None:
    events = build([META, ToolCall(0, 0, "tools.read", None, {})], [End(0, "STOP", True)])
    (item,) = check_sequence(events)["output"]
    assert item["name"] == "tools.read"
    assert "namespace" not in item


@pytest.mark.parametrize(
    ("namespaced", "error"),
    [
        ([("a.b", ("a", "b"))], TypeError),
        ({"a.b": "a"}, ValueError),
        ({"a.b": ("a", "")}, ValueError),
        ({"a.b": ("a", "b", "c")}, ValueError),
        ({1: ("a", "b")}, ValueError),
    ],
)
def test_a_bad_namespaced_is_refused(namespaced: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        ResponsesBuilder(namespaced=namespaced)


def test_the_response_id_given_is_on_every_event_from_the_first() -> None:
    given = "resp_" + "0123456789abcdef" * 3
    events = build(
        [META, Text(0, "Hi")],
        [ToolCall(0, 0, "read", None, {})],
        [End(0, "STOP", True)],
        response_id=given,
    )
    response = check_sequence(events)
    assert response["id"] == given
    ids = [e.to_dict()["response"]["id"] for e in events if hasattr(e, "response")]
    assert ids == [given] * 3  # created, in_progress, completed
    assert sdk_final(events).id == given
    assert assemble_response(events).id == given
    failed = build([META, Text(0, "Hi")], error=TruncatedStreamError("cut"), response_id=given)
    assert {e.to_dict()["response"]["id"] for e in failed if hasattr(e, "response")} == {given}
    assert build([Meta(None, "m")], response_id=given)[0].response.id == given


@pytest.mark.parametrize(("response_id", "error"), [("", ValueError), (7, TypeError)])
def test_a_bad_response_id_is_refused(response_id: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        ResponsesBuilder(response_id=response_id)


@pytest.mark.parametrize("include", [True, False])
def test_signatures_ride_in_encrypted_content_when_asked_and_are_always_kept(
    include: bool,
) -> None:
    builder = ResponsesBuilder(
        id_factory=counter_ids(), clock=lambda: CLOCK, include_encrypted_reasoning=include
    )
    events = builder.feed([META, Text(0, "Plan", thought=True, signature="T1")])
    events += builder.feed([Text(0, "Answer", signature="X1")])
    events += builder.feed(
        [ToolCall(0, 0, "f", "id-1", {}, "C1"), ToolCall(0, 1, "g", None, {}, None), End(0, "STOP")]
    )
    events += builder.close()
    response = check_sequence(events)
    reasoning = response["output"][0]
    assert reasoning["type"] == "reasoning"
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Plan"}]
    kept = [(s.kind, s.call_id, s.signature) for s in builder.signatures]
    assert kept == [("thought", None, "T1"), ("text", None, "X1"), ("call", "id-1", "C1")]
    if include:
        carried = decode_signatures(reasoning["encrypted_content"])
        assert carried == builder.signatures
    else:
        assert "encrypted_content" not in reasoning
    assert builder.response is not None
    assert builder.response.to_dict() == response


def test_signatures_without_thoughts_get_a_reasoning_item_before_the_call() -> None:
    events = build(
        [META, ToolCallHeader(0, 0, "f", "id-1", "C1")],
        [ToolCall(0, 0, "f", "id-1", {"a": 1}, "C1"), End(0, "STOP", True)],
        include_encrypted_reasoning=True,
    )
    response = check_sequence(events)
    reasoning, function_call = response["output"]
    assert reasoning["summary"] == []
    assert decode_signatures(reasoning["encrypted_content"])[0].call_id == "id-1"  # type: ignore[index]
    assert function_call["call_id"] == "id-1"
    sdk_final(events)


def test_with_encrypted_reasoning_the_reasoning_item_comes_first() -> None:
    # a text signature is given back on the message that follows the reasoning item
    events = build(
        [META, Text(0, "Answer")],
        [TextSignature(0, "X1"), End(0, "STOP")],
        include_encrypted_reasoning=True,
    )
    response = check_sequence(events)
    reasoning, message = response["output"]
    assert reasoning["type"] == "reasoning"
    assert reasoning["summary"] == []
    assert decode_signatures(reasoning["encrypted_content"]) == [
        CarriedSignature("text", None, "X1")
    ]
    assert message["content"][0]["text"] == "Answer"
    unsigned = check_sequence(
        build([META, Text(0, "Hi")], [End(0, "STOP")], include_encrypted_reasoning=True)
    )
    assert [item["type"] for item in unsigned["output"]] == ["reasoning", "message"]
    assert "encrypted_content" not in unsigned["output"][0]
    blocked_prompt = build([META, End(0, "SAFETY", blocked=True)], include_encrypted_reasoning=True)
    assert check_sequence(blocked_prompt)["output"] == []


@pytest.mark.parametrize(
    ("native", "reason"),
    [
        ("MAX_TOKENS", "max_output_tokens"),
        ("SAFETY", "content_filter"),
        ("RECITATION", "content_filter"),
    ],
)
def test_a_cut_or_filtered_answer_is_incomplete_with_its_reason(native: str, reason: str) -> None:
    events = build([META, Text(0, "Half")], [End(0, native, message="Stopped.")])
    assert types(events)[-1] == "response.incomplete"
    response = check_sequence(events)
    assert response["status"] == "incomplete"
    assert response["incomplete_details"] == {"reason": reason}
    (message,) = response["output"]
    assert message["status"] == "incomplete"
    assert message["content"][0]["text"] == "Half"
    refusals = [part for part in message["content"] if part["type"] == "refusal"]
    assert refusals == (
        [{"type": "refusal", "refusal": "Stopped."}] if reason == "content_filter" else []
    )
    assert response["extra_content"]["google"]["finish_reason"] == native
    sdk_final(events)


def test_a_blocked_prompt_fails_with_invalid_prompt() -> None:
    events = build([META, End(0, "SAFETY", blocked=True, message="No.")])
    assert types(events) == ["response.created", "response.in_progress", "response.failed"]
    response = check_sequence(events)
    assert response["status"] == "failed"
    assert response["output"] == []
    assert response["error"] == {
        "code": "invalid_prompt",
        "message": "the prompt was blocked (SAFETY): No.",
    }


def test_a_failed_stream_closes_what_was_open_then_fails_with_the_output_so_far() -> None:
    error = GeminiAPIError("quota", code=429, status="RESOURCE_EXHAUSTED")
    events = build(
        [META, Text(0, "Think", thought=True), Text(0, "Partial")],
        [ToolCallHeader(0, 0, "f", None)],
        [ToolCall(0, 0, "f", None, {"q": 1})],  # what flush_on_finish owes at close(error)
        error=error,
    )
    assert types(events)[-1] == "response.failed"
    response = check_sequence(events)
    assert [item["type"] for item in response["output"]] == [
        "reasoning",
        "message",
        "function_call",
    ]
    assert response["output"][1]["status"] == "completed"  # done when the call began
    assert response["output"][2]["arguments"] == '{"q":1}'
    assert response["error"]["code"] == "rate_limit_exceeded"
    assert "quota" in response["error"]["message"]
    snapshot = sdk_final(events)
    assert len(snapshot.output) == 3
    cut = check_sequence(build([META, Text(0, "Partial")], error=error))
    assert cut["output"][0]["status"] == "incomplete"


def test_close_with_an_error_before_anything_started_owes_nothing() -> None:
    assert build(error=ValueError("boom")) == []


def test_close_twice_gives_nothing_more() -> None:
    builder = ResponsesBuilder(id_factory=counter_ids(), clock=lambda: CLOCK)
    builder.feed([META, Text(0, "x"), End(0, "STOP")])
    assert builder.close()
    assert builder.close() == []
    assert builder.close(ValueError("late")) == []


def test_other_candidates_are_not_shown() -> None:
    events = build([META, Text(0, "zero"), Text(1, "one")], [End(0, "STOP"), End(1, "STOP")])
    (message,) = check_sequence(events)["output"]
    assert message["content"][0]["text"] == "zero"


def test_logprobs_ride_on_the_text_delta_and_its_done() -> None:
    result = {
        "chosenCandidates": [{"token": "Hi", "logProbability": -0.5}],
        "topCandidates": [{"candidates": [{"token": "Hi", "logProbability": -0.5}]}],
    }
    events = build([META, Text(0, "Hi"), Logprobs(0, result)], [End(0, "STOP")])
    check_sequence(events)
    deltas = [e.to_dict() for e in events if event_type(e) == "response.output_text.delta"]
    token = {"token": "Hi", "logprob": -0.5, "bytes": [72, 105]}
    assert deltas[0]["logprobs"] == [{**token, "top_logprobs": [token]}]
    done = next(e.to_dict() for e in events if event_type(e) == "response.output_text.done")
    assert done["logprobs"] == deltas[0]["logprobs"]
    sdk_final(events)


# -- from Gemini's bytes, through the whole pipeline -------------------------------------------


def test_usage_details_count_cached_and_reasoning_tokens() -> None:
    body = event(thought("hm"), text("ok"), finish("STOP"), usage(100, 7, thoughts=5, cached=40))
    events, error = run_converter(body)
    assert error is None
    assert check_sequence(events)["usage"] == {
        "input_tokens": 100,
        "input_tokens_details": {"cached_tokens": 40, "cache_write_tokens": 0},
        "output_tokens": 12,
        "output_tokens_details": {"reasoning_tokens": 5},
        "total_tokens": 112,
    }


def test_grounding_gives_url_citation_annotations() -> None:
    grounding = {
        "groundingChunks": [{"web": {"uri": "https://example.com/a", "title": "A"}}],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 5, "text": "Paris"},
                "groundingChunkIndices": [0],
            }
        ],
    }
    body = event(
        text("Paris is big."), candidate_fields(groundingMetadata=grounding), finish("STOP")
    )
    events, error = run_converter(body)
    assert error is None
    response = check_sequence(events)
    annotation = {
        "type": "url_citation",
        "url": "https://example.com/a",
        "title": "A",
        "start_index": 0,
        "end_index": 5,
    }
    assert response["output"][0]["content"][0]["annotations"] == [annotation]
    added = [
        e.to_dict() for e in events if event_type(e) == "response.output_text.annotation.added"
    ]
    assert [a["annotation"] for a in added] == [annotation]
    assert response["extra_content"]["google"]["grounding_metadata"] == grounding
    final = sdk_final(events)
    assert final.output[0].content[0].annotations[0].url == "https://example.com/a"


def test_code_execution_is_a_code_interpreter_call() -> None:
    body = event(
        text("Let me run it."),
        code("print(1)", sig=SIG),
        code_result("1\n"),
        text("It printed 1."),
        finish("STOP"),
    )
    events, error = run_converter(body)
    assert error is None
    response = check_sequence(events)
    message, execution, after = response["output"]
    assert message["content"][0]["text"] == "Let me run it."
    assert after["content"][0]["text"] == "It printed 1."
    assert execution["type"] == "code_interpreter_call"
    assert execution["code"] == "print(1)"
    assert execution["outputs"] == [{"type": "logs", "logs": "1\n"}]
    assert execution["status"] == "completed"
    parts = execution["extra_content"]["google"]["parts"]
    assert parts[0]["part"]["thoughtSignature"] == SIG
    sdk_final(events)


def test_an_image_is_an_image_generation_call_and_audio_an_extension_part() -> None:
    body = event(media("image/png", b"PNG"), media("audio/wav", b"RIFF"), finish("STOP"))
    events, error = run_converter(body)
    assert error is None
    response = check_sequence(events)
    image, message = response["output"]
    assert image["type"] == "image_generation_call"
    assert image["result"] == "UE5H"
    assert "data" not in image["extra_content"]["google"]["parts"][0]["part"]["inlineData"]
    (entry,) = message["extra_content"]["google"]["parts"]
    assert entry["part"]["inlineData"]["mimeType"] == "audio/wav"
    sdk_final(events)


def test_a_truncated_stream_fails_after_delivering_what_came_before() -> None:
    events, error = run_converter(event(text("So far"), call("f", a=1)))
    assert isinstance(error, TruncatedStreamError)
    response = check_sequence(events)
    assert response["status"] == "failed"
    assert [item["type"] for item in response["output"]] == ["message", "function_call"]
    assert response["output"][1]["arguments"] == '{"a":1}'


def test_a_prompt_block_from_gemini_fails() -> None:
    events, error = run_converter(event(blocked("SAFETY", "Blocked."), usage(3, 0)))
    assert error is None
    response = check_sequence(events)
    assert response["status"] == "failed"
    assert response["error"]["code"] == "invalid_prompt"


def test_multi_candidate_bytes_show_candidate_zero() -> None:
    body = event(candidate(0, text("A"), finish("STOP")), candidate(1, text("B"), finish("STOP")))
    events, error = run_converter(body)
    assert error is None
    assert [item["content"][0]["text"] for item in check_sequence(events)["output"]] == ["A"]


def test_assemble_response_is_the_terminal_events_response() -> None:
    events = build([META, Text(0, "Hi")], [End(0, "MAX_TOKENS")])
    response = assemble_response(events)
    assert response.to_dict() == terminal(events)
    assert response.status == "incomplete"
    with pytest.raises(TruncatedStreamError):
        assemble_response(events[:-1])
    with pytest.raises(ValueError, match="sequence_number"):
        assemble_response(events[1:])
    other = build([Meta("other", "m"), Text(0, "x")], [End(0, "STOP")])
    with pytest.raises(ValueError, match="2 responses"):
        assemble_response([*events[:2], *other[2:]])
