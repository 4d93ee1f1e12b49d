"""``rxgem.responses``: a Responses request answered by Gemini without a server, against
FakeGemini: the events streamed, the Response assembled, what a body cannot ask of it."""

from __future__ import annotations

from typing import Any

import pytest

import rxgem
import rxgem.client
from rxgem.converter import ResponsesConverter
from rxgem.core.responses import Response
from rxgem.request import responses_to_gemini_request
from rxgem.testing import FakeGemini, call, event, finish, text, usage

MODEL = "gemini-3-flash-preview"
SIGNATURE = "c2lnbmF0dXJl"
WEATHER: dict[str, Any] = {
    "type": "function",
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}


def respond(body: dict[str, Any], **options: Any) -> Response:
    """The Response of a request without ``stream``."""
    value = rxgem.responses(body, **options).run()
    assert isinstance(value, Response)
    return value


def test_a_stream_gives_the_events_and_no_stream_the_response() -> None:
    body = event(text("Hello"), text(" there"), finish("STOP"), usage(4, 2))
    with FakeGemini(body) as fake:
        options: Any = {"base_url": fake.base_url, "api_key": "k"}
        streamed = rxgem.responses({"model": MODEL, "input": "Hi", "stream": True}, **options)
        events: list[Any] = list(rxgem.iterate(streamed))
        whole = respond({"model": MODEL, "input": "Hi"}, **options)
    tags = [e.__struct_config__.tag for e in events]
    assert tags[0] == "response.created"
    assert tags[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert whole.status == "completed"
    assert whole.output[0].to_dict()["content"][0]["text"] == "Hello there"
    assert fake.requests[0].json["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]


def test_the_signatures_go_back_through_encrypted_content_and_history() -> None:
    first = event(call("get_weather", city="Oslo", id="c1", sig=SIGNATURE), finish("STOP"))
    with FakeGemini(first, event(text("Cold."), finish("STOP")), strict=True) as fake:
        options: Any = {"base_url": fake.base_url, "api_key": "k"}
        turn: dict[str, Any] = {
            "model": MODEL,
            "input": "Weather in Oslo?",
            "tools": [WEATHER],
            "include": ["reasoning.encrypted_content"],
        }
        answer = respond(turn, **options)
        items = [item.to_dict() for item in answer.output]
        assert [item["type"] for item in items] == ["reasoning", "function_call"]
        output = {"type": "function_call_output", "call_id": items[1]["call_id"], "output": "-3"}
        history = [{"role": "user", "content": "Weather in Oslo?"}, *items]
        later = {**turn, "input": [output], "previous_response_id": "resp_1"}
        assert respond(later, history=history, **options).status == "completed"
        model_turn = fake.requests[1].json["contents"][1]
        assert model_turn["parts"][0]["thoughtSignature"] == SIGNATURE


def test_a_namespace_tools_call_is_named_as_the_body_named_it_and_the_id_as_given() -> None:
    namespace = {"type": "namespace", "name": "geo", "tools": [WEATHER]}
    answered = event(call("geo.get_weather", city="Oslo", id="c1"), finish("STOP"))
    with FakeGemini(answered) as fake:
        body = {"model": MODEL, "input": "Weather in Oslo?", "tools": [namespace]}
        answer = respond(body, base_url=fake.base_url, api_key="k", response_id="resp_mine")
    (item,) = [item.to_dict() for item in answer.output]
    assert (item["name"], item["namespace"], item["call_id"]) == ("get_weather", "geo", "c1")
    assert answer.id == "resp_mine"


def test_what_the_body_says_is_not_an_option_and_a_continuation_needs_history() -> None:
    with pytest.raises(TypeError, match="include_encrypted_reasoning"):
        rxgem.responses({"model": MODEL, "input": "Hi"}, include_encrypted_reasoning=True)
    with pytest.raises(TypeError, match="namespaced"):
        rxgem.responses({"model": MODEL, "input": "Hi"}, namespaced={})
    with pytest.raises(rxgem.InvalidRequestError, match="keeps no responses"):
        rxgem.responses({"model": MODEL, "input": "Hi", "previous_response_id": "resp_1"})


FAILING = event(text("Hel")) + event(call("get_weather", city="Oslo", id="c1")) + b"data: {no\n\n"


@pytest.mark.parametrize("body", [event(text("Hello"), finish("STOP"), usage(4, 2)), FAILING])
def test_the_events_are_the_operators_and_on_start_gets_each_subscriptions_converter(
    body: bytes,
) -> None:
    request = responses_to_gemini_request({"model": MODEL, "input": "Hi", "tools": [WEATHER]})
    fixed: Any = {"response_id": "resp_1", "id_factory": lambda: "x", "clock": lambda: 1.0}
    started: list[ResponsesConverter] = []
    with FakeGemini(body, body) as fake:
        events = rxgem.client.response_events(
            request, on_start=started.append, base_url=fake.base_url, api_key="k", **fixed
        )
        runs = [_events_and_error(events), _events_and_error(events)]
    operator = rxgem.operators.gemini_to_responses(
        model=MODEL, request={**request.echo, "store": request.store}, **fixed
    )
    assert runs == [_events_and_error(rxgem.from_body(body).pipe(operator))] * 2
    assert runs[0][1] == (None if body is not FAILING else "MalformedStreamError")
    assert len(started) == 2
    assert started[0] is not started[1]
    for converter, (seen, _) in zip(started, runs, strict=True):
        assert converter.done
        assert converter.response is not None
        assert converter.response.to_dict() == seen[-1]["response"]


def _events_and_error(events: Any) -> tuple[list[dict[str, Any]], str | None]:
    """Each event as a dict, and the error's type that ended the stream (if one did)."""
    seen: list[dict[str, Any]] = []
    try:
        seen.extend(event.to_dict() for event in rxgem.iterate(events))
    except rxgem.RxGemError as error:
        return seen, type(error).__name__
    return seen, None
