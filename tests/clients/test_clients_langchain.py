"""LangChain's ``ChatOpenAI`` (``langchain-openai``, unchanged) in a tool loop through
``rxgem serve``.

Chat Completions and the Responses API (``use_responses_api=True``), on both upstreams, in
front of a strict FakeGemini answering as ``gemini-3-flash-preview``: the model calls the
tool, LangChain runs it and sends the result, the model answers; then a second question,
so the first turn's call goes back once more, as history. Every call sent back must carry
the signature the fake gave it (see ``clients_harness``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from clients_harness import G3, UPSTREAMS, assert_signatures_kept, model_requests, strict_gateway
from server_harness import TOKEN

langchain_openai = pytest.importorskip(
    "langchain_openai", reason="LangChain's OpenAI client is missing (pip install langchain-openai)"
)

from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"18 C and sunny in {city}"


def _turn(model: Any, history: list[BaseMessage], question: str) -> str:
    """One user turn: the question, the tool calls the model makes run, until it answers."""
    history.append(HumanMessage(question))
    for _ in range(4):
        reply = model.invoke(history)
        history.append(reply)
        if not reply.tool_calls:
            return str(reply.text)
        for call in reply.tool_calls:
            history.append(ToolMessage(get_weather.invoke(call["args"]), tool_call_id=call["id"]))
    raise AssertionError(f"no answer after four calls: {history}")


def _conversation(url: str, **options: Any) -> list[str]:
    chat = langchain_openai.ChatOpenAI(
        model=G3, base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, timeout=30, **options
    )
    model = chat.bind_tools([get_weather])
    history: list[BaseMessage] = []
    return [
        _turn(model, history, "What is the weather in Paris?"),
        _turn(model, history, "And in Rome?"),
    ]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize(
    "options",
    [{}, {"use_responses_api": True}],
    ids=["chat", "responses"],
)
def test_langchain_tool_loop_keeps_the_signatures(
    upstream: str, options: dict[str, Any], tmp_path: Path
) -> None:
    with strict_gateway(upstream, tmp_path) as (fake, url):
        answers = _conversation(url, **options)
    assert all("get_weather returned" in answer for answer in answers), answers
    assert len(model_requests(fake)) == 4
    # turn 1's call goes back three times (its result, then as history twice), turn 2's once
    assert_signatures_kept(fake, replays=4)
