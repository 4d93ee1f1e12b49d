"""``rxgem.OpenAITransport``'s options: checked when it is made, and each given to what takes
it (the transport toward Gemini, the chat stages, the Responses stages)."""

from __future__ import annotations

import httpx
import pytest

import rxgem
from rxgem.testing import FakeGemini

MODEL = "gemini-2.5-flash"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def test_an_option_nothing_takes_is_refused_when_the_transport_is_made() -> None:
    with pytest.raises(TypeError, match="'signature_in_ids'"):
        rxgem.OpenAITransport(api_key="k", signature_in_ids=True)


@pytest.mark.parametrize("name", ["model", "include_usage", "client", "response_id"])
def test_what_each_request_says_is_not_an_option(name: str) -> None:
    with pytest.raises(TypeError, match=name):
        rxgem.OpenAITransport(api_key="k", **{name: None})


def test_an_unknown_upstream_is_refused() -> None:
    with pytest.raises(ValueError, match="generateContent"):
        rxgem.OpenAITransport(upstream="generate_content", api_key="k")


def test_a_responses_only_option_is_refused_on_neither_route() -> None:
    # resume belongs to the Interactions transport: refused on generateContent
    with pytest.raises(TypeError, match="'resume'"):
        rxgem.OpenAITransport(api_key="k", resume=2)
    rxgem.OpenAITransport(upstream="interactions", api_key="k", resume=2)


@pytest.mark.parametrize("upstream", ["generateContent", "interactions"])
def test_a_pipeline_option_reaches_the_chat_stages(upstream: str) -> None:
    with FakeGemini() as fake:
        transport = rxgem.OpenAITransport(
            upstream=upstream, api_key="k", base_url=fake.base_url, signature_in_id=True
        )
        with httpx.Client(transport=transport) as client:
            body = {
                "model": MODEL,
                "messages": [{"role": "user", "content": "Weather in Paris?"}],
                "tools": [WEATHER],
            }
            answer = client.post("http://rxgem.local/v1/chat/completions", json=body).json()
    (call,) = answer["choices"][0]["message"]["tool_calls"]
    assert "__thought__" in call["id"]  # the signature carried in the id, as asked
