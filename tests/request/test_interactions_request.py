"""Chat Completions and Responses requests → Interactions create bodies, each judged strictly
by google-genai's own types (no unknown key, variant or value anywhere)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from interactions_judge import assert_strict, strict_problems

from rxgem import InvalidRequestError
from rxgem.core.responses import CarriedSignature, encode_signatures
from rxgem.request import (
    SignatureWarning,
    UnsupportedWarning,
    chat_to_interaction,
    responses_to_interaction,
)
from rxgem.request._signatures import PLACEHOLDER
from rxgem.testing import check_interaction_body

G3 = "gemini-3-flash-preview"
IMAGE = "data:image/png;base64,iVBORw0KGgo="


def chat(*messages: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"model": G3, "messages": list(messages), **fields}


def user(content: Any = "hi") -> dict[str, Any]:
    return {"role": "user", "content": content}


def tool_call(call_id: str, name: str = "look", args: str = "{}", sig: str | None = None) -> Any:
    call: dict[str, Any] = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": args},
    }
    if sig is not None:
        call["extra_content"] = {"google": {"thought_signature": sig}}
    return call


def result(call_id: str, content: Any = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


LOOK = {
    "type": "function",
    "function": {
        "name": "look",
        "description": "Look something up",
        "parameters": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


def translated(body: dict[str, Any], **options: Any) -> dict[str, Any]:
    out = chat_to_interaction(body, **options)
    assert_strict(out)
    assert check_interaction_body(out) == []
    return out


def test_the_judge_refuses_an_unknown_key_anywhere() -> None:
    body = translated(chat(user()))
    assert strict_problems({**body, "temperature": 1}) != []
    body["input"][0]["content"][0]["bold"] = True
    assert strict_problems(body) == ["input[0].content[0]: unknown keys ['bold']"]
    assert strict_problems({"model": G3, "input": [{"type": "user_said"}]}) != []


def test_a_plain_chat_is_one_user_input_step_and_stateless() -> None:
    out = translated(chat(user("Hello")))
    assert out == {
        "model": G3,
        "input": [{"type": "user_input", "content": [{"type": "text", "text": "Hello"}]}],
        "store": False,
    }


def test_system_messages_become_the_system_instruction() -> None:
    out = translated(
        chat(
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "No."},
            user(),
        )
    )
    assert out["system_instruction"] == "Be brief.\n\nNo."


def test_a_multi_turn_chat_replays_each_turn_as_steps() -> None:
    out = translated(chat(user("a"), {"role": "assistant", "content": "b"}, user("c")))
    assert [step["type"] for step in out["input"]] == ["user_input", "model_output", "user_input"]
    assert out["input"][1]["content"] == [{"type": "text", "text": "b"}]


def test_a_tool_round_trip_sends_each_thought_step_back_before_what_it_signed() -> None:
    out = translated(
        chat(
            user("weather?"),
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [tool_call("c1", args='{"q":"x"}', sig="SIG1")],
            },
            result("c1", "sunny"),
            {
                "role": "assistant",
                "content": "It is sunny.",
                "extra_content": {"google": {"thought_signature": "SIG2"}},
            },
            user("thanks"),
        ),
        store=False,
    )
    assert out["input"][1:6] == [
        {"type": "thought", "signature": "SIG1"},
        {"type": "function_call", "id": "c1", "name": "look", "arguments": {"q": "x"}},
        {"type": "function_result", "call_id": "c1", "name": "look", "result": "sunny"},
        {"type": "thought", "signature": "SIG2"},
        {"type": "model_output", "content": [{"type": "text", "text": "It is sunny."}]},
    ]
    assert out["store"] is False


def test_signatures_in_the_call_id_mark_come_back_unmodified() -> None:
    from rxgem.core.openai import ID_MARK

    call_id = f"c1{ID_MARK}U0lH+/=="
    out = translated(
        chat(user(), {"role": "assistant", "tool_calls": [tool_call(call_id)]}, result(call_id))
    )
    assert out["input"][1] == {"type": "thought", "signature": "U0lH+/=="}
    assert out["input"][2]["id"] == "c1"
    assert out["input"][3]["call_id"] == "c1"


def test_parallel_calls_share_the_one_signature_of_the_first() -> None:
    out = translated(
        chat(
            user(),
            {"role": "assistant", "tool_calls": [tool_call("a", sig="S"), tool_call("b")]},
            result("b", "2"),
            result("a", "1"),
        )
    )
    kinds = [(s["type"], s.get("id") or s.get("call_id")) for s in out["input"][1:]]
    assert kinds == [
        ("thought", None),
        ("function_call", "a"),
        ("function_call", "b"),
        ("function_result", "a"),
        ("function_result", "b"),
    ]


def test_a_current_turn_call_without_its_signature_gets_the_placeholder() -> None:
    with pytest.warns(SignatureWarning):
        out = translated(
            chat(user(), {"role": "assistant", "tool_calls": [tool_call("a")]}, result("a"))
        )
    assert out["input"][1] == {"type": "thought", "signature": PLACEHOLDER}


def test_images_and_files_are_contents_and_tool_images_a_result_list() -> None:
    out = translated(
        chat(
            user(
                [
                    {"type": "text", "text": "see"},
                    {"type": "image_url", "image_url": {"url": IMAGE}},
                    {"type": "image_url", "image_url": {"url": "https://x.test/cat.jpg"}},
                    {"type": "file", "file": {"file_data": "JVBERg==", "filename": "a.pdf"}},
                ]
            ),
            {"role": "assistant", "tool_calls": [tool_call("a", sig="S")]},
            result(
                "a",
                [
                    {"type": "text", "text": "shot"},
                    {"type": "image_url", "image_url": {"url": IMAGE}},
                ],
            ),
        )
    )
    assert out["input"][0]["content"][1:] == [
        {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
        {"type": "image", "uri": "https://x.test/cat.jpg", "mime_type": "image/jpeg"},
        {"type": "document", "data": "JVBERg==", "mime_type": "application/pdf"},
    ]
    assert out["input"][-1]["result"] == [
        {"type": "text", "text": "shot"},
        {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
    ]


def test_a_media_type_interactions_does_not_take_is_refused() -> None:
    svg = {"type": "image_url", "image_url": {"url": "data:image/svg+xml;base64,PHN2Zz4="}}
    with pytest.raises(InvalidRequestError, match="image/svg") as caught:
        chat_to_interaction(chat(user([svg])))
    assert caught.value.where == "messages"


def test_tools_are_flat_functions_with_cleaned_schemas() -> None:
    out = translated(chat(user(), tools=[LOOK]))
    (tool,) = out["tools"]
    assert tool["type"] == "function"
    assert tool["name"] == "look"
    assert tool["description"] == "Look something up"
    assert "$schema" not in tool["parameters"]
    assert tool["parameters"]["properties"] == {"q": {"type": "string"}}


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("auto", "auto"),
        ("none", "none"),
        ("required", "any"),
        (
            {"type": "function", "function": {"name": "look"}},
            {"allowed_tools": {"mode": "any", "tools": ["look"]}},
        ),
        (
            {
                "type": "allowed_tools",
                "allowed_tools": {
                    "mode": "required",
                    "tools": [{"type": "function", "function": {"name": "look"}}],
                },
            },
            "any",
        ),
    ],
)
def test_tool_choice_modes(choice: Any, expected: Any) -> None:
    out = translated(chat(user(), tools=[LOOK], tool_choice=choice))
    assert out["generation_config"]["tool_choice"] == expected


def test_json_schema_and_json_object_become_a_response_format() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "additionalProperties": False,
    }
    spec = {"type": "json_schema", "json_schema": {"name": "n", "schema": schema, "strict": True}}
    out = translated(chat(user(), response_format=spec))
    assert out["response_format"]["mime_type"] == "application/json"
    assert out["response_format"]["schema"]["properties"] == {"n": {"type": "integer"}}
    plain = translated(chat(user(), response_format={"type": "json_object"}))
    assert plain["response_format"] == {"type": "text", "mime_type": "application/json"}


@pytest.mark.parametrize(
    ("model", "effort", "level"),
    [
        (G3, "minimal", "minimal"),
        (G3, "low", "low"),
        (G3, "medium", "medium"),
        (G3, "high", "high"),
        (G3, "xhigh", "high"),
        ("gemini-3.1-pro-preview", "medium", "high"),
        ("gemini-3.1-pro-preview", "low", "low"),
    ],
)
def test_reasoning_effort_becomes_a_thinking_level(model: str, effort: str, level: str) -> None:
    out = translated({"model": model, "messages": [user()], "reasoning_effort": effort})
    assert out["generation_config"]["thinking_level"] == level


def test_generation_settings_and_thought_summaries() -> None:
    out = translated(
        chat(
            user(),
            temperature=0.2,
            top_p=0.9,
            max_completion_tokens=64,
            stop=["END"],
            seed=7,
            stream=True,
        ),
        include_thoughts=True,
        previous_interaction_id="v1_abc",
        store=True,
    )
    assert out["generation_config"] == {
        "max_output_tokens": 64,
        "temperature": 0.2,
        "top_p": 0.9,
        "seed": 7,
        "stop_sequences": ["END"],
        "thinking_summaries": "auto",
    }
    assert out["stream"] is True
    assert out["store"] is True
    assert out["previous_interaction_id"] == "v1_abc"


def test_several_answers_are_refused_with_a_message() -> None:
    with pytest.raises(InvalidRequestError, match="one answer per request") as caught:
        chat_to_interaction(chat(user(), n=2))
    assert caught.value.where == "n"
    translated(chat(user(), n=1))


@pytest.mark.parametrize(
    ("field", "value"),
    [("presence_penalty", 0.5), ("logprobs", True), ("logit_bias", {"1": 2}), ("nonsense", 1)],
)
def test_fields_without_a_counterpart_are_refused_or_left_out(field: str, value: Any) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        chat_to_interaction(chat(user(), **{field: value}))
    assert caught.value.where == field
    with pytest.warns(UnsupportedWarning):
        translated(chat(user(), **{field: value}), unsupported="warn")


def test_a_bad_message_names_its_place() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        chat_to_interaction(chat(user(), {"role": "tool", "tool_call_id": "zz", "content": "x"}))
    assert caught.value.where == "messages[1].tool_call_id"


# --- Responses -------------------------------------------------------------------------


def reasoning(*signatures: tuple[str, str | None, str]) -> dict[str, Any]:
    carried = [CarriedSignature(kind, call_id, sig) for kind, call_id, sig in signatures]  # type: ignore[arg-type]
    return {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "I thought"}],
        "encrypted_content": encode_signatures(carried),
    }


def fcall(call_id: str, name: str = "look") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": '{"q":"x"}'}


def fout(call_id: str, output: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


RTOOL = {"type": "function", "name": "look", "parameters": LOOK["function"]["parameters"]}  # type: ignore[index]


def responses(body: dict[str, Any], **options: Any) -> dict[str, Any]:
    out = responses_to_interaction({"model": G3, **body}, **options)
    assert_strict(out.body)
    assert check_interaction_body(out.body) == []
    return out.body


def test_a_responses_string_input_with_instructions() -> None:
    out = responses({"input": "Hi", "instructions": "Be brief.", "max_output_tokens": 50})
    assert out["input"] == [{"type": "user_input", "content": [{"type": "text", "text": "Hi"}]}]
    assert out["system_instruction"] == "Be brief."
    assert out["generation_config"] == {"max_output_tokens": 50}


def test_responses_items_replay_reasoning_signatures_as_thought_steps() -> None:
    out = responses(
        {
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
                reasoning(("call", "c1", "SIG1")),
                fcall("c1"),
                fout("c1", "sunny"),
                {"role": "user", "content": "thanks"},
            ],
            "tools": [RTOOL],
            "tool_choice": "required",
            "reasoning": {"effort": "low", "summary": "auto"},
            "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}},
        }
    )
    assert [s["type"] for s in out["input"]] == [
        "user_input",
        "thought",
        "function_call",
        "function_result",
        "user_input",
    ]
    assert out["input"][1] == {"type": "thought", "signature": "SIG1"}
    assert out["generation_config"] == {
        "thinking_level": "low",
        "thinking_summaries": "auto",
        "tool_choice": "any",
    }
    assert out["tools"][0]["name"] == "look"
    assert out["response_format"]["mime_type"] == "application/json"


def test_a_text_signature_from_reasoning_goes_before_the_model_output() -> None:
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Yo"}],
    }
    out = responses(
        {
            "input": [
                {"role": "user", "content": "a"},
                reasoning(("text", None, "T")),
                said,
                {"role": "user", "content": "b"},
            ]
        }
    )
    assert out["input"][1:3] == [
        {"type": "thought", "signature": "T"},
        {"type": "model_output", "content": [{"type": "text", "text": "Yo"}]},
    ]


def test_continuing_at_google_sends_only_the_new_input() -> None:
    history = [{"role": "user", "content": "weather?"}, reasoning(("call", "c1", "S")), fcall("c1")]
    request = responses_to_interaction(
        {
            "model": G3,
            "input": [fout("c1", "sunny")],
            "previous_response_id": "resp_1",
            "store": True,
        },
        store=True,
        previous_interaction_id="v1_prev",
        history=history,
    )
    assert_strict(request.body)
    assert request.body["input"] == [
        {"type": "function_result", "call_id": "c1", "name": "look", "result": "sunny"}
    ]
    assert request.body["previous_interaction_id"] == "v1_prev"
    assert request.previous_response_id == "resp_1"
    assert request.store is True
    assert request.body["store"] is True


def test_replaying_history_from_the_other_upstream_sends_everything() -> None:
    history = [{"role": "user", "content": "weather?"}, reasoning(("call", "c1", "S")), fcall("c1")]
    request = responses_to_interaction(
        {"model": G3, "input": [fout("c1", "sunny")], "previous_response_id": "resp_1"},
        history=history,
    )
    assert_strict(request.body)
    assert [s["type"] for s in request.body["input"]] == [
        "user_input",
        "thought",
        "function_call",
        "function_result",
    ]
    assert "previous_interaction_id" not in request.body


def test_background_runs_need_google_to_store_them() -> None:
    request = responses_to_interaction({"model": G3, "input": "x", "background": True}, store=True)
    assert_strict(request.body)
    assert request.background
    assert request.body["background"] is True
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_interaction({"model": G3, "input": "x", "background": True})
    assert caught.value.where == "background"


def test_responses_warnings_are_collected() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        request = responses_to_interaction(
            {"model": G3, "input": "x", "tools": [{"type": "custom", "name": "apply_patch"}]}
        )
    assert any(isinstance(w, UnsupportedWarning) for w in request.warnings)
    assert_strict(request.body)


def test_errors_name_the_item_where_it_stands_when_continuing() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_interaction(
            {"model": G3, "input": [fout("c1"), {"role": "robot", "content": "x"}]},
            store=True,
            previous_interaction_id="v1_prev",
        )
    assert caught.value.where == "input[1].role"


def test_records_of_code_without_googles_ids_are_not_replayed() -> None:
    code = {"type": "code_interpreter_call", "id": "ci_1", "code": "print(1)", "outputs": []}
    said = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "1"}],
    }
    out = responses(
        {
            "input": [
                {"role": "user", "content": "run"},
                code,
                said,
                {"role": "user", "content": "ok"},
            ]
        }
    )
    assert [s["type"] for s in out["input"]] == ["user_input", "model_output", "user_input"]
