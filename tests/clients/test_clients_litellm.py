"""The LiteLLM SDK (``litellm.completion``, unchanged) in a tool loop through ``rxgem serve``.

``litellm.completion`` with tools (``openai/`` provider, ``api_base`` the server), on both
upstreams, in front of a strict FakeGemini answering as ``gemini-3-flash-preview``: the
model calls the tool, the loop runs it and sends the result with the assistant message
LiteLLM gave (``model_dump()``), the model answers; then a second question, so the first
turn's call goes back once more. Whole answers, and streams assembled by
``litellm.stream_chunk_builder``, as LiteLLM's docs show. Every call sent back must carry
the signature the fake gave it (see ``clients_harness``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from clients_harness import G3, UPSTREAMS, assert_signatures_kept, model_requests, strict_gateway
from server_harness import TOKEN

# LiteLLM fetches its model price list at import unless told to use the one it ships
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm", reason="LiteLLM is missing (pip install litellm)")

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


def _complete(url: str, messages: list[dict[str, Any]], *, stream: bool) -> dict[str, Any]:
    """The assistant message of one completion, as a dict to send back."""
    options: dict[str, Any] = {
        "model": f"openai/{G3}",
        "api_base": f"{url}/v1",
        "api_key": TOKEN,
        "messages": messages,
        "tools": [WEATHER],
        "timeout": 30,
        "max_retries": 0,
    }
    if stream:
        chunks = list(litellm.completion(**options, stream=True))
        response = litellm.stream_chunk_builder(chunks, messages=messages)
    else:
        response = litellm.completion(**options)
    message: dict[str, Any] = response.choices[0].message.model_dump(exclude_none=True)
    return message


def _turn(url: str, messages: list[dict[str, Any]], question: str, *, stream: bool) -> str:
    messages.append({"role": "user", "content": question})
    for _ in range(4):
        message = _complete(url, messages, stream=stream)
        messages.append(message)
        if not message.get("tool_calls"):
            return str(message["content"])
        for call in message["tool_calls"]:
            city = json.loads(call["function"]["arguments"])["city"]
            result = f"18 C and sunny in {city}"
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    raise AssertionError(f"no answer after four calls: {messages}")


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("stream", [False, True], ids=["completion", "stream_chunk_builder"])
def test_litellm_tool_loop_keeps_the_signatures(
    upstream: str, stream: bool, tmp_path: Path
) -> None:
    with strict_gateway(upstream, tmp_path) as (fake, url):
        messages: list[dict[str, Any]] = []
        answers = [
            _turn(url, messages, "What is the weather in Paris?", stream=stream),
            _turn(url, messages, "And in Rome?", stream=stream),
        ]
    assert all("get_weather returned" in answer for answer in answers), answers
    assert len(model_requests(fake)) == 4
    assert_signatures_kept(fake, replays=4)
