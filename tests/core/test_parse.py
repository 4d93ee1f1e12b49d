"""The sans-IO ``ResponseParser``: SSE events in, typed ``GenerateContentResponse`` objects out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipeline_harness import QUOTA_ERROR

from rxgem import GeminiAPIError, MalformedStreamError, RxGemError, samples
from rxgem.core import GenerateContentResponse, ResponseParser, SSEDecoder, SSEEvent
from rxgem.core.gemini._models import ModalityTokenCount


def feed(*payloads: str | dict[str, Any] | list[Any]) -> list[GenerateContentResponse]:
    """Feed payloads (JSON text, or values to encode) to one parser; all responses."""
    parser = ResponseParser()
    out: list[GenerateContentResponse] = []
    for payload in payloads:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        out.extend(parser.feed(SSEEvent(data=data)))
    return out


def sample_events(name: str) -> list[SSEEvent]:
    decoder = SSEDecoder()
    return decoder.feed(samples.read(name)) + decoder.close()


FULL_EVENT = {
    "candidates": [
        {
            "content": {
                "parts": [
                    {"text": "**Plan**", "thought": True},
                    {"text": "Hello ☀️", "thoughtSignature": "c2lnMQ=="},
                    {
                        "functionCall": {"id": "fc-1", "name": "get_weather", "args": {"q": "X"}},
                        "thoughtSignature": "c2lnMg==",
                    },
                    {
                        "functionCall": {
                            "partialArgs": [
                                {"jsonPath": "$.city", "stringValue": "Lis", "willContinue": True},
                                {"jsonPath": "$.n", "numberValue": 2},
                                {"jsonPath": "$.ok", "boolValue": False},
                                {"jsonPath": "$.none", "nullValue": "NULL_VALUE"},
                            ],
                            "willContinue": True,
                        }
                    },
                    {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
                    {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
                    {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
                ],
                "role": "model",
            },
            "finishReason": "MAX_TOKENS",
            "finishMessage": "Finished",
            "index": 2,
            "safetyRatings": [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"}],
            "citationMetadata": {"citationSources": [{"startIndex": 1}]},
            "groundingMetadata": {"webSearchQueries": ["q"]},
            "urlContextMetadata": {"urlMetadata": []},
            "avgLogprobs": -0.25,
        }
    ],
    "promptFeedback": {"blockReason": "SAFETY", "blockReasonMessage": "no"},
    "usageMetadata": {
        "promptTokenCount": 10,
        "candidatesTokenCount": 20,
        "totalTokenCount": 45,
        "thoughtsTokenCount": 7,
        "cachedContentTokenCount": 3,
        "toolUsePromptTokenCount": 8,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 10}],
        "trafficType": "ON_DEMAND",
    },
    "modelVersion": "gemini-2.5-flash",
    "responseId": "resp-1",
    "createTime": "2026-01-02T03:04:05.678Z",
}


def test_camel_case_fields_decode() -> None:
    [response] = feed(FULL_EVENT)
    assert response.model_version == "gemini-2.5-flash"
    assert response.response_id == "resp-1"
    assert response.create_time == "2026-01-02T03:04:05.678Z"
    assert response.prompt_feedback is not None
    assert response.prompt_feedback.block_reason == "SAFETY"
    assert response.prompt_feedback.block_reason_message == "no"

    usage = response.usage_metadata
    assert usage is not None
    assert (
        usage.prompt_token_count,
        usage.candidates_token_count,
        usage.total_token_count,
        usage.thoughts_token_count,
        usage.cached_content_token_count,
        usage.tool_use_prompt_token_count,
        usage.traffic_type,
    ) == (10, 20, 45, 7, 3, 8, "ON_DEMAND")
    assert usage.prompt_tokens_details == [ModalityTokenCount(modality="TEXT", token_count=10)]

    assert response.candidates is not None
    [candidate] = response.candidates
    assert candidate.index == 2
    assert candidate.finish_reason == "MAX_TOKENS"
    assert candidate.finish_message == "Finished"
    assert candidate.avg_logprobs == -0.25
    assert candidate.safety_ratings == [
        {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"}
    ]
    assert candidate.citation_metadata == {"citationSources": [{"startIndex": 1}]}
    assert candidate.grounding_metadata == {"webSearchQueries": ["q"]}
    assert candidate.url_context_metadata == {"urlMetadata": []}
    assert candidate.content is not None
    assert candidate.content.role == "model"
    parts = candidate.content.parts
    assert parts is not None
    assert len(parts) == 7
    assert (parts[0].text, parts[0].thought) == ("**Plan**", True)
    assert (parts[1].text, parts[1].thought, parts[1].thought_signature) == (
        "Hello ☀️",
        None,
        "c2lnMQ==",
    )
    call = parts[2].function_call
    assert call is not None
    assert (call.id, call.name, call.args) == ("fc-1", "get_weather", {"q": "X"})
    assert parts[2].thought_signature == "c2lnMg=="
    streamed = parts[3].function_call
    assert streamed is not None
    assert streamed.will_continue is True
    assert streamed.name is None
    assert streamed.partial_args is not None
    pieces = streamed.partial_args
    assert [p.json_path for p in pieces] == ["$.city", "$.n", "$.ok", "$.none"]
    assert (pieces[0].string_value, pieces[0].will_continue) == ("Lis", True)
    assert pieces[1].number_value == 2
    assert pieces[2].bool_value is False
    assert pieces[3].null_value == "NULL_VALUE"
    assert parts[4].executable_code == {"language": "PYTHON", "code": "print(1)"}
    assert parts[5].code_execution_result == {"outcome": "OUTCOME_OK", "output": "1\n"}
    assert parts[6].inline_data == {"mimeType": "image/png", "data": "AAAA"}


def test_snake_case_keys_are_not_the_wire_names() -> None:
    [response] = feed({"model_version": "x", "response_id": "y", "usage_metadata": {}})
    assert response == GenerateContentResponse()


@pytest.mark.parametrize("name", samples.names())
def test_every_sample_event_decodes(name: str) -> None:
    expected = samples.expected()[name]
    parser = ResponseParser()
    responses: list[GenerateContentResponse] = []
    events = sample_events(name)
    error: GeminiAPIError | None = None
    for event in events:
        try:
            responses.extend(parser.feed(event))
        except GeminiAPIError as exc:
            error = exc
            break
    assert responses
    assert {r.response_id for r in responses} == {expected["response_id"]}
    assert parser.events == len(events)
    if expected["error"] is None or expected["error"]["type"] != "GeminiAPIError":
        assert error is None
        assert len(responses) == len(events)
    else:
        assert error is not None
        assert (error.code, error.status) == (
            expected["error"]["code"],
            expected["error"]["status"],
        )
        assert error.event == len(events)


# -- tolerance ---------------------------------------------------------------------------


def _with(path: list[Any], extra: dict[str, Any]) -> dict[str, Any]:
    """A copy of a small event with ``extra`` merged into the object at ``path``."""
    event: dict[str, Any] = {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "hi"},
                        {"functionCall": {"name": "f", "args": {"a": 1}}},
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "promptFeedback": {"safetyRatings": []},
        "usageMetadata": {"promptTokenCount": 3},
        "modelVersion": "m",
    }
    target: Any = event
    for key in path:
        target = target[key]
    target.update(extra)
    return event


UNKNOWN = {"serviceTier": "standard", "brandNewField": {"nested": [1, "x", None]}, "n": 3.5}


@pytest.mark.parametrize(
    "path",
    [
        [],
        ["candidates", 0],
        ["candidates", 0, "content"],
        ["candidates", 0, "content", "parts", 0],
        ["candidates", 0, "content", "parts", 1],
        ["candidates", 0, "content", "parts", 1, "functionCall"],
        ["promptFeedback"],
        ["usageMetadata"],
    ],
    ids=lambda path: "/".join(str(p) for p in path) or "top",
)
def test_unknown_fields_are_ignored(path: list[Any]) -> None:
    plain = feed(_with(path, {}))
    assert feed(_with(path, UNKNOWN)) == plain
    assert plain[0].candidates is not None


@pytest.mark.parametrize(
    ("path", "key", "value"),
    [
        (["candidates", 0], "finishReason", "FAKE_ENUM"),
        (["candidates", 0, "content"], "role", "narrator"),
        (["promptFeedback"], "blockReason", "SOMETHING_NEW"),
        (["usageMetadata"], "trafficType", "ON_DEMAND_SOMETHING"),
    ],
)
def test_unknown_enum_values_pass_through(path: list[Any], key: str, value: str) -> None:
    [response] = feed(_with(path, {key: value}))
    assert response.candidates is not None
    assert response.prompt_feedback is not None
    assert response.usage_metadata is not None
    found = {
        "finishReason": response.candidates[0].finish_reason,
        "role": response.candidates[0].content.role if response.candidates[0].content else None,
        "blockReason": response.prompt_feedback.block_reason,
        "trafficType": response.usage_metadata.traffic_type,
    }
    assert found[key] == value


@pytest.mark.parametrize("payload", ['{"serviceTier": "standard", "x": {"y": [1]}}', "{}"])
def test_object_with_only_unknown_keys_is_an_empty_response(payload: str) -> None:
    assert feed(payload) == [GenerateContentResponse()]


@pytest.mark.parametrize("payload", ["", " ", "\n", "\t \r\n  "])
def test_whitespace_only_payload_yields_nothing(payload: str) -> None:
    parser = ResponseParser()
    assert parser.feed(SSEEvent(data=payload)) == []
    assert parser.events == 1


def test_json_array_of_responses_gives_each() -> None:
    responses = feed([{"responseId": "a"}, {"responseId": "b", "modelVersion": "m"}])
    assert [(r.response_id, r.model_version) for r in responses] == [("a", None), ("b", "m")]


# -- malformed payloads ------------------------------------------------------------------


GOOD = {"candidates": [{"content": {"parts": [{"text": "ok"}]}}]}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"candidates": "x"}, "candidates"),
        ({"usageMetadata": {"promptTokenCount": "7"}}, "promptTokenCount"),
        ({"usageMetadata": {"totalTokenCount": 1.5}}, "totalTokenCount"),
        ({"candidates": [{"index": "0"}]}, "index"),
        ({"candidates": [{"content": {"parts": [{"text": 5}]}}]}, "text"),
        ({"candidates": [{"content": {"parts": {"text": "x"}}}]}, "parts"),
        (
            {
                "candidates": [
                    {"content": {"parts": [{"functionCall": {"name": "f", "args": [1]}}]}}
                ]
            },
            "args",
        ),
        ({"modelVersion": 3}, "modelVersion"),
        ({"promptFeedback": "blocked"}, "promptFeedback"),
        ({"error": "quota"}, "error"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_known_field_with_wrong_type_is_malformed(payload: dict[str, Any], field: str) -> None:
    parser = ResponseParser()
    parser.feed(SSEEvent(data=json.dumps(GOOD)))
    parser.feed(SSEEvent(data=json.dumps(GOOD)))
    with pytest.raises(MalformedStreamError) as caught:
        parser.feed(SSEEvent(data=json.dumps(payload)))
    error = caught.value
    assert isinstance(error, RxGemError)
    assert error.event == 3
    assert "event 3" in str(error)
    assert field in error.reason
    assert error.snippet
    assert json.dumps(payload)[:20] in error.snippet


@pytest.mark.parametrize(
    "payload",
    ['{"candidates": [', "{not json", '{"a": 1} trailing', "data: {}", "'single'", "nul"],
)
def test_invalid_json_is_malformed(payload: str) -> None:
    parser = ResponseParser()
    parser.feed(SSEEvent(data=json.dumps(GOOD)))
    with pytest.raises(MalformedStreamError) as caught:
        parser.feed(SSEEvent(data=payload))
    error = caught.value
    assert error.event == 2
    assert "event 2" in str(error)
    assert "JSON" in error.reason
    assert payload.strip()[:8] in error.snippet
    assert error.snippet in str(error)


@pytest.mark.parametrize(
    "payload",
    ["[", '[{"a": 1},', '[{"candidates": []}, nope]', "[{}] trailing", '[{"error": {"code": 500'],
)
def test_invalid_json_array_is_malformed(payload: str) -> None:
    parser = ResponseParser()
    parser.feed(SSEEvent(data=json.dumps(GOOD)))
    with pytest.raises(MalformedStreamError) as caught:
        parser.feed(SSEEvent(data=payload))
    assert caught.value.event == 2
    assert "event 2" in str(caught.value)
    assert payload[:3] in caught.value.snippet


def test_snippet_of_a_long_payload_is_short() -> None:
    payload = '{"candidates": [' + '{"index": 0}, ' * 200
    with pytest.raises(MalformedStreamError) as caught:
        feed(payload)
    assert caught.value.snippet.startswith('\'{"candidates": [')
    assert len(caught.value.snippet) <= 100
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(
    "payload", ["42", '"x"', "null", "true", "-1.5", "[42]", '["x"]', "[null]", "[[", "[1,"]
)
def test_json_that_is_not_an_object_is_malformed(payload: str) -> None:
    with pytest.raises(MalformedStreamError) as caught:
        feed(payload)
    assert caught.value.event == 1
    assert "event 1" in str(caught.value)
    assert payload in caught.value.snippet


# -- Gemini errors -----------------------------------------------------------------------


ERROR_BODY = QUOTA_ERROR


def _check_quota_error(error: GeminiAPIError, event: int) -> None:
    assert isinstance(error, RxGemError)
    assert not isinstance(error, MalformedStreamError)
    assert error.code == 429
    assert error.status == "RESOURCE_EXHAUSTED"
    assert error.message == ERROR_BODY["message"]
    assert error.details == ERROR_BODY["details"]
    assert error.event == event
    text = str(error)
    assert f"event {event}" in text
    assert "429" in text
    assert "RESOURCE_EXHAUSTED" in text
    assert ERROR_BODY["message"] in text


@pytest.mark.parametrize(
    "payload",
    [{"error": ERROR_BODY}, [{"error": ERROR_BODY}]],
    ids=["object", "one-element-array"],
)
def test_error_object_raises_gemini_api_error(payload: Any) -> None:
    parser = ResponseParser()
    assert len(parser.feed(SSEEvent(data=json.dumps(GOOD)))) == 1
    with pytest.raises(GeminiAPIError) as caught:
        parser.feed(SSEEvent(data=json.dumps(payload)))
    _check_quota_error(caught.value, 2)


def test_pretty_printed_error_as_a_raw_event() -> None:
    parser = ResponseParser()
    for _ in range(2):
        parser.feed(SSEEvent(data=json.dumps(GOOD)))
    raw = json.dumps({"error": ERROR_BODY}, indent=2)
    assert raw.count("\n") > 10
    with pytest.raises(GeminiAPIError) as caught:
        parser.feed(SSEEvent(data=raw, event="raw"))
    _check_quota_error(caught.value, 3)


def test_pretty_printed_error_from_the_sample() -> None:
    events = sample_events("error_mid_stream.sse")
    assert events[-1].event == "raw"
    assert "\n" in events[-1].data
    parser = ResponseParser()
    for event in events[:-1]:
        assert len(parser.feed(event)) == 1
    with pytest.raises(GeminiAPIError) as caught:
        parser.feed(events[-1])
    error = caught.value
    assert (error.code, error.status, error.event) == (499, "CANCELLED", 3)
    assert error.message == "The operation was cancelled."
    assert error.details[0]["@type"] == "type.googleapis.com/google.rpc.DebugInfo"
    assert "event 3" in str(error)


def test_error_with_only_a_message() -> None:
    with pytest.raises(GeminiAPIError) as caught:
        feed({"error": {"message": "boom"}})
    assert (caught.value.code, caught.value.status, caught.value.details) == (None, None, [])
    assert caught.value.message == "boom"


# -- event numbering ---------------------------------------------------------------------


def test_event_count_continues_across_calls() -> None:
    parser = ResponseParser()
    assert parser.events == 0
    parser.feed(SSEEvent(data=json.dumps(GOOD)))
    assert parser.feed(SSEEvent(data="  ")) == []
    parser.feed(SSEEvent(data=json.dumps([GOOD, GOOD])))
    assert parser.events == 3
    with pytest.raises(MalformedStreamError) as caught:
        parser.feed(SSEEvent(data="{oops"))
    assert caught.value.event == 4
    assert "event 4" in str(caught.value)
    with pytest.raises(GeminiAPIError) as api:
        parser.feed(SSEEvent(data=json.dumps({"error": ERROR_BODY})))
    assert api.value.event == 5
    assert "event 5" in str(api.value)


def test_each_parser_counts_on_its_own() -> None:
    first, second = ResponseParser(), ResponseParser()
    for _ in range(3):
        first.feed(SSEEvent(data=json.dumps(GOOD)))
    with pytest.raises(MalformedStreamError) as caught:
        second.feed(SSEEvent(data="{"))
    assert caught.value.event == 1
    assert first.events == 3
