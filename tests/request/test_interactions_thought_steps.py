"""Every thought step of an Interactions answer goes back in its place: through the chat
chunks (as the ``openai`` SDK accumulates them) and the Responses output (streamed, and
stored by the server's records) into the next request, the same ``thought`` steps, their
signatures unmodified, in order among the text and the calls."""

from __future__ import annotations

import json
from typing import Any

import pytest
from interactions_judge import strict_problems
from pipeline_harness import run_converter, sdk_accumulate
from responses_judge import run_converter as run_responses
from responses_judge import sdk_final

from rxgem.converter import ResponsesConverter
from rxgem.request import chat_to_interaction, responses_to_interaction
from rxgem.store import history_items, stored_inputs, stored_turn
from rxgem.testing import check_interaction_body

MODEL = "gemini-3-flash-preview"


def _stream(*steps: dict[str, Any], status: str = "completed") -> bytes:
    """An Interactions stream of ``steps`` (a thought's signature in a delta, text in two
    deltas, a call's arguments in one)."""
    events: list[dict[str, Any]] = [
        {"event_type": "interaction.created", "interaction": {"id": "v1_t", "model": MODEL}}
    ]
    for index, step in enumerate(steps):
        kind = step["type"]
        if kind == "thought":
            events.append({"event_type": "step.start", "index": index, "step": {"type": kind}})
            delta = {"type": "thought_signature", "signature": step["signature"]}
            events.append({"event_type": "step.delta", "index": index, "delta": delta})
        elif kind == "model_output":
            events.append({"event_type": "step.start", "index": index, "step": {"type": kind}})
            for piece in (step["text"][:3], step["text"][3:]):
                delta = {"type": "text", "text": piece}
                events.append({"event_type": "step.delta", "index": index, "delta": delta})
        else:
            start = {"type": kind, "id": step["id"], "name": step["name"], "arguments": {}}
            events.append({"event_type": "step.start", "index": index, "step": start})
            delta = {"type": "arguments_delta", "arguments": json.dumps(step["arguments"])}
            events.append({"event_type": "step.delta", "index": index, "delta": delta})
        events.append({"event_type": "step.stop", "index": index})
    done = {"id": "v1_t", "status": status, "model": MODEL}
    events.append({"event_type": "interaction.completed", "interaction": done})
    return "".join(json.dumps(event) + "\n" for event in events).encode()


def _thought(signature: str) -> dict[str, Any]:
    return {"type": "thought", "signature": signature}


def _text(text: str) -> dict[str, Any]:
    return {"type": "model_output", "text": text}


def _call(call_id: str) -> dict[str, Any]:
    return {"type": "function_call", "id": call_id, "name": "lookup", "arguments": {"q": call_id}}


TURNS = {
    "text, thought, text": [
        _thought("c2lnQQ=="),
        _text("First part. "),
        _thought("c2lnQg=="),
        _text("Second part."),
    ],
    "two thoughts before a call": [_thought("c2lnQQ=="), _thought("c2lnQg=="), _call("c1")],
    "a thought, text, a call": [_thought("c2lnQQ=="), _text("Let me look. "), _call("c1")],
    "thought, call, thought, call": [
        _thought("c2lnQQ=="),
        _call("c1"),
        _thought("c2lnQg=="),
        _call("c2"),
    ],
    "text, then two thoughts at the end": [
        _text("Done. "),
        _thought("c2lnQQ=="),
        _thought("c2lnQg=="),
    ],
}


def _expected(steps: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The model's steps as they must come back: thoughts with their signatures, the text
    of a run of ``model_output`` steps joined (one message holds it), the calls."""
    out: list[tuple[str, Any]] = []
    for step in steps:
        if step["type"] == "thought":
            out.append(("thought", step["signature"]))
        elif step["type"] == "model_output":
            if out and out[-1][0] == "model_output":
                out[-1] = ("model_output", out[-1][1] + step["text"])
            else:
                out.append(("model_output", step["text"]))
        else:
            out.append(("function_call", (step["id"], step["arguments"])))
    return out


def _model_steps(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The model's steps of the first turn of a request body (after its first user step)."""
    out: list[tuple[str, Any]] = []
    for step in body["input"][1:]:
        kind = step["type"]
        if kind == "thought":
            out.append(("thought", step["signature"]))
        elif kind == "model_output":
            out.append(("model_output", "".join(c["text"] for c in step["content"])))
        elif kind == "function_call":
            out.append(("function_call", (step["id"], step["arguments"])))
        else:
            break
    return out


def _valid(body: dict[str, Any]) -> None:
    assert strict_problems(body) == []
    assert check_interaction_body(body) == []


def _next_items(output: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [{"role": "user", "content": "Go."}, *output]
    items += [
        {"type": "function_call_output", "call_id": item["call_id"], "output": "done"}
        for item in output
        if item["type"] == "function_call"
    ]
    if not any(item["type"] == "function_call" for item in output):
        items.append({"role": "user", "content": "And then?"})
    return items


@pytest.mark.parametrize("name", TURNS)
def test_chat_sends_every_thought_step_back_in_its_place(name: str) -> None:
    steps = TURNS[name]
    chunks, error = run_converter(_stream(*steps), upstream="interactions")
    assert error is None
    message = sdk_accumulate(chunks, tools=["lookup"]).choices[0].message
    message = message.model_dump(exclude_none=True)
    message.pop("parsed", None)
    for call in message.get("tool_calls") or []:
        call["function"].pop("parsed_arguments", None)
    history = [{"role": "user", "content": "Go."}, message]
    history += [
        {"role": "tool", "tool_call_id": call["id"], "content": "done"}
        for call in message.get("tool_calls") or []
    ]
    if not message.get("tool_calls"):
        history.append({"role": "user", "content": "And then?"})
    body = chat_to_interaction({"model": MODEL, "messages": history})
    _valid(body)
    assert _model_steps(body) == _expected(steps)


@pytest.mark.parametrize("include", [True, False], ids=["encrypted_content", "stored"])
@pytest.mark.parametrize("name", TURNS)
def test_responses_sends_every_thought_step_back_in_its_place(name: str, include: bool) -> None:
    steps = TURNS[name]
    converter = ResponsesConverter(upstream="interactions", include_encrypted_reasoning=include)
    events = [*converter.feed(_stream(*steps)), *converter.close()]
    response = sdk_final(events)
    assert response.status == "completed"
    if include:  # the client keeps the output and sends it all back
        request = responses_to_interaction(
            {"model": MODEL, "input": _next_items([item.to_dict() for item in response.output])}
        )
    else:  # the server keeps it: previous_response_id replays the stored turn
        assert converter.response is not None
        inputs = stored_inputs(
            [
                {
                    "type": "message",
                    "role": "user",
                    "id": "msg_1",
                    "content": [{"type": "input_text", "text": "Go."}],
                }
            ]
        )
        turn = stored_turn(
            converter.response, "owner", inputs, converter.signatures, placed=converter.placed
        )
        history = history_items([turn])
        follow = [
            {"type": "function_call_output", "call_id": item["call_id"], "output": "done"}
            for item in (i.to_dict() for i in response.output)
            if item["type"] == "function_call"
        ] or [{"role": "user", "content": "And then?"}]
        request = responses_to_interaction(
            {"model": MODEL, "input": follow, "previous_response_id": turn.id},
            history=history,
        )
    _valid(request.body)
    assert _model_steps(request.body) == _expected(steps)


def test_a_responses_thought_step_is_a_reasoning_item_of_its_own() -> None:
    events, error = run_responses(
        _stream(*TURNS["text, thought, text"]),
        upstream="interactions",
        include_encrypted_reasoning=True,
    )
    assert error is None
    output = [item.to_dict() for item in sdk_final(events).output]
    signed = [
        item for item in output if item["type"] != "reasoning" or item.get("encrypted_content")
    ]
    # each thought step's own item where it stood (the empty carrier of the calls'
    # signatures, which this turn has none of, aside)
    assert [item["type"] for item in signed] == ["reasoning", "message", "reasoning", "message"]
    assert [item["content"][0]["text"] for item in signed if item["type"] == "message"] == [
        "First part. ",
        "Second part.",
    ]
