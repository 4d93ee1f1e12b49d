"""``check_interaction_body`` refuses what Google refuses, judged against google-genai's
strict verdict on the same bodies (its types, with unknown keys, variants and values
refused), plus the conversation rules no type states."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interactions_judge import strict_problems
from strategies import PROPERTIES, examples

from rxgem.testing import check_interaction_body

MODEL = "gemini-3-flash-preview"

GOOD: dict[str, Any] = {
    "model": MODEL,
    "input": [
        {"type": "user_input", "content": [{"type": "text", "text": "weather?"}]},
        {"type": "thought", "signature": "c2ln", "summary": [{"type": "text", "text": "hm"}]},
        {"type": "function_call", "id": "c1", "name": "look", "arguments": {"q": "x"}},
        {"type": "function_result", "call_id": "c1", "name": "look", "result": "sunny"},
        {"type": "function_result", "call_id": "c1", "result": [{"type": "text", "text": "x"}]},
        {"type": "model_output", "content": [{"type": "text", "text": "Sunny."}]},
        {
            "type": "user_input",
            "content": [
                {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
                {"type": "document", "uri": "https://x.test/a.pdf", "mime_type": "application/pdf"},
            ],
        },
        {"type": "google_search_call", "id": "s1", "arguments": {"queries": ["q"]}},
        {"type": "google_search_result", "call_id": "s1", "result": []},
    ],
    "system_instruction": "Be brief.",
    "tools": [
        {"type": "function", "name": "look", "description": "d", "parameters": {"type": "object"}},
        {"type": "google_search"},
        {"type": "code_execution"},
    ],
    "generation_config": {
        "temperature": 0.5,
        "top_p": 0.9,
        "seed": 1,
        "max_output_tokens": 100,
        "stop_sequences": ["END"],
        "thinking_level": "high",
        "thinking_summaries": "auto",
        "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["look"]}},
    },
    "response_format": {"type": "text", "mime_type": "application/json", "schema": {}},
    "stream": True,
    "store": False,
}


def _set(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    if value is _DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


_DROP = object()

# (what, path, value): each a body google-genai refuses strictly
REFUSED = [
    ("unknown top-level key", ("temperature",), 1),
    ("no model", ("model",), _DROP),
    ("model and agent", ("agent",), "deep-research"),
    ("unknown step type", ("input", 0, "type"), "user_said"),
    ("unknown step key", ("input", 2, "signature"), "c2ln"),
    ("function_call without id", ("input", 2, "id"), _DROP),
    ("function_call without name", ("input", 2, "name"), _DROP),
    ("function_call without arguments", ("input", 2, "arguments"), _DROP),
    ("arguments not an object", ("input", 2, "arguments"), "{}"),
    ("function_result without call_id", ("input", 3, "call_id"), _DROP),
    ("function_result without result", ("input", 3, "result"), _DROP),
    ("is_error not a bool", ("input", 3, "is_error"), "maybe"),
    ("unknown content type", ("input", 0, "content", 0, "type"), "markdown"),
    ("unknown content key", ("input", 0, "content", 0, "bold"), True),
    ("text without text", ("input", 0, "content", 0, "text"), _DROP),
    ("audio in a thought summary", ("input", 1, "summary", 0), {"type": "audio", "uri": "u"}),
    ("unknown tool type", ("tools", 1, "type"), "web_search"),
    ("unknown tool key", ("tools", 0, "strict"), True),
    ("unknown config key", ("generation_config", "candidate_count"), 2),
    ("thinking level", ("generation_config", "thinking_level"), "max"),
    ("thinking summaries", ("generation_config", "thinking_summaries"), "detailed"),
    ("tool choice", ("generation_config", "tool_choice"), "required"),
    ("tool choice mode", ("generation_config", "tool_choice", "allowed_tools", "mode"), "all"),
    ("unknown format type", ("response_format", "type"), "json_schema"),
    ("unknown format key", ("response_format", "strict"), True),
    ("stream not a bool", ("stream",), "maybe"),
    ("system instruction not a string", ("system_instruction",), {"parts": []}),
    ("input of a number", ("input",), 3),
    ("service tier", ("service_tier",), "auto"),
]


def test_the_good_body_is_good_for_both() -> None:
    assert strict_problems(GOOD) == []
    assert check_interaction_body(GOOD) == []


@pytest.mark.parametrize(("what", "path", "value"), REFUSED, ids=[r[0] for r in REFUSED])
def test_refused_like_google_genai_refuses(what: str, path: tuple[Any, ...], value: Any) -> None:
    body = _set(GOOD, path, value)
    assert strict_problems(body) != [], f"google-genai accepts {what}"
    problems = check_interaction_body(body)
    assert problems != [], f"not refused: {what}"


def test_problems_name_the_path() -> None:
    body = _set(GOOD, ("input", 2, "id"), _DROP)
    assert check_interaction_body(body)[0] == "input[2].id: required"
    body = _set(GOOD, ("tools", 0, "strict"), True)
    assert check_interaction_body(body) == ["tools[0].strict: unknown field"]


@pytest.mark.parametrize(
    "body",
    [
        {"model": MODEL, "input": "Hi"},
        {"model": MODEL, "input": {"type": "text", "text": "Hi"}},
        {"model": MODEL, "input": [{"type": "text", "text": "Hi"}]},
        {"agent": "deep-research-pro-preview", "input": "Find", "background": True},
        {"model": MODEL, "input": "Hi", "previous_interaction_id": "v1_x", "store": True},
        {"model": MODEL, "input": "Hi", "generation_config": {"tool_choice": "validated"}},
    ],
)
def test_other_accepted_shapes(body: dict[str, Any]) -> None:
    assert check_interaction_body(body) == []
    if "agent" not in body:
        assert strict_problems(body) == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (
            {
                "model": MODEL,
                "input": [{"type": "function_result", "call_id": "zz", "result": "x"}],
            },
            "input[0].call_id: answers no function_call step before it",
        ),
        (
            {"model": MODEL, "input": "x", "background": True, "store": False},
            "store: a background run must be stored: send store true or leave it out",
        ),
        (
            {"model": MODEL, "input": [{"type": "image", "mime_type": "image/png"}]},
            "input[0]: needs one of data or uri",
        ),
        (
            {"model": MODEL, "input": [{"type": "text", "text": "a"}, {"type": "thought"}]},
            "input: a list of steps or a list of contents, not a mix",
        ),
    ],
)
def test_conversation_rules_no_type_states(body: dict[str, Any], problem: str) -> None:
    assert problem in check_interaction_body(body)


def test_an_answer_to_a_stored_call_is_fine_when_continuing() -> None:
    body = {
        "model": MODEL,
        "previous_interaction_id": "v1_prev",
        "input": [{"type": "function_result", "call_id": "zz", "result": "x"}],
    }
    assert check_interaction_body(body) == []
    assert strict_problems(body) == []


def test_not_an_object() -> None:
    assert check_interaction_body([]) == ["body: must be an object"]


_ODD = st.sampled_from([None, "maybe", 3, 1.5, [], {}, {"type": "odd"}, "", True])


def _nodes(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into ``value`` (its objects' keys and its lists' indexes)."""
    found = [path] if path else []
    if type(value) is dict:
        for key, child in value.items():
            found += _nodes(child, (*path, key))
    elif type(value) is list:
        for i, child in enumerate(value):
            found += _nodes(child, (*path, i))
    return found


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    body = copy.deepcopy(GOOD)
    for _ in range(draw(st.integers(1, 3))):
        paths = _nodes(body)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["drop", "odd", "extra"]))
        if action == "extra":
            parent = _nodes(body) and path[:-1]
            node: Any = body
            for key in parent:
                node = node[key]
            if type(node) is dict:
                node["x_" + draw(st.sampled_from(["a", "b"]))] = 1
            continue
        body = _set(body, path, _DROP if action == "drop" else draw(_ODD))
    return body


@settings(PROPERTIES, max_examples=examples(300))
@given(mutated())
def test_what_google_genai_refuses_is_refused(body: dict[str, Any]) -> None:
    if strict_problems(body):
        assert check_interaction_body(body) != []
