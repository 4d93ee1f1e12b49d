"""OpenAI request parameters → generationConfig, thinkingConfig, toolConfig: one test per row."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

from rxgem import InvalidRequestError
from rxgem.request import UnsupportedWarning, to_gemini_request
from rxgem.request._model_families import model_family

HI = [{"role": "user", "content": "Hi"}]


def request(model: str = "gemini-2.5-flash", **fields: Any) -> dict[str, Any]:
    return to_gemini_request({"model": model, "messages": HI, **fields})


def test_sampling_and_length_parameters_map_one_to_one() -> None:
    config = request(
        max_completion_tokens=300,
        temperature=0.2,
        top_p=0.9,
        n=2,
        stop="END",
        seed=7,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        logprobs=True,
        top_logprobs=3,
        modalities=["text"],
    )["generationConfig"]
    assert config == {
        "maxOutputTokens": 300,
        "temperature": 0.2,
        "topP": 0.9,
        "presencePenalty": 0.5,
        "frequencyPenalty": -0.5,
        "candidateCount": 2,
        "seed": 7,
        "logprobs": 3,
        "responseLogprobs": True,
        "stopSequences": ["END"],
        "responseModalities": ["TEXT"],
    }


def test_max_tokens_is_the_same_as_max_completion_tokens_but_they_must_agree() -> None:
    assert request(max_tokens=10)["generationConfig"] == {"maxOutputTokens": 10}
    assert request(max_tokens=10, max_completion_tokens=10)["generationConfig"] == {
        "maxOutputTokens": 10
    }
    with pytest.raises(InvalidRequestError, match="disagree"):
        request(max_tokens=10, max_completion_tokens=20)


def test_no_parameters_send_no_generation_config() -> None:
    assert request(stream=True, stream_options={"include_usage": True}, user="u1") == {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]
    }


@pytest.mark.parametrize(
    ("model", "effort", "thinking"),
    [
        ("gemini-2.5-flash", "none", {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "low", {"thinkingBudget": 1024}),
        ("gemini-2.5-flash", "medium", {"thinkingBudget": 8192}),
        ("gemini-2.5-flash", "high", {"thinkingBudget": 24576}),
        ("gemini-2.5-pro", "xhigh", {"thinkingBudget": 32768}),
        ("gemini-2.5-flash-lite", "minimal", {"thinkingBudget": 512}),
        ("gemini-3-flash-preview", "minimal", {"thinkingLevel": "minimal"}),
        ("gemini-3-flash-preview", "medium", {"thinkingLevel": "medium"}),
        ("gemini-3-pro-preview", "minimal", {"thinkingLevel": "low"}),  # Pro's lowest level
        ("gemini-3-pro-preview", "medium", {"thinkingLevel": "high"}),  # the next level it has
        ("gemini-3-pro-preview", "high", {"thinkingLevel": "high"}),
    ],
)
def test_reasoning_effort_per_model_family(
    model: str, effort: str, thinking: dict[str, Any]
) -> None:
    assert request(model, reasoning_effort=effort)["generationConfig"]["thinkingConfig"] == thinking


@pytest.mark.parametrize(
    ("model", "thinking"),
    [
        ("gemini-3-pro-preview", {"thinkingLevel": "low"}),
        ("gemini-2.5-pro", {"thinkingBudget": 128}),
    ],
)
def test_reasoning_effort_none_on_a_model_that_cannot_stop_thinking_warns(
    model: str, thinking: dict[str, Any]
) -> None:
    with pytest.warns(UnsupportedWarning, match="cannot stop thinking"):
        config = request(model, reasoning_effort="none")["generationConfig"]
    assert config["thinkingConfig"] == thinking


def test_reasoning_effort_on_a_model_that_does_not_think_is_unsupported() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        request("gemini-2.0-flash", reasoning_effort="low")
    assert caught.value.where == "reasoning_effort"
    with pytest.warns(UnsupportedWarning):
        out = to_gemini_request(
            {"model": "gemini-2.0-flash", "messages": HI, "reasoning_effort": "low"},
            unsupported="warn",
        )
    assert "generationConfig" not in out


def test_include_thoughts_asks_for_thought_summaries() -> None:
    out = to_gemini_request({"model": "gemini-2.5-flash", "messages": HI}, include_thoughts=True)
    assert out["generationConfig"] == {"thinkingConfig": {"includeThoughts": True}}


def test_model_families() -> None:
    assert model_family("models/gemini-3-pro-preview").generation == 3
    assert model_family("gemini-2.5-flash-lite").tier == "flash-lite"
    assert model_family("gemini-flash-latest").generation == 3
    assert model_family("gemini-1.5-pro").generation == 2


# -- tools and tool_choice ----------------------------------------------------------------------


WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "strict": True,
    },
}
TIME = {
    "type": "function",
    "function": {"name": "now", "parameters": {"type": "object", "properties": {}}},
}


def test_tools_become_function_declarations_with_full_json_schema_on_the_gemini_api() -> None:
    out = request(tools=[WEATHER, TIME])
    assert out["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "weather",
                    "description": "Weather in a city",
                    "parametersJsonSchema": WEATHER["function"]["parameters"],
                },
                {"name": "now"},  # no parameters: none sent
            ]
        }
    ]


def test_on_vertex_tools_take_the_openapi_subset() -> None:
    out = to_gemini_request(
        {"model": "gemini-2.5-flash", "messages": HI, "tools": [WEATHER]}, api="vertex"
    )
    declaration = out["tools"][0]["functionDeclarations"][0]
    assert "parametersJsonSchema" not in declaration
    assert declaration["parameters"]["properties"]["city"]["type"] in ("string", "STRING")


@pytest.mark.parametrize(
    ("choice", "config"),
    [
        ("auto", {"functionCallingConfig": {"mode": "AUTO"}}),
        ("none", {"functionCallingConfig": {"mode": "NONE"}}),
        ("required", {"functionCallingConfig": {"mode": "ANY"}}),
        (
            {"type": "function", "function": {"name": "now"}},
            {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["now"]}},
        ),
    ],
)
def test_tool_choice(choice: Any, config: dict[str, Any]) -> None:
    assert request(tools=[WEATHER, TIME], tool_choice=choice)["toolConfig"] == config


def test_allowed_tools_offer_only_those_functions() -> None:
    choice = {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "required",
            "tools": [{"type": "function", "function": {"name": "now"}}],
        },
    }
    out = request(tools=[WEATHER, TIME], tool_choice=choice)
    assert [d["name"] for d in out["tools"][0]["functionDeclarations"]] == ["now"]
    assert out["toolConfig"] == {"functionCallingConfig": {"mode": "ANY"}}


def test_tool_choice_naming_an_undeclared_function_is_an_error() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        request(tools=[WEATHER], tool_choice={"type": "function", "function": {"name": "nope"}})
    assert caught.value.where == "tool_choice.function.name"


def test_parallel_tool_calls_false_with_several_tools_is_unsupported() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        request(tools=[WEATHER, TIME], parallel_tool_calls=False)
    assert caught.value.where == "parallel_tool_calls"
    assert "toolConfig" not in request(tools=[WEATHER], parallel_tool_calls=False)


def test_web_search_becomes_google_search_and_gemini_3_is_told_about_functions_beside_it() -> None:
    out = request("gemini-3-flash-preview", tools=[WEATHER], web_search_options={})
    assert out["tools"][1] == {"googleSearch": {}}
    assert out["toolConfig"] == {"includeServerSideToolInvocations": True}


def test_a_bad_function_name_is_an_error() -> None:
    bad = {"type": "function", "function": {"name": "9lives", "parameters": {}}}
    with pytest.raises(InvalidRequestError) as caught:
        request(tools=[bad])
    assert caught.value.where == "tools[0].function.name"


# -- response_format ------------------------------------------------------------------------------


def test_json_object_response_format() -> None:
    assert request(response_format={"type": "json_object"})["generationConfig"] == {
        "responseMimeType": "application/json"
    }


def test_json_schema_response_format_on_each_api() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    spec = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}}
    gemini = request(response_format=spec)["generationConfig"]
    assert gemini == {"responseMimeType": "application/json", "responseJsonSchema": schema}
    vertex = to_gemini_request(
        {"model": "gemini-2.5-flash", "messages": HI, "response_format": spec}, api="vertex"
    )["generationConfig"]
    assert set(vertex) == {"responseMimeType", "responseSchema"}


def test_json_response_format_with_functions_before_gemini_3_is_an_error() -> None:
    with pytest.raises(InvalidRequestError, match="before 3") as caught:
        request(tools=[WEATHER], response_format={"type": "json_object"})
    assert caught.value.where == "response_format"
    assert (
        "responseMimeType"
        in request(
            "gemini-3-pro-preview", tools=[WEATHER], response_format={"type": "json_object"}
        )["generationConfig"]
    )


# -- unknown and unsupported fields --------------------------------------------------------------


@pytest.mark.parametrize(
    "field", ["logit_bias", "audio", "functions", "verbosity", "made_up_field"]
)
def test_a_field_without_counterpart_is_an_error_or_with_warn_a_warning(field: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        request(**{field: {}})
    assert caught.value.where == field
    with warnings.catch_warnings(record=True) as caught_warnings:
        warnings.simplefilter("always")
        out = to_gemini_request(
            {"model": "gemini-2.5-flash", "messages": HI, field: {}}, unsupported="warn"
        )
    assert [w.category for w in caught_warnings] == [UnsupportedWarning]
    assert out == {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": math.nan}, "temperature"),  # JSON has none: it is never sent
        ({"top_p": math.inf}, "top_p"),
        ({"n": 1.5}, "n"),
        ({"n": 0}, "n"),
        ({"n": 9}, "n"),  # Gemini makes at most 8 candidates
        ({"stop": ["a", "b", "c", "d", "e", "f"]}, "stop"),
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"model": ""}, "model"),
        ({"response_format": {"type": "yaml"}}, "response_format"),
    ],
)
def test_bad_values_name_their_field(fields: dict[str, Any], where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        to_gemini_request({"model": "gemini-2.5-flash", "messages": HI, **fields})
    assert caught.value.where == where
