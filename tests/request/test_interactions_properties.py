"""Any chat request gives an Interactions body google-genai accepts strictly, or a typed error.

Seeded (the suite's ``rxgem`` Hypothesis profile) and bounded by the example count.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from interactions_judge import strict_problems
from strategies import PROPERTIES, args_objects, examples

from rxgem import InvalidRequestError
from rxgem.core.responses import CarriedSignature, encode_signatures
from rxgem.request import chat_to_interaction, responses_to_interaction
from rxgem.testing import check_interaction_body

MODELS = st.sampled_from(
    ["gemini-3-flash-preview", "gemini-3.1-pro-preview", "gemini-2.5-flash", "gemini-flash-latest"]
)
TEXT = st.text(max_size=12)
NAMES = st.sampled_from(["look", "add", "ns.find", "look", "add", "ns.find", "bad name"])
IMAGES = st.sampled_from(
    [
        "data:image/png;base64,iVBORw0KGgo=",
        "data:image/jpeg;base64,/9j/4AAQ",
        "https://x.test/cat.webp",
        "https://x.test/scan.pdf",
        "https://x.test/image",
        "data:image/webp;base64,UklGRg==",
        "data:image/svg+xml;base64,PHN2Zz4=",
        "data:text/plain;base64,aGk=",
        "data:image/png,notbase64",
    ]
)
ARGUMENTS = st.integers(0, 19).flatmap(
    lambda n: st.just("[1]") if n == 0 else args_objects.map(json.dumps)
)
SCHEMA = {
    "type": "object",
    "properties": {"q": {"type": ["string", "null"]}, "n": {"const": 3}},
    "required": ["q"],
    "additionalProperties": False,
}


@st.composite
def user_messages(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return {"role": "user", "content": draw(TEXT)}
    parts: list[dict[str, Any]] = [{"type": "text", "text": draw(TEXT)}]
    for url in draw(st.lists(IMAGES, max_size=2)):
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return {"role": "user", "content": parts}


@st.composite
def tool_turns(draw: st.DrawFn, turn: int) -> list[dict[str, Any]]:
    """An assistant turn of calls (some signed) and, mostly, a result for each."""
    count = draw(st.integers(1, 3))
    calls = []
    for n in range(count):
        call: dict[str, Any] = {
            "id": f"call_{turn}_{n}",
            "type": "function",
            "function": {"name": draw(NAMES), "arguments": draw(ARGUMENTS)},
        }
        if draw(st.booleans()):
            call["extra_content"] = {"google": {"thought_signature": draw(TEXT) or "sig"}}
        calls.append(call)
    message: dict[str, Any] = {"role": "assistant", "content": draw(st.none() | TEXT)}
    message["tool_calls"] = calls
    results = [
        {"role": "tool", "tool_call_id": call["id"], "content": draw(TEXT)}
        for call in calls
        if draw(st.integers(0, 19)) > 0
    ]
    return [message, *draw(st.permutations(results))]


@st.composite
def chat_bodies(draw: st.DrawFn) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": "Be"})
    for turn in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["user", "assistant", *["tools"] * 3, *["user"] * 6, "odd"]))
        if kind == "user":
            messages.append(draw(user_messages()))
        elif kind == "assistant":
            said: dict[str, Any] = {"role": "assistant", "content": draw(TEXT)}
            if draw(st.booleans()):
                said["extra_content"] = {"google": {"thought_signature": "textsig"}}
            messages.append(said)
        elif kind == "tools":
            messages.extend(draw(tool_turns(turn)))
        else:
            messages.append(draw(st.sampled_from([{"role": "robot"}, {"role": "user"}, "x"])))
    messages.append(draw(user_messages()))
    body: dict[str, Any] = {"model": draw(MODELS), "messages": messages}
    optional = {
        "temperature": st.floats(0, 2) | st.just("hot"),
        "top_p": st.floats(0, 1),
        "max_tokens": st.integers(0, 100),
        "stop": st.sampled_from(["X", ["A", "B"], 3]),
        "seed": st.integers(0, 9),
        "n": st.integers(1, 2),
        "reasoning_effort": st.sampled_from(
            ["none", "minimal", "low", "medium", "high", "xhigh", "max"]
        ),
        "tool_choice": st.sampled_from(
            ["auto", "none", "required", {"type": "function", "function": {"name": "look"}}, 7]
        ),
        "tools": st.just(
            [
                {"type": "function", "function": {"name": "look", "parameters": SCHEMA}},
                {"type": "function", "function": {"name": "add", "description": "Adds"}},
            ]
        ),
        "response_format": st.sampled_from(
            [
                {"type": "json_object"},
                {"type": "json_schema", "json_schema": {"name": "s", "schema": SCHEMA}},
                {"type": "text"},
                {"type": "yaml"},
            ]
        ),
        "stream": st.booleans(),
        "web_search_options": st.just({}),
    }
    for key, values in optional.items():
        if draw(st.integers(0, 4)) == 0:
            body[key] = draw(values)
    if draw(st.integers(0, 9)) == 0:  # fields Interactions has no counterpart for
        key = draw(st.sampled_from(["presence_penalty", "logit_bias", "logprobs"]))
        body[key] = {"presence_penalty": 0.5, "logit_bias": {"1": 1}, "logprobs": True}[key]
    return body


@settings(PROPERTIES, max_examples=examples(150))
@given(chat_bodies(), st.sampled_from(["error", "warn"]), st.booleans())
def test_a_chat_request_gives_a_strictly_valid_body_or_a_typed_error(
    body: dict[str, Any], policy: Any, store: bool
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = chat_to_interaction(body, unsupported=policy, store=store)
        except InvalidRequestError:
            return
    assert strict_problems(out) == []
    assert check_interaction_body(out) == []
    assert out["store"] is store


@settings(PROPERTIES, max_examples=examples(60))
@given(chat_bodies())
def test_the_same_conversation_as_responses_input_is_strictly_valid_too(
    body: dict[str, Any],
) -> None:
    items: list[dict[str, Any]] = []
    for message in body["messages"]:
        if type(message) is dict and message.get("role") in ("user", "system", "developer"):
            content = message.get("content")
            if type(content) is str:
                items.append({"role": message["role"], "content": content})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = responses_to_interaction({"model": body["model"], "input": items})
        except InvalidRequestError:
            return
    assert strict_problems(out.body) == []
    assert check_interaction_body(out.body) == []


def _reasoning(kind: str, call_id: str | None, signature: str) -> dict[str, Any]:
    carried = [CarriedSignature(kind, call_id, signature)]  # type: ignore[arg-type]
    return {"type": "reasoning", "summary": [], "encrypted_content": encode_signatures(carried)}


@st.composite
def responses_items(draw: st.DrawFn) -> list[Any]:
    items: list[Any] = []
    for turn in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["user", "said", "calls", "record", "odd", "user"]))
        if kind == "user":
            parts: list[dict[str, Any]] = [{"type": "input_text", "text": draw(TEXT)}]
            for url in draw(st.lists(IMAGES, max_size=1)):
                parts.append({"type": "input_image", "image_url": url})
            items.append({"role": "user", "content": parts})
        elif kind == "said":
            if draw(st.booleans()):
                items.append(_reasoning("text", None, draw(TEXT) or "t"))
            content = [{"type": "output_text", "text": draw(TEXT)}]
            items.append({"type": "message", "role": "assistant", "content": content})
        elif kind == "calls":
            ids = [f"call_{turn}_{n}" for n in range(draw(st.integers(1, 3)))]
            if draw(st.booleans()):
                items.append(_reasoning("call", ids[0], draw(TEXT) or "s"))
            for call_id in ids:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call_id,
                        "name": draw(NAMES),
                        "arguments": draw(ARGUMENTS),
                    }
                )
            outputs = [
                {"type": "function_call_output", "call_id": call_id, "output": draw(TEXT)}
                for call_id in ids
                if draw(st.integers(0, 19)) > 0
            ]
            items.extend(draw(st.permutations(outputs)))
        elif kind == "record":
            items.append(
                draw(
                    st.sampled_from(
                        [
                            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
                            {"type": "code_interpreter_call", "id": "ci_1", "code": "1"},
                        ]
                    )
                )
            )
        else:
            items.append(draw(st.sampled_from([{"type": "hologram"}, {"role": "robot"}, 3])))
    items.append({"role": "user", "content": draw(TEXT)})
    return items


@st.composite
def responses_bodies(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"model": draw(MODELS), "input": draw(responses_items())}
    optional = {
        "instructions": TEXT,
        "max_output_tokens": st.integers(0, 100),
        "temperature": st.floats(0, 2),
        "reasoning": st.sampled_from(
            [{"effort": "low"}, {"effort": "high", "summary": "auto"}, {"summary": None}]
        ),
        "text": st.sampled_from(
            [
                {"format": {"type": "json_schema", "name": "s", "schema": SCHEMA}},
                {"format": {"type": "json_object"}},
                {"verbosity": "low"},
            ]
        ),
        "tools": st.just(
            [
                {"type": "function", "name": "look", "parameters": SCHEMA},
                {"type": "function", "name": "add"},
                {"type": "web_search"},
                {"type": "custom", "name": "apply_patch"},
            ]
        ),
        "tool_choice": st.sampled_from(["auto", "required", {"type": "function", "name": "add"}]),
        "background": st.booleans(),
        "stream": st.booleans(),
        "store": st.booleans(),
    }
    for key, values in optional.items():
        if draw(st.integers(0, 3)) == 0:
            body[key] = draw(values)
    return body


@settings(PROPERTIES, max_examples=examples(150))
@given(responses_bodies(), st.booleans(), st.booleans(), st.sampled_from(["error", "warn"]))
def test_a_responses_request_gives_a_strictly_valid_body_or_a_typed_error(
    body: dict[str, Any], store: bool, continued: bool, policy: Any
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = responses_to_interaction(
                body,
                store=store,
                previous_interaction_id="v1_prev" if continued else None,
                unsupported=policy,
            )
        except InvalidRequestError:
            return
    assert strict_problems(out.body) == []
    assert check_interaction_body(out.body) == []
