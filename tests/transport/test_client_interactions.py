"""rxgem.client with ``upstream="interactions"``: ``stream_chat``, ``chat_completions`` and
``responses`` ask Gemini's Interactions API (over a real FakeGemini on 127.0.0.1) and
answer as they do for ``generateContent``: the same chunk, completion and Responses shapes,
judged by the openai SDK; a cut stream is resumed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletion as SDKCompletion
from pipeline_harness import check_protocol, sdk_accumulate
from responses_judge import check_sequence, sdk_validate

import rxgem
from rxgem.client import chat_completions, responses, stream_chat
from rxgem.testing import FakeGemini, FakeInteraction, call_step, text_step
from rxgem.testing._interaction_script import thought_step

MODEL = "gemini-3-flash-preview"
KEY = "test-key"
ANSWER = "The weather in Paris is sunny today."
STEPS = (
    thought_step("Thinking it over."),
    text_step(ANSWER, pieces=5),
    call_step("get_weather", {"city": "Paris"}, id="call_1", fragments=3),
)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def run(observable: Any) -> list[Any]:
    return list(rxgem.iterate(observable))


def test_stream_chat_sends_an_interactions_body_and_reads_its_steps() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(4.5, 2))  # cut twice: resumed
    with FakeGemini(interactions=[script]) as fake:
        chunks = run(
            stream_chat(
                {"input": "Hi"},
                model=MODEL,
                upstream="interactions",
                api_key=KEY,
                base_url=fake.base_url,
                resume=3,
            )
        )
        request, *resumed = fake.requests
    assert [r.method for r in resumed] == ["GET", "GET"]
    assert request.path == "/v1beta/interactions"
    assert request.json == {"input": "Hi", "model": MODEL, "stream": True}
    check_protocol(chunks)
    final = sdk_accumulate(chunks, ["get_weather"])
    message = final.choices[0].message
    assert message.content == ANSWER
    assert [(c.id, c.function.name) for c in message.tool_calls] == [("call_1", "get_weather")]
    assert json.loads(message.tool_calls[0].function.arguments) == {"city": "Paris"}
    assert final.choices[0].finish_reason == "tool_calls"
    assert {chunk.model for chunk in chunks} == {MODEL}


@pytest.mark.parametrize("stream", [True, False])
def test_chat_completions_answers_through_interactions(stream: bool) -> None:
    body = {
        "model": MODEL,
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": TOOLS,
        "stream": stream,
    }
    with FakeGemini(interactions=[FakeInteraction(steps=STEPS)]) as fake:
        out = run(
            chat_completions(body, upstream="interactions", api_key=KEY, base_url=fake.base_url)
        )
        sent = fake.requests[0].json
    assert sent["model"] == MODEL
    assert sent["store"] is False  # stateless: Google keeps nothing
    if stream:
        check_protocol(out)
        message = sdk_accumulate(out, ["get_weather"]).choices[0].message
        assert all(chunk.usage is None for chunk in out)  # no stream_options.include_usage
    else:
        (completion,) = out
        sdk = SDKCompletion.model_validate(completion.to_dict())
        message = sdk.choices[0].message
        assert sdk.usage is not None
    assert message.content == ANSWER
    assert message.tool_calls[0].id == "call_1"


@pytest.mark.parametrize("stream", [True, False])
def test_responses_answers_through_interactions(stream: bool) -> None:
    body = {
        "model": MODEL,
        "input": "Weather in Paris?",
        "tools": [
            {
                "type": "function",
                "name": "get_weather",
                "parameters": TOOLS[0]["function"]["parameters"],
            }
        ],
        "stream": stream,
    }
    with FakeGemini(interactions=[FakeInteraction(steps=STEPS)]) as fake:
        out = run(responses(body, upstream="interactions", api_key=KEY, base_url=fake.base_url))
        (request,) = fake.requests
    assert request.path == "/v1beta/interactions"
    if stream:
        sdk_validate(out)
        final = check_sequence(out)
    else:
        (response,) = out
        final = response.to_dict()
    calls = [item for item in final["output"] if item["type"] == "function_call"]
    assert [(c["call_id"], c["name"]) for c in calls] == [("call_1", "get_weather")]
    texts = [
        part["text"]
        for item in final["output"]
        if item["type"] == "message"
        for part in item["content"]
    ]
    assert texts == [ANSWER]
    assert final["model"] == MODEL


def test_generate_content_options_are_refused_for_interactions() -> None:
    with pytest.raises(TypeError, match="'slot_policy' is for the generate-content upstream"):
        stream_chat(
            {"input": "Hi"},
            model=MODEL,
            upstream="interactions",
            slot_policy="latest",
            api_key=KEY,
        )


def test_response_events_reads_an_interaction_request_with_its_upstream() -> None:
    from rxgem.client import response_events
    from rxgem.request import responses_to_interaction

    request = responses_to_interaction({"model": MODEL, "input": "Hi", "stream": True})
    with FakeGemini(interactions=[FakeInteraction(steps=(text_step(ANSWER),))]) as fake:
        events = run(response_events(request, api_key=KEY, base_url=fake.base_url))
        (sent,) = fake.requests
    assert sent.path == "/v1beta/interactions"
    assert check_sequence(events)["status"] == "completed"
    with pytest.raises(TypeError, match="upstream='interactions'"):
        response_events(request, upstream="generate-content", api_key=KEY)
