"""rxgem.chat_completions: an OpenAI request answered by a real (loopback) FakeGemini,
the answer judged by the openai SDK's own models."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from openai.types.chat import ChatCompletion as SDKCompletion
from openai.types.chat import ChatCompletionChunk as SDKChunk

import rxgem
from rxgem import samples
from rxgem.testing import FakeGemini

BODY: dict[str, Any] = {
    "model": "gemini-2.5-flash",
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    "max_tokens": 50,
}


def test_a_request_without_stream_gets_one_whole_completion() -> None:
    with FakeGemini(samples.read("thinking_tools.sse")) as fake:
        source = rxgem.chat_completions(BODY, base_url=fake.base_url, api_key="k")
        (answer,) = list(rxgem.iterate(source))
        sent = fake.requests[0]
    assert isinstance(answer, rxgem.ChatCompletion)
    completion = SDKCompletion.model_validate(answer.to_dict())
    assert completion.object == "chat.completion"
    expected = samples.expected()["thinking_tools.sse"]["choices"][0]
    choice = completion.choices[0]
    assert choice.message.content == expected["content"]
    assert choice.finish_reason == "tool_calls"
    assert [c.function.name for c in choice.message.tool_calls or []] == [
        c["function"]["name"] for c in expected["tool_calls"]
    ]
    assert completion.usage is not None  # a whole completion always says its usage
    assert sent.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert sent.json["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert sent.json["generationConfig"] == {"maxOutputTokens": 50}


@pytest.mark.parametrize("include_usage", [True, False])
def test_a_streamed_request_gets_chunks_and_usage_only_when_asked(include_usage: bool) -> None:
    body = {**BODY, "stream": True, "stream_options": {"include_usage": include_usage}}
    with FakeGemini(samples.read("text.sse")) as fake:
        chunks = list(
            rxgem.iterate(rxgem.chat_completions(body, base_url=fake.base_url, api_key="k"))
        )
    for chunk in chunks:
        SDKChunk.model_validate(chunk.to_dict())
    assert any(c.usage is not None for c in chunks) == include_usage
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == samples.expected()["text.sse"]["choices"][0]["content"]


def test_asyncio_code_awaits_the_completion() -> None:
    async def main(base_url: str) -> rxgem.ChatCompletion:
        async with httpx.AsyncClient() as client:
            source = rxgem.chat_completions(BODY, base_url=base_url, api_key="k", client=client)
            answer = await source
            assert isinstance(answer, rxgem.ChatCompletion)
            return answer

    with FakeGemini(samples.read("text.sse")) as fake:
        answer = asyncio.run(main(fake.base_url))
    assert answer.choices[0].finish_reason == "stop"


def test_a_bad_request_fails_at_call_time_before_anything_is_sent() -> None:
    with FakeGemini(samples.read("text.sse")) as fake:
        with pytest.raises(rxgem.InvalidRequestError) as caught:
            rxgem.chat_completions(
                {**BODY, "logit_bias": {"1": 5}}, base_url=fake.base_url, api_key="k"
            )
        assert fake.requests == []
    assert caught.value.where == "logit_bias"


def test_a_gemini_error_reaches_the_caller_typed() -> None:
    with FakeGemini(samples.read("error_event.sse")) as fake:
        source = rxgem.chat_completions(BODY, base_url=fake.base_url, api_key="k")
        with pytest.raises(rxgem.GeminiAPIError):
            list(rxgem.iterate(source))
