"""``POST /v1/responses`` through a real ``rxgem serve`` app (uvicorn on 127.0.0.1) in front
of FakeGemini, judged by the ``openai`` SDK with strict validation: streamed and not, the
event stream's shape, a tool round trip stateless (``encrypted_content``) and stored
(``previous_response_id``) against a strict FakeGemini, failures before and mid-stream.
"""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from server_harness import (
    KEY,
    MODEL,
    TOKEN,
    event_ends,
    expected_content,
    sdk,
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.testing import (
    FakeGemini,
    FakeResponse,
    api_error,
    call,
    event,
    finish,
    text,
    thought,
    usage,
)
from rxgem.testing._gemini_builders import code, code_result

GEMINI_3 = "gemini-3-flash-preview"
SIGNATURE = "c2lnbmF0dXJlLW9mLXRoZS1jYWxs"
THOUGHT_SIGNATURE = "dGhvdWdodC1zaWduYXR1cmU"
WEATHER: Any = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
    "strict": True,
}
CALLS = event(
    thought("The user wants the weather.", sig=THOUGHT_SIGNATURE),
    call("get_weather", city="Paris", id="gw_1", sig=SIGNATURE),
    finish("STOP"),
    usage(20, 8, thoughts=5),
)
SUNNY = event(text("It is sunny in Paris."), finish("STOP"), usage(40, 6))


@pytest.fixture
def store_path(tmp_path: Path) -> str:
    return str(tmp_path / "responses.sqlite3")


@pytest.fixture
def strict_gateway(store_path: str) -> Iterator[tuple[FakeGemini, openai.OpenAI]]:
    """A strict FakeGemini (Gemini 3 signatures checked) answering a call, then text."""
    with (
        FakeGemini(CALLS, SUNNY, strict=True) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        yield fake, client


def sse_events(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    """``(event name, data)`` of each frame of a named-event SSE body."""
    found = []
    for frame in body.decode().split("\n\n"):
        if not frame.strip():
            continue
        lines = dict(line.split(": ", 1) for line in frame.split("\n"))
        found.append((lines["event"], json.loads(lines["data"])))
    return found


def model_parts(fake: FakeGemini, index: int) -> list[dict[str, Any]]:
    """The parts of the model turns Gemini got in request ``index``."""
    contents = fake.requests[index].json["contents"]
    return [part for c in contents if c["role"] == "model" for part in c["parts"]]


# --------------------------------------------------------------------------- text


def test_the_sdk_streams_a_text_response(store_path: str) -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        with client.responses.stream(model=MODEL, input="Say good morning.") as stream:
            kinds = [e.type for e in stream]
            final = stream.get_final_response()
        assert kinds[:2] == ["response.created", "response.in_progress"]
        assert kinds[-1] == "response.completed"
        assert final.status == "completed"
        assert final.output_text == expected_content("text.sse")
        assert final.usage is not None
        assert final.usage.total_tokens > 0
        assert final.id.startswith("resp_")
        assert fake.requests[0].json["contents"] == [
            {"role": "user", "parts": [{"text": "Say good morning."}]}
        ]


def test_the_stream_is_named_events_ending_with_the_terminal_one(store_path: str) -> None:
    with FakeGemini() as fake, serving(settings_for(fake, store=store_path)) as url:
        answer = httpx.post(
            f"{url}/v1/responses",
            json={"model": MODEL, "input": "Hi", "stream": True},
            headers={"authorization": f"Bearer {TOKEN}"},
        )
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/event-stream")
    events = sse_events(answer.content)
    assert all(name == data["type"] for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert b"[DONE]" not in answer.content
    name, last = events[-1]
    assert name == "response.completed"
    ids = {data["response"]["id"] for _, data in events if "response" in data}
    assert ids == {last["response"]["id"]}
    assert re.fullmatch("resp_[0-9a-f]{48}", last["response"]["id"])  # the server's, stored
    done = [data["item"] for name, data in events if name == "response.output_item.done"]
    assert last["response"]["output"] == done


def test_the_sdk_creates_a_response_without_streaming(store_path: str) -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        response = client.responses.create(model=MODEL, input="Say good morning.")
        assert response.status == "completed"
        assert response.output_text == expected_content("text.sse")
        assert response.to_dict()["store"] is True
        assert client.responses.retrieve(response.id).to_dict() == response.to_dict()


def test_store_false_is_answered_and_not_kept(store_path: str) -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        response = client.responses.create(model=MODEL, input="Hi", store=False)
        assert response.to_dict()["store"] is False
        with pytest.raises(openai.NotFoundError):
            client.responses.retrieve(response.id)


def test_no_store_answers_and_keeps_nothing() -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, no_store=True)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        response = client.responses.create(model=MODEL, input="Hi")
        assert response.status == "completed"
        assert response.to_dict()["store"] is False  # it says it was not kept
        with pytest.raises(openai.NotFoundError, match="keeps no responses"):
            client.responses.retrieve(response.id)
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model=MODEL, input="more", previous_response_id=response.id)
        assert refused.value.body["param"] == "previous_response_id"  # type: ignore[index]


def test_text_after_code_is_answered_streamed_and_stored_in_the_streams_order(
    store_path: str,
) -> None:
    body = b"".join(
        [
            event(text("Let me run it.")),
            event(code("print(1)")),
            event(code_result("1\n")),
            event(text("It printed 1."), finish("STOP"), usage(5, 9)),
        ]
    )
    with (
        FakeGemini(body, body) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        answered = client.responses.create(model=MODEL, input="Run it.")
        with client.responses.stream(model=MODEL, input="Run it.") as stream:
            streamed = stream.get_final_response()
        stored = client.responses.retrieve(answered.id)
    for response in (answered, streamed, stored):
        assert [item.type for item in response.output] == [
            "message",
            "code_interpreter_call",
            "message",
        ]
        assert response.output_text == "Let me run it.It printed 1."
        assert response.output[2].content[0].text == "It printed 1."  # type: ignore[union-attr]


# --------------------------------------------------------------------------- tool round trips


def test_a_stateless_tool_round_trip_gives_gemini_its_signatures(
    strict_gateway: tuple[FakeGemini, openai.OpenAI],
) -> None:
    fake, client = strict_gateway
    question: Any = {"role": "user", "content": "What is the weather in Paris?"}
    include: Any = ["reasoning.encrypted_content"]
    with client.responses.stream(
        model=GEMINI_3, input=[question], tools=[WEATHER], store=False, include=include
    ) as stream:
        first = stream.get_final_response()
    kinds = [item.type for item in first.output]
    assert kinds == ["reasoning", "function_call"]
    reasoning, called = first.output
    assert reasoning.type == "reasoning"
    assert reasoning.encrypted_content
    assert called.type == "function_call"
    assert called.arguments == '{"city":"Paris"}'
    replay: Any = [item.to_dict() for item in first.output]
    output: Any = {"type": "function_call_output", "call_id": called.call_id, "output": "sunny"}
    second = client.responses.create(
        model=GEMINI_3,
        input=[question, *replay, output],
        tools=[WEATHER],
        store=False,
        include=include,
    )
    assert second.output_text == "It is sunny in Paris."
    assert [r.json.get("contents") is not None for r in fake.requests] == [True, True]
    (part,) = [p for p in model_parts(fake, 1) if "functionCall" in p]
    assert part["thoughtSignature"] == SIGNATURE  # not Google's placeholder


def test_a_stored_tool_round_trip_continues_with_previous_response_id(
    strict_gateway: tuple[FakeGemini, openai.OpenAI],
) -> None:
    fake, client = strict_gateway
    first = client.responses.create(
        model=GEMINI_3, input="What is the weather in Paris?", tools=[WEATHER]
    )
    # the client did not ask for encrypted_content: the store keeps the signatures anyway
    assert [item.type for item in first.output] == ["reasoning", "function_call"]
    assert first.output[0].type == "reasoning"
    assert first.output[0].encrypted_content is None
    called = first.output[1]
    assert called.type == "function_call"
    output: Any = {"type": "function_call_output", "call_id": called.call_id, "output": "sunny"}
    with client.responses.stream(
        model=GEMINI_3, input=[output], tools=[WEATHER], previous_response_id=first.id
    ) as stream:
        second = stream.get_final_response()
    assert second.previous_response_id == first.id
    assert second.output_text == "It is sunny in Paris."
    (part,) = [p for p in model_parts(fake, 1) if "functionCall" in p]
    assert part["thoughtSignature"] == SIGNATURE
    assert fake.requests[1].json["contents"][0] == {
        "role": "user",
        "parts": [{"text": "What is the weather in Paris?"}],
    }
    items = client.responses.input_items.list(second.id)
    assert [item.type for item in items.data] == ["function_call_output"]


def test_an_item_reference_to_a_stored_reasoning_item_gives_its_signatures(
    strict_gateway: tuple[FakeGemini, openai.OpenAI],
) -> None:
    fake, client = strict_gateway
    question: Any = {"role": "user", "content": "What is the weather in Paris?"}
    first = client.responses.create(model=GEMINI_3, input=[question], tools=[WEATHER])
    reasoning, called = first.output
    assert reasoning.type == "reasoning"
    assert called.type == "function_call"
    replay: Any = [
        question,
        {"type": "item_reference", "id": reasoning.id},  # as the Vercel AI SDK sends it
        called.to_dict(),
        {"type": "function_call_output", "call_id": called.call_id, "output": "sunny"},
    ]
    second = client.responses.create(model=GEMINI_3, input=replay, tools=[WEATHER])
    assert second.output_text == "It is sunny in Paris."
    (part,) = [p for p in model_parts(fake, 1) if "functionCall" in p]
    assert part["thoughtSignature"] == SIGNATURE


@pytest.mark.parametrize("thoughts", [True, False])
def test_output_items_replayed_by_id_get_their_signatures_back(
    thoughts: bool, store_path: str
) -> None:
    bare = event(call("get_weather", city="Paris", id="gw_1", sig=SIGNATURE), finish("STOP"))
    first_turn = CALLS if thoughts else bare
    with (
        FakeGemini(first_turn, SUNNY, SUNNY, strict=True) as fake,
        serving(settings_for(fake, store=store_path, client_tokens=(TOKEN, "other"))) as url,
        sdk(url, _strict_response_validation=True) as client,
        sdk(url, "other") as other,
    ):
        question: Any = {"role": "user", "content": "What is the weather in Paris?"}
        first = client.responses.create(model=GEMINI_3, input=[question], tools=[WEATHER])
        kinds = [item.type for item in first.output]
        assert kinds == (["reasoning", "function_call"] if thoughts else ["function_call"])
        called = first.output[-1]
        assert called.type == "function_call"
        # the whole conversation again, the output items as they came (no encrypted_content)
        replay: Any = [
            question,
            *[item.to_dict() for item in first.output],
            {"type": "function_call_output", "call_id": called.call_id, "output": "sunny"},
        ]
        client.responses.create(model=GEMINI_3, input=replay, tools=[WEATHER])
        (part,) = [p for p in model_parts(fake, 1) if "functionCall" in p]
        assert part["thoughtSignature"] == SIGNATURE
        # another client replaying the same ids gets nothing of the store
        other.responses.create(model=GEMINI_3, input=replay, tools=[WEATHER])
        (part,) = [p for p in model_parts(fake, 2) if "functionCall" in p]
        assert part["thoughtSignature"] != SIGNATURE


def test_a_call_without_thoughts_keeps_its_signature_in_the_store(store_path: str) -> None:
    bare_call = event(call("get_weather", city="Paris", id="gw_1", sig=SIGNATURE), finish("STOP"))
    with (
        FakeGemini(bare_call, SUNNY, strict=True) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        first = client.responses.create(model=GEMINI_3, input="Weather?", tools=[WEATHER])
        assert [item.type for item in first.output] == ["function_call"]  # nothing shown
        called = first.output[0]
        assert called.type == "function_call"
        output: Any = {"type": "function_call_output", "call_id": called.call_id, "output": "ok"}
        client.responses.create(
            model=GEMINI_3, input=[output], tools=[WEATHER], previous_response_id=first.id
        )
        (part,) = [p for p in model_parts(fake, 1) if "functionCall" in p]
        assert part["thoughtSignature"] == SIGNATURE


NAMESPACE: Any = {  # as Codex CLI sends an MCP server's tools
    "type": "namespace",
    "name": "ns",
    "description": "Tools of the ns MCP server.",
    "tools": [
        {
            "type": "function",
            "name": "fn",
            "description": "Look a word up.",
            "strict": False,
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        }
    ],
}
NS_CALL = event(
    thought("Look it up.", sig=THOUGHT_SIGNATURE),
    call("ns.fn", q="rx", id="ns_1", sig=SIGNATURE),
    finish("STOP"),
)


@pytest.mark.parametrize("stored", [False, True])
def test_a_namespace_tools_call_comes_back_as_the_client_named_it(
    stored: bool, store_path: str
) -> None:
    with (
        FakeGemini(NS_CALL, SUNNY, strict=True) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        question: Any = {"role": "user", "content": [{"type": "input_text", "text": "Look up rx."}]}
        include: Any = ["reasoning.encrypted_content"]
        common: Any = {"model": GEMINI_3, "tools": [NAMESPACE], "parallel_tool_calls": True}
        with client.responses.stream(
            input=[question], store=stored, include=include, **common
        ) as stream:
            added = [e.item for e in stream if e.type == "response.output_item.added"]
            first = stream.get_final_response()
        declared = fake.requests[0].json["tools"][0]["functionDeclarations"]
        assert [d["name"] for d in declared] == ["ns.fn"]
        called = first.output[-1]
        assert called.type == "function_call"
        assert (called.name, called.namespace, called.call_id) == ("fn", "ns", "ns_1")
        assert [(a.name, a.namespace) for a in added if a.type == "function_call"] == [("fn", "ns")]
        output: Any = {"type": "function_call_output", "call_id": called.call_id, "output": "ok"}
        if stored:
            turn: Any = {"input": [output], "previous_response_id": first.id}
        else:
            replay = [item.to_dict() for item in first.output]
            turn = {"input": [question, *replay, output], "store": False, "include": include}
        second = client.responses.create(**common, **turn)
        assert second.output_text == "It is sunny in Paris."
        (part,) = [p for p in model_parts(fake, 1) if "functionCall" in p]
        assert part["functionCall"]["name"] == "ns.fn"
        assert part["thoughtSignature"] == SIGNATURE
        (answered,) = [
            p["functionResponse"]
            for c in fake.requests[1].json["contents"]
            for p in c["parts"]
            if "functionResponse" in p
        ]
        assert answered["name"] == "ns.fn"


# --------------------------------------------------------------------------- failures


def test_an_upstream_refusal_before_the_stream_is_an_openai_error(store_path: str) -> None:
    quota = FakeResponse(status=429, error={"code": 429, "message": "slow down", "status": "X"})
    with (
        FakeGemini(quota) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        with pytest.raises(openai.RateLimitError):
            client.responses.create(model=MODEL, input="Hi")
        with pytest.raises(openai.RateLimitError):
            client.responses.create(model=MODEL, input="Hi", stream=True)


def test_a_mid_stream_error_ends_the_stream_with_response_failed(store_path: str) -> None:
    with (
        FakeGemini(samples.read("error_event")) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        events = list(client.responses.create(model=MODEL, input="Hi", stream=True))
        assert events[0].type == "response.created"
        assert events[-1].type == "response.failed"
        failed = events[-1].response
        assert failed.status == "failed"
        assert failed.error is not None
        assert failed.output_text  # what came before the error is delivered
        assert [e.sequence_number for e in events] == list(range(len(events)))
        kept = client.responses.retrieve(failed.id)
        assert kept.status == "failed"
        with pytest.raises(openai.RateLimitError):
            client.responses.create(model=MODEL, input="Hi")


def test_a_request_that_cannot_be_translated_is_a_400_naming_the_field(store_path: str) -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model=MODEL, input="Hi", background=True)
        assert refused.value.body["param"] == "background"  # type: ignore[index]
        with pytest.raises(openai.BadRequestError) as unknown:
            client.responses.create(model=MODEL, input="Hi", previous_response_id="resp_nope")
        assert unknown.value.code == "previous_response_not_found"
        assert fake.requests == []


def test_a_failed_response_never_shows_the_servers_key(store_path: str) -> None:
    leak = event(api_error(500, "INTERNAL", f"the key {KEY} was refused"))
    with (
        FakeGemini(event(text("Part")) + leak) as fake,
        serving(settings_for(fake, store=store_path)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        answer = httpx.post(
            f"{url}/v1/responses",
            json={"model": MODEL, "input": "Hi", "stream": True},
            headers={"authorization": f"Bearer {TOKEN}"},
        )
        name, last = sse_events(answer.content)[-1]
        assert name == "response.failed"
        assert "[redacted]" in last["response"]["error"]["message"]
        kept = client.responses.retrieve(last["response"]["id"])
        assert kept.error is not None
        assert "[redacted]" in kept.error.message
    assert KEY not in answer.text
    assert KEY not in kept.to_json()


# --------------------------------------------------------------------------- the stream's life


def _paused(events: int, pause: float) -> FakeResponse:
    capture = samples.read("text")
    return FakeResponse(body=capture, split_at=event_ends(capture)[:events], pause=pause)


def test_keep_alive_comments_fill_gemini_silences(store_path: str) -> None:
    overrides = {"keep_alive": 0.2, "store": store_path}
    with (
        FakeGemini(_paused(2, 0.7)) as fake,
        serving(settings_for(fake, **overrides)) as url,
        sdk(url, _strict_response_validation=True) as client,
    ):
        answer = httpx.post(
            f"{url}/v1/responses",
            json={"model": MODEL, "input": "Hi", "stream": True},
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=30,
        )
        assert b": keep-alive\n\n" in answer.content
        with client.responses.stream(model=MODEL, input="Hi") as stream:
            assert stream.get_final_response().output_text == expected_content("text.sse")


def test_sigterm_ends_a_long_responses_stream_with_an_error_event() -> None:
    with (
        FakeGemini(_paused(3, 5.0)) as fake,
        serve_process(
            "--upstream", fake.base_url, "--client-token", TOKEN,
            "--shutdown-grace", "1", "--no-store",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, process),
        httpx.Client(timeout=30) as client,
    ):  # fmt: skip
        body = {"model": MODEL, "input": "Hi", "stream": True}
        headers = {"authorization": f"Bearer {TOKEN}"}
        with client.stream("POST", f"{url}/v1/responses", json=body, headers=headers) as answer:
            assert answer.status_code == 200
            process.send_signal(signal.SIGTERM)
            cut = answer.read()
        process.wait(30)
    name, last = sse_events(cut)[-1]
    assert name == "error"
    assert last["code"] == "server_shutdown"
    assert last["sequence_number"] == len(sse_events(cut)) - 1


def test_a_failure_after_keep_alives_and_before_any_event_is_an_error_event(
    store_path: str,
) -> None:
    late = FakeResponse(status=503, error={"code": 503, "message": "overloaded"}, delay=0.6)
    with (
        FakeGemini(late) as fake,
        serving(settings_for(fake, keep_alive=0.2, store=store_path)) as url,
    ):
        headers = {"authorization": f"Bearer {TOKEN}"}
        body = {"model": MODEL, "input": "Hi", "stream": True}
        streamed = httpx.post(f"{url}/v1/responses", json=body, headers=headers, timeout=30)
        whole = httpx.post(
            f"{url}/v1/responses", json={**body, "stream": False}, headers=headers, timeout=30
        )
    assert streamed.status_code == 200  # sent with the first keep-alive
    assert streamed.content.startswith(b": keep-alive\n\n")
    frames = [f for f in streamed.content.split(b"\n\n") if f.startswith(b"event:")]
    assert len(frames) == 1
    ((name, error),) = sse_events(frames[0] + b"\n\n")
    assert name == "error"
    assert error["type"] == "error"
    assert error["sequence_number"] == 0
    assert error["message"] == "overloaded"
    assert whole.status_code == 200
    assert whole.content.startswith(b" ")
    assert json.loads(whole.content)["error"]["message"] == "overloaded"
