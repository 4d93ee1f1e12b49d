"""``rxgem serve`` driven by other real OpenAI clients than the ``openai`` SDK (optional).

LangChain's ``ChatOpenAI`` (package ``langchain-openai``, not a dev dependency): the
module is skipped when it is not installed. Each test starts the app in real uvicorn
(``serving`` from ``server_harness``) in front of its own FakeGemini.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from rxgem.testing import FakeGemini, FakeResponse, call, event, finish, text, usage

langchain_openai = pytest.importorskip(
    "langchain_openai", reason="LangChain's OpenAI client is missing (pip install langchain-openai)"
)

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage  # noqa: E402
from server_harness import MODEL, TOKEN, event_ends, serving, settings_for  # noqa: E402

WORDS = ["Good ", "morning", ", ", "sunshine", ". Rx ", "streams ", "all ", "the ", "way."]


def _text_capture() -> bytes:
    last = len(WORDS) - 1
    return b"".join(
        event(text(w), finish("STOP"), usage(12, 9)) if i == last else event(text(w))
        for i, w in enumerate(WORDS)
    )


def _tool_capture() -> bytes:
    return event(text("Let me check. ")) + event(
        call("get_weather", city="Paris", unit="celsius"), finish("STOP"), usage(30, 8)
    )


def _paced(body: bytes) -> FakeResponse:
    return FakeResponse(body=body, split_at=event_ends(body), pause=0.005)


def _chat(url: str, **options: Any) -> Any:
    return langchain_openai.ChatOpenAI(
        model=MODEL, base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, timeout=30, **options
    )


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}


def test_langchain_streams_text() -> None:
    with FakeGemini(_paced(_text_capture())) as fake, serving(settings_for(fake)) as url:
        chunks = list(_chat(url).stream([HumanMessage("Say good morning.")]))
        (sent,) = fake.requests
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert len([c for c in chunks if c.content]) == len(WORDS)  # streamed, not one block
    assert "".join(str(c.content) for c in chunks) == "".join(WORDS)
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    assert merged.response_metadata.get("finish_reason") == "stop"
    if merged.usage_metadata is not None:  # LangChain asks for stream usage by default
        assert merged.usage_metadata["input_tokens"] == 12
    assert sent.json["contents"][-1]["parts"][0]["text"] == "Say good morning."


def test_langchain_async_stream_text() -> None:
    async def run(url: str) -> str:
        parts = [str(c.content) async for c in _chat(url).astream("Say good morning.")]
        return "".join(parts)

    with FakeGemini(_paced(_text_capture())) as fake, serving(settings_for(fake)) as url:
        assert asyncio.run(run(url)) == "".join(WORDS)


def test_langchain_invoke_text() -> None:
    with FakeGemini(_text_capture()) as fake, serving(settings_for(fake)) as url:
        reply = _chat(url).invoke("Say good morning.")
    assert isinstance(reply, AIMessage)
    assert reply.content == "".join(WORDS)
    assert reply.response_metadata["finish_reason"] == "stop"


def test_langchain_bind_tools_invoke() -> None:
    with FakeGemini(_tool_capture()) as fake, serving(settings_for(fake)) as url:
        reply = _chat(url).bind_tools([WEATHER_TOOL]).invoke("Weather in Paris?")
        (sent,) = fake.requests
    assert isinstance(reply, AIMessage)
    (tool_call,) = reply.tool_calls
    assert tool_call["name"] == "get_weather"
    assert tool_call["args"] == {"city": "Paris", "unit": "celsius"}
    assert tool_call["id"]
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    declared = sent.json["tools"][0]["functionDeclarations"][0]
    assert declared["name"] == "get_weather"


def test_langchain_bind_tools_stream_then_answer_the_tool() -> None:
    answer = event(text("It is 18 °C in Paris."), finish("STOP"), usage(40, 9))
    with (
        FakeGemini(_paced(_tool_capture()), answer) as fake,
        serving(settings_for(fake)) as url,
    ):
        llm = _chat(url).bind_tools([WEATHER_TOOL])
        question = HumanMessage("Weather in Paris?")
        merged: Any = None
        for chunk in llm.stream([question]):
            merged = chunk if merged is None else merged + chunk
        assert merged is not None
        (tool_call,) = merged.tool_calls
        assert tool_call["name"] == "get_weather"
        assert tool_call["args"] == {"city": "Paris", "unit": "celsius"}
        assert merged.content == "Let me check. "
        assert merged.response_metadata.get("finish_reason") == "tool_calls"

        from langchain_core.messages import ToolMessage

        result = ToolMessage('{"celsius": 18}', tool_call_id=tool_call["id"])
        final = llm.invoke([question, merged, result])
        second = fake.requests[1].json
    assert final.content == "It is 18 °C in Paris."
    roles = [c["role"] for c in second["contents"]]
    assert roles == ["user", "model", "user"]
    response_part = second["contents"][2]["parts"][0]["functionResponse"]
    assert response_part["name"] == "get_weather"
    assert response_part["response"] == {"celsius": 18}
