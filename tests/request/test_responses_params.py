"""Responses tools, tool choice, parameters and top-level fields → Gemini, and the result
object the server keeps."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

from rxgem import InvalidRequestError
from rxgem.request import (
    ResponsesRequest,
    SchemaWarning,
    Unsupported,
    UnsupportedWarning,
    responses_to_gemini_request,
)
from rxgem.testing import gemini_request_problems

G3 = "gemini-3-flash-preview"
G25 = "gemini-2.5-flash"
OBJECT = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = {
    "type": "function",
    "name": "weather",
    "description": "d",
    "parameters": OBJECT,
    "strict": True,
}
TIME = {"type": "function", "name": "time"}


def translate(model: str = G3, **fields: Any) -> ResponsesRequest:
    result = responses_to_gemini_request({"model": model, "input": "Hi", **fields})
    assert gemini_request_problems(result.gemini, model=model) == []
    return result


# -- tools ------------------------------------------------------------------------------------


def test_flat_function_tools() -> None:
    gemini = translate(tools=[WEATHER, TIME]).gemini
    assert gemini["tools"] == [
        {
            "functionDeclarations": [
                {"name": "weather", "description": "d", "parametersJsonSchema": OBJECT},
                {"name": "time"},
            ]
        }
    ]
    vertex = responses_to_gemini_request(
        {"model": G3, "input": "x", "tools": [WEATHER]}, api="vertex"
    )
    (declaration,) = vertex.gemini["tools"][0]["functionDeclarations"]
    assert declaration["parameters"]["type"] == "OBJECT"


def test_a_namespace_declares_its_functions_with_the_namespace_in_the_name() -> None:
    namespace = {"type": "namespace", "name": "crm", "description": "CRM", "tools": [WEATHER, TIME]}
    result = translate(tools=[namespace, {"type": "function", "name": "time"}])
    names = [d["name"] for d in result.gemini["tools"][0]["functionDeclarations"]]
    assert names == ["crm.weather", "crm.time", "time"]
    assert result.namespaced == {"crm.weather": ("crm", "weather"), "crm.time": ("crm", "time")}


def test_web_search_is_google_search() -> None:
    for kind in ("web_search", "web_search_preview", "web_search_2025_08_26"):
        gemini = translate(tools=[{"type": kind, "external_web_access": False}]).gemini
        assert gemini["tools"] == [{"googleSearch": {}}]
    gemini = translate(tools=[WEATHER, {"type": "web_search"}]).gemini
    assert gemini["toolConfig"] == {"includeServerSideToolInvocations": True}


def test_web_search_beside_functions_needs_gemini_3() -> None:
    with pytest.warns(UnsupportedWarning, match="Gemini before 3 refuses Google Search"):
        result = translate(G25, tools=[WEATHER, {"type": "web_search"}])  # policy "error"
    assert result.gemini["tools"] == [
        {
            "functionDeclarations": [
                {"name": "weather", "description": "d", "parametersJsonSchema": OBJECT}
            ]
        }
    ]
    assert "toolConfig" not in result.gemini
    assert translate(G25, tools=[{"type": "web_search"}]).gemini["tools"] == [{"googleSearch": {}}]


def test_custom_and_tool_search_tools_are_left_out_with_a_warning_even_under_error() -> None:
    custom = {
        "type": "custom",
        "name": "apply_patch",
        "format": {"type": "grammar", "syntax": "lark", "definition": "start: x"},
    }
    search = {"type": "tool_search", "execution": "client"}
    with pytest.warns(UnsupportedWarning) as seen:
        result = translate(tools=[WEATHER, custom, search])
    left_out = "tools; left out (the model is offered the other tools)"
    assert [str(w.message) for w in seen][:2] == [
        f"tools[1]: Gemini has no 'custom' {left_out}",
        f"tools[2]: Gemini has no 'tool_search' {left_out}",
    ]
    assert [d["name"] for d in result.gemini["tools"][0]["functionDeclarations"]] == ["weather"]
    assert len(result.warnings) == 2


@pytest.mark.parametrize(
    "tool",
    [
        {"type": "file_search", "vector_store_ids": ["vs"]},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {
            "type": "computer_use_preview",
            "display_width": 1,
            "display_height": 1,
            "environment": "linux",
        },
        {"type": "mcp", "server_label": "x"},
        {"type": "image_generation"},
    ],
)
def test_hosted_tools_follow_the_unsupported_policy(tool: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        translate(tools=[WEATHER, tool])
    assert caught.value.where == "tools[1].type"
    with pytest.warns(UnsupportedWarning):
        result = responses_to_gemini_request(
            {"model": G3, "input": "x", "tools": [WEATHER, tool]}, unsupported="warn"
        )
    assert len(result.gemini["tools"]) == 1


@pytest.mark.parametrize(
    ("tools", "where"),
    [
        ([{"type": "function", "name": "has space"}], "tools[0].name"),
        ([{"type": "function", "name": "x" * 65}], "tools[0].name"),
        (
            [
                {
                    "type": "namespace",
                    "name": "n" * 60,
                    "tools": [{"type": "function", "name": "long_name"}],
                }
            ],
            "tools[0].tools[0].name",
        ),
        ([{"type": "function"}], "tools[0].name"),
        ([TIME, TIME], "tools[1].name"),
        ([{"type": "function", "name": "f", "parameters": "x"}], "tools[0].parameters"),
        ([{"type": "namespace", "name": "n", "tools": 3}], "tools[0].tools"),
        ([{"type": "namespace", "tools": []}], "tools[0].name"),
        ([{"name": "f"}], "tools[0]"),
        ({"type": "function"}, "tools"),
    ],
)
def test_tool_errors_name_the_field(tools: Any, where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        translate(tools=tools)
    assert caught.value.where == where


def test_schema_approximations_warn_on_vertex() -> None:
    tool = {
        "type": "function",
        "name": "f",
        "parameters": {"type": "object", "properties": {"a": {"const": 1}}},
    }
    with pytest.warns(SchemaWarning):
        result = responses_to_gemini_request(
            {"model": G3, "input": "x", "tools": [tool]}, api="vertex"
        )
    assert result.warnings


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"mode": "AUTO"}),
        ("none", {"mode": "NONE"}),
        ("required", {"mode": "ANY"}),
        ({"type": "function", "name": "time"}, {"mode": "ANY", "allowedFunctionNames": ["time"]}),
        (
            {
                "type": "allowed_tools",
                "mode": "required",
                "tools": [{"type": "function", "name": "time"}],
            },
            {"mode": "ANY"},
        ),
    ],
)
def test_tool_choice(choice: Any, config: dict[str, Any]) -> None:
    result = translate(tools=[WEATHER, TIME], tool_choice=choice)
    assert result.gemini["toolConfig"] == {"functionCallingConfig": config}
    assert result.echo["tool_choice"] == choice


def test_allowed_tools_declares_only_those() -> None:
    choice = {
        "type": "allowed_tools",
        "mode": "auto",
        "tools": [{"type": "function", "name": "time"}],
    }
    result = translate(tools=[WEATHER, TIME], tool_choice=choice)
    assert result.gemini["tools"] == [{"functionDeclarations": [{"name": "time"}]}]


@pytest.mark.parametrize(
    ("choice", "where"),
    [
        ({"type": "function", "name": "nope"}, "tool_choice.name"),
        ({"type": "allowed_tools", "mode": "x", "tools": []}, "tool_choice.mode"),
        ({"type": "allowed_tools", "mode": "auto"}, "tool_choice.tools"),
        ("sometimes", "tool_choice"),
        ({"type": "custom", "name": "apply_patch"}, "tool_choice"),
    ],
)
def test_tool_choice_errors(choice: Any, where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        translate(tools=[WEATHER], tool_choice=choice)
    assert caught.value.where == where


def test_parallel_tool_calls() -> None:
    translate(tools=[WEATHER, TIME], parallel_tool_calls=True)
    translate(tools=[WEATHER], parallel_tool_calls=False)
    with pytest.raises(InvalidRequestError) as caught:
        translate(tools=[WEATHER, TIME], parallel_tool_calls=False)
    assert caught.value.where == "parallel_tool_calls"


# -- parameters -------------------------------------------------------------------------------


def test_sampling_and_limits() -> None:
    result = translate(max_output_tokens=100, temperature=0.5, top_p=0.9)
    assert result.gemini["generationConfig"] == {
        "maxOutputTokens": 100,
        "temperature": 0.5,
        "topP": 0.9,
    }
    assert result.echo["max_output_tokens"] == 100
    assert result.echo["top_p"] == 0.9


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_sampling_number_that_json_cannot_hold_is_refused(value: float) -> None:
    with pytest.raises(InvalidRequestError, match="must be a finite number") as caught:
        translate(temperature=value)
    assert caught.value.where == "temperature"


def test_logprobs_only_when_include_asks() -> None:
    assert "generationConfig" not in translate(top_logprobs=3).gemini
    result = translate(top_logprobs=3, include=["message.output_text.logprobs"])
    assert result.gemini["generationConfig"] == {"responseLogprobs": True, "logprobs": 3}


@pytest.mark.parametrize(
    ("model", "reasoning", "thinking"),
    [
        (
            G3,
            {"effort": "low", "summary": "auto"},
            {"thinkingLevel": "low", "includeThoughts": True},
        ),
        (G3, {"summary": "detailed"}, {"includeThoughts": True}),
        (G3, {"effort": "high"}, {"thinkingLevel": "high", "includeThoughts": False}),
        (
            G25,
            {"effort": "medium", "summary": "concise"},
            {"thinkingBudget": 8192, "includeThoughts": True},
        ),
        (G25, {"generate_summary": "auto"}, {"includeThoughts": True}),
    ],
)
def test_reasoning(model: str, reasoning: dict[str, Any], thinking: dict[str, Any]) -> None:
    result = translate(model, reasoning=reasoning)
    assert result.gemini["generationConfig"] == {"thinkingConfig": thinking}


def test_reasoning_errors() -> None:
    for reasoning, where in (
        ({"effort": "max"}, "reasoning.effort"),
        ({"summary": "always"}, "reasoning.summary"),
        ("high", "reasoning"),
    ):
        with pytest.raises(InvalidRequestError) as caught:
            translate(reasoning=reasoning)
        assert caught.value.where == where
    with pytest.raises(InvalidRequestError) as caught:
        translate("gemini-2.0-flash", reasoning={"effort": "low"})
    assert caught.value.where == "reasoning.effort"


def test_text_format() -> None:
    schema_format = {"type": "json_schema", "name": "city", "schema": OBJECT, "strict": True}
    result = translate(text={"format": schema_format})
    assert result.gemini["generationConfig"] == {
        "responseMimeType": "application/json",
        "responseJsonSchema": OBJECT,
    }
    assert result.echo["text"] == {"format": schema_format}
    assert translate(text={"format": {"type": "json_object"}}).gemini["generationConfig"] == {
        "responseMimeType": "application/json"
    }
    assert (
        "generationConfig"
        not in translate(text={"format": {"type": "text"}, "verbosity": "medium"}).gemini
    )
    with pytest.raises(InvalidRequestError) as caught:
        translate(G25, tools=[WEATHER], text={"format": {"type": "json_object"}})
    assert caught.value.where == "text.format"
    with pytest.raises(InvalidRequestError) as caught:
        translate(text={"format": {"type": "json_schema", "name": "x"}})
    assert caught.value.where == "text.format.schema"


def test_verbosity_other_than_medium_is_unsupported() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        translate(text={"verbosity": "low"})
    assert caught.value.where == "text.verbosity"
    with pytest.warns(UnsupportedWarning):
        responses_to_gemini_request(
            {"model": G3, "input": "x", "text": {"verbosity": "high"}}, unsupported="warn"
        )


# -- top-level fields and the result ----------------------------------------------------------


def test_what_the_server_keeps_comes_back_in_the_result() -> None:
    result = translate(
        stream=True,
        store=False,
        include=["reasoning.encrypted_content"],
        metadata={"k": "v"},
        truncation="auto",
        prompt_cache_key="p",
        client_metadata={"a": "b"},
        user="u",
        safety_identifier="s",
        service_tier="auto",
        stream_options={"include_obfuscation": False},
        prompt_cache_retention="24h",
        instructions="Be brief.",
    )
    assert result.model == G3
    assert (result.stream, result.store, result.include) == (
        True,
        False,
        ("reasoning.encrypted_content",),
    )
    assert result.metadata == {"k": "v"}
    assert result.gemini == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
    }
    assert result.echo["truncation"] == "auto"
    assert result.echo["instructions"] == "Be brief."
    assert result.warnings == ()


def test_the_echo_has_openais_defaults() -> None:
    result = translate()
    assert (result.stream, result.store, result.include, result.metadata) == (False, True, (), {})
    assert result.echo == {
        "instructions": None,
        "max_output_tokens": None,
        "metadata": {},
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "prompt_cache_key": None,
        "reasoning": {"effort": None, "summary": None},
        "safety_identifier": None,
        "service_tier": None,
        "temperature": None,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_logprobs": None,
        "top_p": None,
        "truncation": "disabled",
        "user": None,
    }


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"conversation": "conv_1"}, "conversation"),
        ({"prompt": {"id": "pmpt_1"}}, "prompt"),
        ({"max_tool_calls": 3}, "max_tool_calls"),
        ({"made_up": 1}, "made_up"),
    ],
)
def test_fields_without_a_counterpart_follow_the_policy(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        translate(**fields)
    assert caught.value.where == where
    with pytest.warns(UnsupportedWarning):
        result = responses_to_gemini_request(
            {"model": G3, "input": "x", **fields}, unsupported="warn"
        )
    assert len(result.warnings) == 1


def test_background_is_refused_under_any_policy() -> None:
    translate(background=False)
    policies: tuple[Unsupported, ...] = ("error", "warn")
    for policy in policies:
        with pytest.raises(InvalidRequestError) as caught:
            responses_to_gemini_request(
                {"model": G3, "input": "x", "background": True}, unsupported=policy
            )
        assert caught.value.where == "background"


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"model": ""}, "model"),
        ({"stream": "yes"}, "stream"),
        ({"store": 1}, "store"),
        ({"metadata": []}, "metadata"),
        ({"include": "all"}, "include"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"temperature": "hot"}, "temperature"),
        ({"top_logprobs": 21}, "top_logprobs"),
        ({"instructions": 3}, "instructions"),
        ({"previous_response_id": 3}, "previous_response_id"),
    ],
)
def test_field_errors(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_gemini_request({"model": G3, "input": "x", **fields})
    assert caught.value.where == where


def test_warnings_still_reach_the_callers_filters() -> None:
    custom = {"type": "custom", "name": "apply_patch"}
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnsupportedWarning)
        with pytest.raises(UnsupportedWarning):
            responses_to_gemini_request({"model": G3, "input": "x", "tools": [custom]})


def test_a_responses_request_refuses_n_naming_chat() -> None:
    from rxgem.core import InvalidRequestError
    from rxgem.request import responses_to_gemini_request

    with pytest.raises(InvalidRequestError, match="chat/completions") as caught:
        responses_to_gemini_request({"model": "gemini-2.5-flash", "input": "hi", "n": 2})
    assert caught.value.where == "n"
