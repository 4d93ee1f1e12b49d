"""Every warning a translation gives points at the caller's line, not inside rxgem: a user
reading ``UnsupportedWarning`` (or running with ``-W error``) is sent to their own request."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

from rxgem.request import (
    PlaceholderWarning,
    SchemaWarning,
    SignatureWarning,
    UnsupportedWarning,
    chat_to_interaction,
    responses_to_gemini_request,
    responses_to_interaction,
    to_gemini_request,
)

G3 = "gemini-3-flash-preview"
HI = [{"role": "user", "content": "hi"}]
CONST_TOOL = {
    "type": "function",
    "function": {
        "name": "f",
        "parameters": {"type": "object", "properties": {"a": {"const": 1}}},
    },
}
UNSIGNED_TURN = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "seen"},
]
FOREIGN_REASONING = {
    "type": "reasoning",
    "id": "rs_1",
    "summary": [],
    "encrypted_content": "gAAAAABo...",
}

CASES: list[tuple[str, Callable[[], Any], type[Warning]]] = [
    (
        "chat-unsupported",
        lambda: to_gemini_request(
            {"model": G3, "messages": HI, "logit_bias": {"1": 1}}, unsupported="warn"
        ),
        UnsupportedWarning,
    ),
    (
        "chat-schema",
        lambda: to_gemini_request(
            {"model": G3, "messages": HI, "tools": [CONST_TOOL]}, api="vertex"
        ),
        SchemaWarning,
    ),
    (
        "chat-effort",
        lambda: to_gemini_request(
            {"model": "gemini-2.5-pro", "messages": HI, "reasoning_effort": "none"}
        ),
        UnsupportedWarning,
    ),
    (
        "chat-placeholder",
        lambda: to_gemini_request({"model": G3, "messages": UNSIGNED_TURN}),
        PlaceholderWarning,
    ),
    (
        "responses-schema",
        lambda: responses_to_gemini_request(
            {"model": G3, "input": "x", "tools": [{**CONST_TOOL["function"], "type": "function"}]},
            api="vertex",
        ),
        SchemaWarning,
    ),
    (
        "responses-tool",
        lambda: responses_to_gemini_request(
            {"model": G3, "input": "x", "tools": [{"type": "file_search"}]}, unsupported="warn"
        ),
        UnsupportedWarning,
    ),
    (
        "responses-signature",
        lambda: responses_to_gemini_request(
            {
                "model": G3,
                "input": [
                    {"role": "user", "content": "go"},
                    FOREIGN_REASONING,
                    {"role": "assistant", "content": "hi"},
                    {"role": "user", "content": "next"},
                ],
            }
        ),
        SignatureWarning,
    ),
    (
        "interactions-chat",
        lambda: chat_to_interaction(
            {"model": G3, "messages": HI, "logit_bias": {"1": 1}}, unsupported="warn"
        ),
        UnsupportedWarning,
    ),
    (
        "interactions-budget",
        lambda: chat_to_interaction(
            {
                "model": G3,
                "messages": HI,
                "extra_body": {"google": {"thinking_config": {"thinking_budget": 512}}},
            },
            unsupported="warn",
        ),
        UnsupportedWarning,
    ),
    (
        "interactions-responses",
        lambda: responses_to_interaction(
            {"model": G3, "input": "x", "tools": [{"type": "file_search"}]}, unsupported="warn"
        ),
        UnsupportedWarning,
    ),
]


@pytest.mark.parametrize(
    ("translate", "category"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_a_translation_s_warning_points_at_the_caller(
    translate: Callable[[], Any], category: type[Warning]
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        translate()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, [str(w.message) for w in caught]
    assert {w.filename for w in found} == {__file__}, [(w.filename, w.lineno) for w in found]
