"""LangChain's ``ChatOpenAI(http_client=...)`` on ``rxgem.OpenAITransport``, in process,
against FakeGemini: text streamed sync and async, and a tool loop (streamed call, tool
result, answer). Skipped without ``langchain-openai`` (``pip install langchain-openai``)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

import rxgem
from rxgem.testing import FakeGemini

langchain_openai = pytest.importorskip(
    "langchain_openai", reason="LangChain's OpenAI client is missing (pip install langchain-openai)"
)

from langchain_core.messages import HumanMessage, ToolMessage  # noqa: E402

MODEL = "gemini-2.5-flash"
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


def _chat(fake: FakeGemini, upstream: str = "generateContent") -> Any:
    transport = rxgem.OpenAITransport(upstream=upstream, api_key="k", base_url=fake.base_url)
    return langchain_openai.ChatOpenAI(
        model=MODEL,
        api_key="unused",
        base_url="http://rxgem.local/v1",
        http_client=httpx.Client(transport=transport),
        http_async_client=httpx.AsyncClient(transport=transport),
        max_retries=0,
    )


@pytest.mark.parametrize("upstream", ["generateContent", "interactions"])
def test_langchain_streams_text_sync_and_async(upstream: str) -> None:
    with FakeGemini() as fake:
        llm = _chat(fake, upstream)
        chunks = [str(c.content) for c in llm.stream("Say good morning.")]
        assert len([c for c in chunks if c]) > 1  # streamed, not one block
        whole = llm.invoke("Say good morning.").content

        async def main() -> str:
            return "".join([str(c.content) async for c in llm.astream("Say good morning.")])

        assert asyncio.run(main()) == "".join(chunks) == whole


def test_langchain_tool_loop_streams_the_call_then_answers() -> None:
    with FakeGemini() as fake:
        llm = _chat(fake).bind_tools([WEATHER])
        question = HumanMessage("Weather in Paris?")
        merged: Any = None
        for chunk in llm.stream([question]):
            merged = chunk if merged is None else merged + chunk
        (tool_call,) = merged.tool_calls
        assert tool_call["name"] == "get_weather"
        assert "city" in tool_call["args"]
        result = ToolMessage('{"celsius": 18}', tool_call_id=tool_call["id"])
        final = llm.invoke([question, merged, result])
        sent = fake.requests[-1].json
    assert final.content
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    assert sent["contents"][2]["parts"][0]["functionResponse"]["response"] == {"celsius": 18}
