"""Signature memory in process: ``rxgem.OpenAITransport`` with a store gives a client that
drops the thought signatures it handed out (the openai SDK's users rebuild the assistant
message without ``extra_content``; stateless Responses clients send ``function_call``
items by ``call_id`` alone) the same as ``rxgem serve`` does: the signatures back to
Gemini, sync and async, streamed or not, on both upstreams. Without a store it keeps
nothing, as documented: Google's placeholder goes, and the request is logged.

Every assertion is on what reached the (strict, Gemini 3) fake upstream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import msgspec
import openai
import pytest

import rxgem
from rxgem.core import ChatCompletionChunk
from rxgem.request import PLACEHOLDER
from rxgem.store import SQLiteStore
from rxgem.testing import FakeGemini

G3 = "gemini-3-flash-preview"
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
            "additionalProperties": False,
        },
        "strict": True,
    },
}
RESPONSES_WEATHER = {"type": "function", **WEATHER["function"]}
QUESTION = {"role": "user", "content": "What is the weather in Paris?"}


@pytest.fixture
def fake() -> Iterator[FakeGemini]:
    with FakeGemini(strict=True) as running:
        yield running


def transport(fake: FakeGemini, upstream: str, store: Any = None) -> rxgem.OpenAITransport:
    return rxgem.OpenAITransport(
        upstream=upstream, api_key=KEY, base_url=fake.base_url, store=store
    )


def sent_signatures(fake: FakeGemini) -> list[str | None]:
    """The signatures that reached Gemini with the replayed calls of the last request."""
    body = [r.json for r in fake.requests if r.method == "POST"][-1]
    if "contents" in body:
        return [
            part.get("thoughtSignature")
            for content in body["contents"]
            for part in content["parts"]
            if "functionCall" in part
        ]
    return [step.get("signature") for step in body["input"] if step.get("type") == "thought"]


def first_call(message: dict[str, Any]) -> tuple[dict[str, Any], str]:
    call = message["tool_calls"][0]
    return call, call["extra_content"]["google"]["thought_signature"]


def dropped(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The turn as a client that drops ``extra_content`` sends it back."""
    calls = [
        {"id": c["id"], "type": "function", "function": c["function"]}
        for c in message["tool_calls"]
    ]
    return [
        {"role": "assistant", "content": message.get("content"), "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": '{"sky":"clear"}'} for c in calls),
    ]


def chat_sync(rx: rxgem.OpenAITransport, messages: list[Any], stream: bool) -> dict[str, Any]:
    with httpx.Client(transport=rx, base_url="http://rxgem.local") as client:
        body = {"model": G3, "messages": messages, "tools": [WEATHER], "stream": stream}
        response = client.post("/v1/chat/completions", json=body)
        assert response.status_code == 200, response.text
        if not stream:
            message: dict[str, Any] = response.json()["choices"][0]["message"]
            return message
        chunks = [
            msgspec.json.decode(line[6:], type=ChatCompletionChunk)
            for line in response.text.splitlines()
            if line.startswith("data: ") and line != "data: [DONE]"
        ]
        assembled: dict[str, Any] = rxgem.assemble(chunks)["choices"][0]["message"]
        return assembled


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_chat_client_that_drops_extra_content_gets_the_signature_back(
    fake: FakeGemini, tmp_path: Path, upstream: str, stream: bool
) -> None:
    rx = transport(fake, upstream, SQLiteStore(tmp_path / "kept.sqlite3"))
    message = chat_sync(rx, [QUESTION], stream)
    _, signature = first_call(message)
    chat_sync(rx, [QUESTION, *dropped(message)], stream)
    assert sent_signatures(fake) == [signature]


def test_an_async_sdk_client_gets_the_signature_back_too(fake: FakeGemini, tmp_path: Path) -> None:
    rx = transport(fake, "generateContent", SQLiteStore(tmp_path / "kept.sqlite3"))

    async def main() -> str:
        client = openai.AsyncOpenAI(
            api_key="unused",
            base_url="http://rxgem.local/v1",
            http_client=httpx.AsyncClient(transport=rx),
            max_retries=0,
        )
        first = await client.chat.completions.create(model=G3, messages=[QUESTION], tools=[WEATHER])
        message = first.choices[0].message.model_dump(exclude_none=True)
        _, signature = first_call(message)
        await client.chat.completions.create(
            model=G3, messages=[QUESTION, *dropped(message)], tools=[WEATHER]
        )
        await client.close()
        return signature

    signature = asyncio.run(main())
    assert sent_signatures(fake) == [signature]


def test_a_stateless_responses_client_gets_the_call_signature_back(
    fake: FakeGemini, tmp_path: Path
) -> None:
    rx = transport(fake, "generateContent", SQLiteStore(tmp_path / "kept.sqlite3"))
    with httpx.Client(transport=rx, base_url="http://rxgem.local") as client:
        body = {"model": G3, "input": [QUESTION], "tools": [RESPONSES_WEATHER], "store": False}
        first = client.post("/v1/responses", json=body).json()
        [call] = [item for item in first["output"] if item["type"] == "function_call"]
        replay = [
            QUESTION,
            {k: call[k] for k in ("type", "call_id", "name", "arguments")},
            {"type": "function_call_output", "call_id": call["call_id"], "output": "clear"},
        ]
        again = client.post("/v1/responses", json={**body, "input": replay})
        assert again.status_code == 200, again.text
    [signature] = sent_signatures(fake)
    assert signature is not None
    assert signature != PLACEHOLDER


def test_without_a_store_nothing_is_kept_and_the_placeholder_is_logged(
    fake: FakeGemini, caplog: pytest.LogCaptureFixture
) -> None:
    rx = transport(fake, "generateContent")
    message = chat_sync(rx, [QUESTION], False)
    with caplog.at_level(logging.WARNING, logger="rxgem.inprocess"):
        chat_sync(rx, [QUESTION, *dropped(message)], False)
    assert sent_signatures(fake) == [PLACEHOLDER]
    assert "without their thought signature" in caplog.text
