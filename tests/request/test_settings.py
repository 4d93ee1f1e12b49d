"""The two readers meet in one typed form for the settings too (``Settings``).

One request's tools, tool choice, sampling, limits, answer format and reasoning, said in
Chat Completions' words and in Responses' words, read into equal :class:`Settings` values;
each writer (``generateContent``, Interactions) is a function of the settings alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from rxgem.request._model_families import model_family
from rxgem.request.form import Function, Settings, Thinking, Tools
from rxgem.request.read.chat import read_settings as read_chat_settings
from rxgem.request.read.responses import read_settings as read_responses_settings
from rxgem.request.write.generate_content import write_settings
from rxgem.request.write.interactions import interaction_config, response_format

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

CHAT: dict[str, Any] = {
    "model": "gemini-3-flash-preview",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [
        {
            "type": "function",
            "function": {"name": "look", "description": "Looks", "parameters": SCHEMA},
        },
        {"type": "function", "function": {"name": "add"}},
    ],
    "tool_choice": {"type": "function", "function": {"name": "look"}},
    "max_completion_tokens": 50,
    "temperature": 0.5,
    "top_p": 0.9,
    "response_format": {"type": "json_schema", "json_schema": {"name": "s", "schema": SCHEMA}},
    "reasoning_effort": "low",
}
RESPONSES: dict[str, Any] = {
    "model": "gemini-3-flash-preview",
    "input": "hi",
    "tools": [
        {"type": "function", "name": "look", "description": "Looks", "parameters": SCHEMA},
        {"type": "function", "name": "add"},
    ],
    "tool_choice": {"type": "function", "name": "look"},
    "max_output_tokens": 50,
    "temperature": 0.5,
    "top_p": 0.9,
    "text": {"format": {"type": "json_schema", "name": "s", "schema": SCHEMA}},
    "reasoning": {"effort": "low"},
}


def _chat(body: dict[str, Any], target: Any = "json_schema") -> Settings:
    family = model_family(body["model"])
    # no summaries: what a Responses reasoning without a summary asks
    return read_chat_settings(body, family, target, False, "error")


def _responses(body: dict[str, Any], target: Any = "json_schema") -> Settings:
    family = model_family(body["model"])
    include = list(body.get("include", []))
    return read_responses_settings(body, family, target, include, "error")[0]


@pytest.mark.parametrize("target", ["json_schema", "openapi"])
def test_the_same_settings_in_either_api_read_the_same(target: str) -> None:
    chat, responses = _chat(CHAT, target), _responses(RESPONSES, target)
    assert chat.thinking is not None
    assert responses.thinking is not None
    assert chat.thinking.where == "reasoning_effort"
    assert responses.thinking.where == "reasoning.effort"
    responses.thinking.where = chat.thinking.where  # the field each API names it by
    assert chat == responses
    assert chat.tools.functions[1] == Function("add")
    assert (chat.tools.mode, chat.tools.only) == ("any", ["look"])
    assert (chat.max_output_tokens, chat.json) == (50, True)


def test_the_settings_are_typed_structs_not_wire_dicts() -> None:
    settings = _chat(CHAT)
    assert isinstance(settings.tools, Tools)
    assert isinstance(settings.thinking, Thinking)
    assert settings.thinking.level == "low"


def test_each_writer_is_a_function_of_the_settings_alone() -> None:
    settings = Settings(
        Tools([Function("look", "Looks", SCHEMA)], search=True, mode="any", only=["look"]),
        max_output_tokens=5,
        temperature=0.5,
        stop=["X"],
        json=True,
        schema=SCHEMA,
        thinking=Thinking("reasoning_effort", level="high", include_thoughts=True),
    )
    request: dict[str, Any] = {}
    write_settings(request, settings, target="json_schema", generation=3)
    assert request == {
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "look", "description": "Looks", "parametersJsonSchema": SCHEMA}
                ]
            },
            {"googleSearch": {}},
        ],
        "toolConfig": {
            "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["look"]},
            "includeServerSideToolInvocations": True,
        },
        "generationConfig": {
            "maxOutputTokens": 5,
            "temperature": 0.5,
            "stopSequences": ["X"],
            "responseMimeType": "application/json",
            "responseJsonSchema": SCHEMA,
            "thinkingConfig": {"thinkingLevel": "high", "includeThoughts": True},
        },
    }
    assert interaction_config(settings, include_thoughts=None, policy="error") == {
        "max_output_tokens": 5,
        "temperature": 0.5,
        "stop_sequences": ["X"],
        "thinking_level": "high",
        "thinking_summaries": "auto",
        "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["look"]}},
    }
    assert response_format(settings) == {
        "type": "text",
        "mime_type": "application/json",
        "schema": SCHEMA,
    }


def test_vertex_takes_the_schemas_in_its_own_fields() -> None:
    request: dict[str, Any] = {}
    write_settings(request, _chat(CHAT, "openapi"), target="openapi", generation=3)
    assert "parameters" in request["tools"][0]["functionDeclarations"][0]
    assert "responseSchema" in request["generationConfig"]
