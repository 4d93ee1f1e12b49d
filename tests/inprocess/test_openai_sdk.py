"""``rxgem.OpenAITransport`` driven by the real ``openai`` SDK, in process, against FakeGemini.

The SDK validates every answer strictly (``_strict_response_validation=True``), sync
and async, on both upstreams (``generateContent``, Interactions): chat with tools
(streamed and not, the tool loop's round trip), Responses (streamed and not, and
``previous_response_id`` with a store), the model list. FakeGemini answers as Gemini
would (its scenarios): tools offered get a call, a tool result gets an answer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

import rxgem
from rxgem.store import SQLiteStore
from rxgem.testing import FakeGemini

MODEL = "gemini-2.5-flash"
KEY = "gemini-key-never-shown"
UPSTREAMS = ["generateContent", "interactions"]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
RESPONSES_WEATHER = {"type": "function", **WEATHER["function"]}


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini() as running:
        yield running


def sync_client(transport: rxgem.OpenAITransport) -> openai.OpenAI:
    return openai.OpenAI(
        api_key="unused",
        base_url="http://rxgem.local/v1",
        http_client=httpx.Client(transport=transport),
        max_retries=0,
        _strict_response_validation=True,
    )


def async_client(transport: rxgem.OpenAITransport) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key="unused",
        base_url="http://rxgem.local/v1",
        http_client=httpx.AsyncClient(transport=transport),
        max_retries=0,
        _strict_response_validation=True,
    )


def transport_for(fake: FakeGemini, upstream: str, **options: Any) -> rxgem.OpenAITransport:
    return rxgem.OpenAITransport(upstream=upstream, api_key=KEY, base_url=fake.base_url, **options)


def _tool_result(call: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call.id, "content": '{"temperature": 21}'}


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_sync_chat_tool_loop_round_trips_streamed_and_not(fake: FakeGemini, upstream: str) -> None:
    client = sync_client(transport_for(fake, upstream))
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER])
    (call,) = first.choices[0].message.tool_calls or []
    assert first.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "get_weather"
    assert "city" in json.loads(call.function.arguments)
    messages += [first.choices[0].message.model_dump(exclude_none=True), _tool_result(call)]
    with client.chat.completions.stream(model=MODEL, messages=messages, tools=[WEATHER]) as s:
        deltas = [e.delta for e in s if e.type == "content.delta"]
        final = s.get_final_completion()
    assert len(deltas) > 1  # streamed, not one block
    assert final.choices[0].message.content == "".join(deltas)
    assert final.choices[0].finish_reason == "stop"
    client.close()


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_sync_chat_streamed_tool_call_carries_its_signature(
    fake: FakeGemini, upstream: str
) -> None:
    client = sync_client(transport_for(fake, upstream))
    messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
    with client.chat.completions.stream(model=MODEL, messages=messages, tools=[WEATHER]) as s:
        final = s.get_final_completion()
    (call,) = final.choices[0].message.tool_calls or []
    extra = call.model_dump().get("extra_content") or {}
    assert extra["google"]["thought_signature"]  # as rxgem serve emits it
    messages += [final.choices[0].message.model_dump(exclude_none=True), _tool_result(call)]
    again = client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER])
    assert again.choices[0].message.content


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_async_chat_tool_loop_round_trips_streamed_and_not(fake: FakeGemini, upstream: str) -> None:
    async def main() -> None:
        client = async_client(transport_for(fake, upstream))
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        async with client.chat.completions.stream(
            model=MODEL, messages=messages, tools=[WEATHER]
        ) as s:
            final = await s.get_final_completion()
        (call,) = final.choices[0].message.tool_calls or []
        messages += [final.choices[0].message.model_dump(exclude_none=True), _tool_result(call)]
        answer = await client.chat.completions.create(
            model=MODEL, messages=messages, tools=[WEATHER]
        )
        assert answer.choices[0].message.content
        assert answer.choices[0].finish_reason == "stop"
        await client.close()

    asyncio.run(main())


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_streamed_and_not_sync_and_async(fake: FakeGemini, upstream: str) -> None:
    transport = transport_for(fake, upstream)
    client = sync_client(transport)
    with client.responses.stream(model=MODEL, input="Say good morning.") as s:
        kinds = [e.type for e in s]
        streamed = s.get_final_response()
    assert kinds[0] == "response.created"
    assert kinds[-1] == "response.completed"
    assert kinds.count("response.output_text.delta") > 1
    whole = client.responses.create(model=MODEL, input="Say good morning.")
    assert whole.output_text == streamed.output_text != ""

    async def main() -> str:
        aclient = async_client(transport)
        async with aclient.responses.stream(model=MODEL, input="Say good morning.") as s:
            async for _ in s:
                pass
            answer = await s.get_final_response()
        await aclient.close()
        return answer.output_text

    assert asyncio.run(main()) == whole.output_text


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_tool_loop_continues_with_previous_response_id(
    fake: FakeGemini, upstream: str, tmp_path: Path
) -> None:
    async def main() -> None:
        store = SQLiteStore(tmp_path / "responses.sqlite3")
        transport = transport_for(fake, upstream, store=store)
        client = sync_client(transport)
        first = client.responses.create(
            model=MODEL, input="Weather in Paris?", tools=[RESPONSES_WEATHER]
        )
        (call,) = [item for item in first.output if item.type == "function_call"]
        output = {"type": "function_call_output", "call_id": call.call_id, "output": "21 C"}
        with client.responses.stream(
            model=MODEL, previous_response_id=first.id, input=[output], tools=[RESPONSES_WEATHER]
        ) as s:
            for _ in s:
                pass
            second = s.get_final_response()
        assert second.output_text
        assert second.previous_response_id == first.id
        # the conversation was replayed: the last request to Gemini holds the call and its result
        sent = json.dumps(fake.requests[-1].json)
        assert "get_weather" in sent
        assert "21 C" in sent
        aclient = async_client(transport)
        third = await aclient.responses.create(
            model=MODEL, previous_response_id=second.id, input="Thanks!"
        )
        assert third.output_text
        assert third.previous_response_id == second.id
        await aclient.close()
        client.close()
        await store.aclose()

    asyncio.run(main())


def test_previous_response_id_without_a_store_is_a_clear_400(fake: FakeGemini) -> None:
    client = sync_client(transport_for(fake, "generateContent"))
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=MODEL, input="Hi", previous_response_id="resp_123")
    body = refused.value.body
    assert isinstance(body, dict)
    assert body["param"] == "previous_response_id"
    assert "store" in body["message"]
    assert fake.requests == []  # refused before Gemini was asked


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_models_list_and_one_model_sync_and_async(fake: FakeGemini, upstream: str) -> None:
    transport = transport_for(fake, upstream)
    listed = [m.id for m in sync_client(transport).models.list()]
    assert listed == list(FakeGemini.DEFAULT_MODELS)
    assert sync_client(transport).models.retrieve(MODEL).id == MODEL

    async def main() -> list[str]:
        aclient = async_client(transport)
        found = [m.id async for m in aclient.models.list()]
        assert (await aclient.models.retrieve(MODEL)).owned_by == "google"
        with pytest.raises(openai.NotFoundError):
            await aclient.models.retrieve("no-such-model")
        return found

    assert asyncio.run(main()) == listed


def test_a_response_sent_with_store_false_is_not_kept(fake: FakeGemini, tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "responses.sqlite3")
    client = sync_client(transport_for(fake, "generateContent", store=store))
    kept = client.responses.create(model=MODEL, input="Hi")
    unkept = client.responses.create(model=MODEL, input="Hi", store=False)
    assert kept.store is True
    assert unkept.store is False
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model=MODEL, input="Again", previous_response_id=unkept.id)
    assert refused.value.code == "previous_response_not_found"
    again = client.responses.create(model=MODEL, input="Again", previous_response_id=kept.id)
    assert again.previous_response_id == kept.id
    client.close()
    asyncio.run(store.aclose())
