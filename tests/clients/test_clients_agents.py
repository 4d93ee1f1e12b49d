"""The OpenAI Agents SDK (``openai-agents``, unchanged) through ``rxgem serve``'s ``/v1/responses``.

An ``Agent`` with one ``@function_tool`` and an ``OpenAIResponsesModel`` pointed at the app in
real uvicorn, in front of a strict FakeGemini (a request Gemini would refuse, such as a
Gemini 3 call sent back without its thought signature, gets Google's 400). Gemini is scripted
as Gemini 3 answers: a thought and a signed call, then the text after the tool's result.

The agent runs each way the SDK offers to carry a turn's state: stateless (``store=False``,
the signatures in reasoning items' ``encrypted_content``), the SDK's default (the whole
history sent again, the response stored), and ``auto_previous_response_id`` (only the tool
output sent, the rest from the store). Each way, with ``Runner.run`` and
``Runner.run_streamed``.
"""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    ItemHelpers,
    ModelSettings,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from agents.models.openai_responses import OpenAIResponsesModel
from interactions_judge import strict_problems
from openai.types.responses import ResponseTextDeltaEvent
from server_harness import TOKEN, async_sdk, serving, settings_for

from rxgem.testing import (
    FakeGemini,
    FakeInteraction,
    ReceivedRequest,
    call,
    call_step,
    event,
    finish,
    text,
    text_step,
    thought,
    usage,
)
from rxgem.testing._interaction_script import THOUGHT_SIGNATURE, thought_step

G3 = "gemini-3-pro-preview"
SIGNATURE = base64.b64encode(b"signature of the call to get_weather").decode()
ANSWER = "It is 18 degrees in Paris, and sunny."
QUESTION = "What is the weather in Paris?"

# turn 1: a thought, then the signed call (Gemini 3 gives it an id); turn 2: the answer
CALL_TURN = event(thought("The user wants the weather; I will ask the tool.")) + event(
    call("get_weather", {"city": "Paris"}, id="fc-paris-1", sig=SIGNATURE),
    finish("STOP"),
    usage(40, 6),
)
ANSWER_TURN = event(text("It is 18 degrees ")) + event(
    text("in Paris, and sunny."), finish("STOP"), usage(60, 9)
)

# How the agent carries state from one model call to the next.
MODES: dict[str, tuple[ModelSettings, dict[str, Any]]] = {
    "stateless": (
        ModelSettings(store=False, response_include=["reasoning.encrypted_content"]),
        {},
    ),
    "stored": (ModelSettings(), {}),
    "previous_response_id": (ModelSettings(), {"auto_previous_response_id": True}),
}
# The SDK's default sends the whole history again, the stored output items by their ids alone
# (a reasoning item {"type": "reasoning", "id": "rs_...", "summary": [...]} with no
# encrypted_content, a function_call with its "fc_..." id), as OpenAI's store resolves them:
# rxgem serve gives them their signatures back from its store.
MODE_PARAMS = list(MODES)


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No tracing export; the server's default store in this test's folder."""
    set_tracing_disabled(True)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@dataclass
class Run:
    """What one agent run gave: the SDK's result, the text deltas and the kinds of run
    items it streamed (``run_streamed`` only), and the cities the tool was called with."""

    result: Any = None
    deltas: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    cities: list[str] = field(default_factory=list)


async def _run_agent(
    url: str, model_settings: ModelSettings, *, streamed: bool, **run_options: Any
) -> Run:
    """Ask an agent with the tool ``get_weather`` the question, through the server at ``url``."""
    run = Run()

    @function_tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        run.cities.append(city)
        return f"18 C and sunny in {city}"

    async with async_sdk(url, api_key=TOKEN) as client:
        agent: Agent[Any] = Agent(
            name="weather",
            instructions="Answer with the tool's result.",
            tools=[get_weather],
            model=OpenAIResponsesModel(model=G3, openai_client=client),
            model_settings=model_settings,
        )
        if not streamed:
            run.result = await Runner.run(agent, QUESTION, **run_options)
            return run
        run.result = Runner.run_streamed(agent, QUESTION, **run_options)
        async for streamed_event in run.result.stream_events():
            if streamed_event.type == "raw_response_event":
                if isinstance(streamed_event.data, ResponseTextDeltaEvent):
                    run.deltas.append(streamed_event.data.delta)
            elif streamed_event.type == "run_item_stream_event":
                run.kinds.append(streamed_event.item.type)
    return run


def _agent_run(
    *turns: bytes, model_settings: ModelSettings, streamed: bool = False, **run_options: Any
) -> tuple[Run, FakeGemini]:
    """FakeGemini answering ``turns``, the server in front of it, and one agent run."""
    with FakeGemini(*turns, strict=True) as fake, serving(settings_for(fake)) as url:
        coroutine = _run_agent(url, model_settings, streamed=streamed, **run_options)
        return asyncio.run(coroutine), fake


def _model_turn(request: ReceivedRequest) -> list[dict[str, Any]]:
    """The parts of the model turn in a Gemini request's contents (exactly one)."""
    turns = [c["parts"] for c in request.json["contents"] if c.get("role") == "model"]
    assert len(turns) == 1, request.json["contents"]
    parts: list[dict[str, Any]] = turns[0]
    return parts


def _check_tool_round_trip(fake: FakeGemini, cities: list[str]) -> None:
    """The tool ran once with the scripted arguments; Gemini got, on turn 2, the call with
    its own id and signature and the tool's result."""
    assert cities == ["Paris"]
    requests = fake.requests
    assert [r.path for r in requests] == [f"/v1beta/models/{G3}:streamGenerateContent"] * 2
    first, second = (r.json for r in requests)
    assert first["contents"][-1]["parts"][-1]["text"] == QUESTION
    assert [d["name"] for d in first["tools"][0]["functionDeclarations"]] == ["get_weather"]
    calls = [p for p in _model_turn(requests[1]) if "functionCall" in p]
    assert calls == [
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Paris"}, "id": "fc-paris-1"},
            "thoughtSignature": SIGNATURE,
        }
    ]
    assert second["contents"][-1] == {
        "role": "user",
        "parts": [
            {
                "functionResponse": {
                    "name": "get_weather",
                    "response": {"output": "18 C and sunny in Paris"},
                    "id": "fc-paris-1",
                }
            }
        ],
    }


@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_runner_run_calls_the_tool_and_answers(mode: str) -> None:
    settings, run_options = MODES[mode]
    run, fake = _agent_run(CALL_TURN, ANSWER_TURN, model_settings=settings, **run_options)
    assert run.result.final_output == ANSWER
    _check_tool_round_trip(fake, run.cities)
    usage_total = run.result.context_wrapper.usage
    assert (usage_total.requests, usage_total.input_tokens, usage_total.output_tokens) == (
        2,
        100,
        15,
    )


@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_runner_run_streamed_calls_the_tool_and_answers(mode: str) -> None:
    settings, run_options = MODES[mode]
    run, fake = _agent_run(
        CALL_TURN, ANSWER_TURN, model_settings=settings, streamed=True, **run_options
    )
    assert run.result.final_output == ANSWER
    assert "".join(run.deltas) == ANSWER
    assert [k for k in run.kinds if k != "reasoning_item"] == [
        "tool_call_item",
        "tool_call_output_item",
        "message_output_item",
    ]
    _check_tool_round_trip(fake, run.cities)


# Gemini 3 often calls without a thought summary: no reasoning item in the output then
# (the SDK asks for no encrypted_content), and the SDK replays only the call, by its id.
SILENT_CALL_TURN = event(
    call("get_weather", {"city": "Paris"}, id="fc-paris-1", sig=SIGNATURE),
    finish("STOP"),
    usage(40, 6),
)


@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_a_call_without_thoughts_keeps_its_signature(mode: str) -> None:
    settings, run_options = MODES[mode]
    run, fake = _agent_run(SILENT_CALL_TURN, ANSWER_TURN, model_settings=settings, **run_options)
    assert run.result.final_output == ANSWER
    _check_tool_round_trip(fake, run.cities)


def test_a_plain_turn_answers_with_the_scripted_text() -> None:
    run, fake = _agent_run(ANSWER_TURN, model_settings=ModelSettings())
    assert run.result.final_output == ANSWER
    assert ItemHelpers.text_message_outputs(run.result.new_items) == ANSWER
    assert run.cities == []
    assert len(fake.requests) == 1


# --------------------------------------------------------------------------- Interactions

# The same agent through `rxgem serve --upstream-api interactions --interactions-store`:
# turn 1 a thought step (signed) and the call, turn 2 the answer.
CALL_RUN = FakeInteraction(
    steps=(
        thought_step("The user wants the weather; I will ask the tool."),
        call_step("get_weather", {"city": "Paris"}, id="fc-paris-1", fragments=2),
    )
)
ANSWER_RUN = FakeInteraction(steps=(text_step(ANSWER, pieces=3),))


def _interactions_agent_run(
    model_settings: ModelSettings, *, streamed: bool, **run_options: Any
) -> tuple[Run, FakeGemini]:
    upstream = {"upstream_api": "interactions", "interactions_store": True}
    with (
        FakeGemini(interactions=[CALL_RUN, ANSWER_RUN], interaction_check=strict_problems) as fake,
        serving(settings_for(fake, **upstream)) as url,
    ):
        coroutine = _run_agent(url, model_settings, streamed=streamed, **run_options)
        return asyncio.run(coroutine), fake


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_streamed"])
@pytest.mark.parametrize("mode", MODE_PARAMS)
def test_the_agent_runs_on_the_interactions_upstream(mode: str, streamed: bool) -> None:
    settings, run_options = MODES[mode]
    run, fake = _interactions_agent_run(settings, streamed=streamed, **run_options)
    assert run.result.final_output == ANSWER
    if streamed:
        assert "".join(run.deltas) == ANSWER
    assert run.cities == ["Paris"]
    first, second = (r.json for r in fake.requests if r.method == "POST")
    assert first["model"] == G3
    assert [t["name"] for t in first["tools"]] == ["get_weather"]
    result = second["input"][-1]
    assert result["type"] == "function_result"
    assert result["call_id"] == "fc-paris-1"
    assert "18 C and sunny in Paris" in str(result["result"])
    if mode == "previous_response_id":  # Google has turn 1: only the tool's output goes
        assert second["previous_interaction_id"] == fake.interaction_ids[0]
        assert [step["type"] for step in second["input"]] == ["function_result"]
    else:  # the whole conversation, the call after its signed thought
        assert "previous_interaction_id" not in second
        kinds = [step["type"] for step in second["input"]]
        call = kinds.index("function_call")
        assert kinds[call - 1] == "thought"
        assert second["input"][call - 1]["signature"] == THOUGHT_SIGNATURE
    assert first["store"] is (mode != "stateless")
