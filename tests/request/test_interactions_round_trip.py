"""An Interactions answer → rxgem's chunks (and Responses events) → the client's history →
the next Interactions request: every thought signature goes back unmodified, as a thought
step before what it signed, and every call with its id and arguments.

The answers are the recorded streams of ``tests/data/interactions``; the history is what
the ``openai`` SDK accumulates (chat) or the final Response's ``output`` (Responses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from interactions_judge import strict_problems
from pipeline_harness import run_converter, sdk_accumulate
from responses_judge import run_converter as run_responses
from responses_judge import sdk_final

from rxgem.request import chat_to_interaction, responses_to_interaction
from rxgem.request._signatures import PLACEHOLDER
from rxgem.testing import check_interaction_body

DATA = Path(__file__).resolve().parents[1] / "data" / "interactions"
STREAMS = [
    path
    for path in sorted(DATA.rglob("*.chunks.txt"))
    if "old" not in path.name and "status-" not in path.name and "error" not in path.name
]
MODEL = "gemini-3-flash-preview"


def _recorded(path: Path) -> tuple[list[str], list[tuple[str, str, Any]]]:
    """The signatures of the recording's steps and its calls, in order."""
    signatures: list[str] = []
    calls: dict[int, list[Any]] = {}
    started: dict[int, Any] = {}
    for line in path.read_text("utf-8").splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        kind = event.get("event_type")
        if kind == "step.start":
            step = event["step"]
            if step.get("signature"):
                signatures.append(step["signature"])
            if step.get("type") == "function_call":
                calls[event["index"]] = [step["id"], step["name"], ""]
                started[event["index"]] = step.get("arguments") or {}
        elif kind == "step.delta":
            delta = event["delta"]
            if delta.get("type") == "thought_signature" and delta.get("signature"):
                signatures.append(delta["signature"])
            if delta.get("type") == "arguments_delta" and event["index"] in calls:
                calls[event["index"]][2] += delta.get("arguments", "")
    return signatures, [
        (call_id, name, json.loads(args) if args else started[index])
        for index, (call_id, name, args) in calls.items()
    ]


def _sent(steps: list[dict[str, Any]]) -> tuple[list[str], list[tuple[str, str, Any]]]:
    signatures = [
        s["signature"]
        for s in steps
        if s["type"] == "thought" and s.get("signature") != PLACEHOLDER
    ]
    calls = [(s["id"], s["name"], s["arguments"]) for s in steps if s["type"] == "function_call"]
    return signatures, calls


def _valid(body: dict[str, Any]) -> None:
    assert strict_problems(body) == []
    assert check_interaction_body(body) == []


def test_streams_with_signatures_are_here() -> None:
    assert sum(1 for path in STREAMS if _recorded(path)[0]) >= 3


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_chat_history_sends_every_signature_back(path: Path) -> None:
    signatures, calls = _recorded(path)
    chunks, error = run_converter(path.read_bytes(), upstream="interactions")
    assert error is None
    message = sdk_accumulate(chunks).choices[0].message.model_dump(exclude_none=True)
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
    assert _sent(body["input"]) == (signatures, calls)


@pytest.mark.parametrize("path", STREAMS, ids=lambda p: p.name)
def test_responses_history_sends_every_signature_back(path: Path) -> None:
    signatures, calls = _recorded(path)
    events, error = run_responses(
        path.read_bytes(), upstream="interactions", include_encrypted_reasoning=True
    )
    assert error is None
    output = [item.to_dict() for item in sdk_final(events).output]
    items: list[dict[str, Any]] = [{"role": "user", "content": "Go."}, *output]
    items += [
        {"type": "function_call_output", "call_id": item["call_id"], "output": "done"}
        for item in output
        if item["type"] == "function_call"
    ]
    if not any(item["type"] == "function_call" for item in output):
        items.append({"role": "user", "content": "And then?"})
    request = responses_to_interaction({"model": MODEL, "input": items})
    _valid(request.body)
    assert _sent(request.body["input"]) == (signatures, calls)
