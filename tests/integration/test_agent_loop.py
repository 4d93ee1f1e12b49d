"""An agent loop through the real ``openai`` SDK, answered by a strict FakeGemini.

Each turn sends the history with ``rxgem.chat_completions`` (``stream: true``) to a
FakeGemini in strict mode (it answers Google's 400 to any request Gemini would refuse),
feeds the chunks to the SDK's ``ChatCompletionStreamState``, appends the final assistant
message as the SDK gives it (``model_dump``) and the tool results, and goes again. Gemini's
answers are written with ``rxgem.testing``'s builders, signed as Gemini signs them: a
parallel step on its first call only, each sequential step on its call.
"""

from __future__ import annotations

import base64
import copy
import json
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk as SDKChunk

import rxgem
from rxgem.request import SignatureWarning
from rxgem.request._signatures import PLACEHOLDER
from rxgem.testing import (
    FakeGemini,
    call,
    event,
    finish,
    gemini_request_problems,
    text,
    thought,
    usage,
)

G3 = "gemini-3-pro-preview"
G25 = "gemini-2.5-flash"
QUESTION = "How much warmer is Tokyo than Paris right now?"


def _signature(label: str) -> str:
    return base64.b64encode(f"signature of {label}".encode()).decode()


SIG_PARALLEL = _signature("the parallel step")
SIG_SEQUENTIAL = _signature("the sequential step")
SIG_ANSWER = _signature("the answer")

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The temperature in a city, in degrees Celsius.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    },
    {
        "type": "function",
        "function": {
            "name": "temperature_gap",
            "description": "How much warmer b is than a.",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "additionalProperties": False,
            },
            "strict": True,
        },
    },
]
CELSIUS = {"Paris": 18, "Tokyo": 24}
RUN: dict[str, Callable[..., dict[str, Any]]] = {
    "get_weather": lambda city: {"city": city, "celsius": CELSIUS[city]},
    "temperature_gap": lambda a, b: {"degrees": b - a},
}


def gemini_answers(ids: bool) -> list[bytes]:
    """Gemini's three answers: a parallel step, a sequential step, the final text.

    With ``ids`` (Gemini 3), each call carries Gemini's id; Gemini 2.5 sends none.
    """

    def id_(value: str) -> str | None:
        return value if ids else None

    parallel = (
        event(thought("Two cities: I will look both up at once."), usage(31, 0, thoughts=9))
        + event(
            call("get_weather", city="Paris", id=id_("fc-paris"), sig=SIG_PARALLEL),
            call("get_weather", city="Tokyo", id=id_("fc-tokyo")),  # unsigned, as Gemini does
        )
        + event(finish("STOP"), usage(31, 18, thoughts=9))
    )
    sequential = event(
        call("temperature_gap", a=18, b=24, id=id_("fc-gap"), sig=SIG_SEQUENTIAL)
    ) + event(finish("STOP"), usage(70, 9, thoughts=4))
    answer = (
        event(text("Tokyo is 6 °C "))
        + event(text("warmer than Paris.", sig=SIG_ANSWER))
        + event(finish("STOP"), usage(90, 11))
    )
    return [parallel, sequential, answer]


def assistant_message(message: Any) -> dict[str, Any]:
    """The SDK's final message as a history entry (what an application appends)."""
    data: dict[str, Any] = message.model_dump(exclude_none=True)
    data.pop("parsed", None)
    for tool_call in data.get("tool_calls") or []:
        tool_call["function"].pop("parsed_arguments", None)
    return data


def lose_signatures(message: dict[str, Any]) -> None:
    """What LangChain's ChatOpenAI does to a message: ``extra_content`` is gone."""
    message.pop("extra_content", None)
    for tool_call in message.get("tool_calls") or []:
        tool_call.pop("extra_content", None)


def one_turn(fake: FakeGemini, model: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    """Send the history, accumulate the streamed answer with the SDK, return the message."""
    body = {
        "model": model,
        "messages": history,
        "tools": TOOLS,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    before = copy.deepcopy(body)
    source = rxgem.chat_completions(
        body, base_url=fake.base_url, api_key="test-key", include_thoughts=True
    )
    assert body == before  # the caller's history is not touched
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState(
        input_tools=TOOLS  # type: ignore[arg-type]
    )
    for chunk in rxgem.iterate(source):
        for _event in state.handle_chunk(SDKChunk.model_validate(chunk.to_dict())):
            pass
    completion = state.get_final_completion()
    assert completion.usage is not None
    return assistant_message(completion.choices[0].message)


def agent_loop(
    fake: FakeGemini, model: str, *, keep_signatures: bool = True
) -> list[dict[str, Any]]:
    """Turns until the model answers without calling a tool; the whole history."""
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": QUESTION},
    ]
    for _ in range(5):
        message = one_turn(fake, model, history)
        if not keep_signatures:
            lose_signatures(message)
        history.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return history
        for tool_call in reversed(calls):  # results come back in any order
            function = tool_call["function"]
            result = RUN[function["name"]](**json.loads(function["arguments"]))
            history.append(
                {"role": "tool", "tool_call_id": tool_call["id"], "content": json.dumps(result)}
            )
    raise AssertionError("the loop did not end")


def sent_contents(fake: FakeGemini, model: str) -> list[list[dict[str, Any]]]:
    """The ``contents`` of every request, each checked to pass Gemini's rules."""
    out = []
    for request in fake.requests:
        assert request.path == f"/v1beta/models/{model}:streamGenerateContent"
        assert gemini_request_problems(request.json, model=model) == []
        out.append(request.json["contents"])
    return out


def function_call(name: str, args: dict[str, Any], call_id: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "args": args}
    if call_id is not None:
        body["id"] = call_id
    return {"functionCall": body}


def function_response(name: str, result: dict[str, Any], call_id: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "response": result}
    if call_id is not None:
        body["id"] = call_id
    return {"functionResponse": body}


@pytest.mark.parametrize(("model", "gemini_ids"), [(G3, True), (G25, False)])
def test_a_three_turn_agent_loop_passes_strict_gemini(model: str, gemini_ids: bool) -> None:
    with FakeGemini(*gemini_answers(gemini_ids), strict=True) as fake:
        history = agent_loop(fake, model)
        first, second, third = sent_contents(fake, model)

    # the history, as the SDK made it
    roles = [m["role"] for m in history]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    parallel, sequential, answer = history[2], history[5], history[7]
    ids = [c["id"] for c in (*parallel["tool_calls"], *sequential["tool_calls"])]
    if gemini_ids:
        assert ids == ["fc-paris", "fc-tokyo", "fc-gap"]
    else:
        assert all(i.startswith("call_") for i in ids)
        assert len(set(ids)) == 3
    signatures = [
        c.get("extra_content", {}).get("google", {}).get("thought_signature")
        for c in (*parallel["tool_calls"], *sequential["tool_calls"])
    ]
    assert signatures == [SIG_PARALLEL, None, SIG_SEQUENTIAL]
    assert answer["content"] == "Tokyo is 6 °C warmer than Paris."
    assert answer["extra_content"]["google"]["thought_signature"] == SIG_ANSWER
    assert "tool_calls" not in answer

    # what Gemini got: each step back with its signature where Gemini put it, the
    # responses grouped per step in the order of its calls, named after them
    def id_(value: str) -> str | None:
        return value if gemini_ids else None

    question = {"role": "user", "parts": [{"text": QUESTION}]}
    step_1 = {
        "role": "model",
        "parts": [
            {
                **function_call("get_weather", {"city": "Paris"}, id_("fc-paris")),
                "thoughtSignature": SIG_PARALLEL,
            },
            function_call("get_weather", {"city": "Tokyo"}, id_("fc-tokyo")),
        ],
    }
    results_1 = {
        "role": "user",
        "parts": [
            function_response("get_weather", {"city": "Paris", "celsius": 18}, id_("fc-paris")),
            function_response("get_weather", {"city": "Tokyo", "celsius": 24}, id_("fc-tokyo")),
        ],
    }
    step_2 = {
        "role": "model",
        "parts": [
            {
                **function_call("temperature_gap", {"a": 18, "b": 24}, id_("fc-gap")),
                "thoughtSignature": SIG_SEQUENTIAL,
            }
        ],
    }
    results_2 = {
        "role": "user",
        "parts": [function_response("temperature_gap", {"degrees": 6}, id_("fc-gap"))],
    }
    assert first == [question]
    assert second == [question, step_1, results_1]
    assert third == [question, step_1, results_1, step_2, results_2]


@pytest.mark.parametrize("model", [G3, G25])
def test_a_client_that_loses_the_signatures_still_passes(model: str) -> None:
    with FakeGemini(*gemini_answers(model == G3), strict=True) as fake:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            history = agent_loop(fake, model, keep_signatures=False)
        _, second, third = sent_contents(fake, model)
    assert history[-1]["content"] == "Tokyo is 6 °C warmer than Paris."
    lost = [w for w in caught if issubclass(w.category, SignatureWarning)]

    def signatures(content: dict[str, Any]) -> list[str | None]:
        return [part.get("thoughtSignature") for part in content["parts"]]

    if model == G3:
        # each step of the current turn: the placeholder on its first call, and only there
        assert signatures(second[1]) == [PLACEHOLDER, None]
        assert signatures(third[1]) == [PLACEHOLDER, None]
        assert signatures(third[3]) == [PLACEHOLDER]
        assert len(lost) == 3  # step 1 in the second request, steps 1 and 2 in the third
        assert "get_weather" in str(lost[0].message)
    else:  # Gemini 2.5 does not check signatures: nothing is made up
        assert signatures(second[1]) == [None, None]
        assert signatures(third[3]) == [None]
        assert lost == []


def test_a_missing_tool_result_is_refused_before_anything_is_sent() -> None:
    with FakeGemini(*gemini_answers(True), strict=True) as fake:
        history: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
        message = one_turn(fake, G3, history)
        paris, _tokyo = message["tool_calls"]
        history += [
            message,
            {"role": "tool", "tool_call_id": paris["id"], "content": '{"celsius": 18}'},
        ]
        body = {"model": G3, "messages": history, "tools": TOOLS, "stream": True}
        with pytest.raises(rxgem.InvalidRequestError) as caught:
            rxgem.chat_completions(body, base_url=fake.base_url, api_key="test-key")
        assert len(fake.requests) == 1  # the first turn's only
    assert caught.value.where == "messages[1].tool_calls[1]"
