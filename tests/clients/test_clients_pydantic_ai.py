"""pydantic-ai (``pydantic-ai-slim[openai]``, unchanged) running an agent with a tool through
``rxgem serve``.

An ``Agent`` with one tool, on ``OpenAIChatModel`` (Chat Completions) and
``OpenAIResponsesModel`` (Responses: stateless, the whole history each time, and with
``openai_previous_response_id='auto'``), on both upstreams, in front of a strict FakeGemini
answering as ``gemini-3-flash-preview``: the model calls the tool, the agent runs it and
sends the result, the model answers; then a second question with the first run's
messages as history, so the first turn's call goes back once more. Every call sent back
must carry the signature the fake gave it (see ``clients_harness``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from clients_harness import G3, UPSTREAMS, assert_signatures_kept, model_requests, strict_gateway
from server_harness import TOKEN

pydantic_ai = pytest.importorskip(
    "pydantic_ai", reason="pydantic-ai is missing (pip install 'pydantic-ai-slim[openai]')"
)

from pydantic_ai.models.openai import (  # noqa: E402
    OpenAIChatModel,
    OpenAIResponsesModel,
    OpenAIResponsesModelSettings,
)
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

MODELS = {
    "chat": (OpenAIChatModel, None),
    "responses": (OpenAIResponsesModel, None),
    "responses-previous-id": (
        OpenAIResponsesModel,
        OpenAIResponsesModelSettings(openai_previous_response_id="auto"),
    ),
}


def _conversation(url: str, kind: str, sent: list[dict[str, Any]]) -> list[str]:
    """The agent's answers to two questions; ``sent`` gets the bodies it posted."""
    model_class, settings = MODELS[kind]

    async def record(request: httpx.Request) -> None:
        sent.append(json.loads(request.content))

    client = openai.AsyncOpenAI(
        base_url=f"{url}/v1",
        api_key=TOKEN,
        max_retries=0,
        http_client=httpx.AsyncClient(event_hooks={"request": [record]}),
    )
    provider = OpenAIProvider(openai_client=client)
    model: Any = model_class(G3, provider=provider)
    agent: Any = pydantic_ai.Agent(model, model_settings=settings)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return f"18 C and sunny in {city}"

    first = agent.run_sync("What is the weather in Paris?")
    second = agent.run_sync("And in Rome?", message_history=first.all_messages())
    return [str(first.output), str(second.output)]


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("kind", list(MODELS))
def test_pydantic_ai_agent_keeps_the_signatures(upstream: str, kind: str, tmp_path: Path) -> None:
    with strict_gateway(upstream, tmp_path) as (fake, url):
        sent: list[dict[str, Any]] = []
        answers = _conversation(url, kind, sent)
    assert all("get_weather returned" in answer for answer in answers), answers
    continued = [body.get("previous_response_id") is not None for body in sent]
    assert continued == (
        [False, True, True, True] if kind == "responses-previous-id" else [False] * 4
    )
    assert len(model_requests(fake)) == 4
    assert_signatures_kept(fake, replays=4)
