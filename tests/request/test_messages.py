"""OpenAI messages → Gemini contents: one test per row of the README's table, and bad requests."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from rxgem import InvalidRequestError
from rxgem.request import SignatureWarning, to_gemini_request
from rxgem.request._signatures import PLACEHOLDER


def contents(messages: list[dict[str, Any]], model: str = "gemini-2.5-flash") -> dict[str, Any]:
    return to_gemini_request({"model": model, "messages": messages})


def call(id: str, name: str, arguments: str = "{}", **extra: Any) -> dict[str, Any]:
    return {
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
        **extra,
    }


def test_system_and_developer_messages_become_the_system_instruction_in_order() -> None:
    request = contents(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "developer", "content": [{"type": "text", "text": "Use metric units."}]},
        ]
    )
    assert request["systemInstruction"] == {
        "parts": [{"text": "Be brief."}, {"text": "Use metric units."}]
    }
    assert request["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]


def test_user_content_parts_become_text_inline_data_and_file_data() -> None:
    request = contents(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
                    {"type": "image_url", "image_url": {"url": "https://x.example/cat.jpg?s=1"}},
                    {"type": "input_audio", "input_audio": {"data": "UklG", "format": "wav"}},
                    {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBE"}},
                    {"type": "file", "file": {"file_data": "JVBE", "filename": "a.pdf"}},
                ],
            }
        ]
    )
    assert request["contents"][0]["parts"] == [
        {"text": "What is this?"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBO"}},
        {"fileData": {"fileUri": "https://x.example/cat.jpg?s=1", "mimeType": "image/jpeg"}},
        {"inlineData": {"mimeType": "audio/wav", "data": "UklG"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBE"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBE"}},
    ]


def test_an_assistant_turn_with_parallel_calls_and_their_results_grouped_in_call_order() -> None:
    request = contents(
        [
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {
                "role": "assistant",
                "content": "Checking both.",
                "tool_calls": [
                    call(
                        "a",
                        "weather",
                        '{"city": "Paris"}',
                        extra_content={"google": {"thought_signature": "SIG"}},
                    ),
                    call("b", "weather", '{"city": "Rome"}'),
                ],
            },
            # results arrive in another order than the calls
            {"role": "tool", "tool_call_id": "b", "content": '{"temp": 21}'},
            {"role": "tool", "tool_call_id": "a", "content": "18 degrees"},
            {"role": "assistant", "content": "Paris 18, Rome 21."},
        ]
    )
    assert request["contents"] == [
        {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"text": "Checking both."},
                {
                    "functionCall": {"name": "weather", "args": {"city": "Paris"}},
                    "thoughtSignature": "SIG",
                },
                {"functionCall": {"name": "weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"output": "18 degrees"}}},
                {"functionResponse": {"name": "weather", "response": {"temp": 21}}},
            ],
        },
        {"role": "model", "parts": [{"text": "Paris 18, Rome 21."}]},
    ]


@pytest.mark.parametrize(
    ("extra", "call_id"),
    [
        ({"extra_content": {"google": {"thought_signature": "S"}}}, "c1"),
        ({"extra_content": {"vertex": {"thought_signature": "S"}}}, "c1"),
        ({"provider_specific_fields": {"thought_signature": "S"}}, "c1"),
        ({}, "c1__thought__S"),
    ],
)
def test_signatures_are_read_wherever_clients_keep_them(
    extra: dict[str, Any], call_id: str
) -> None:
    request = contents(
        [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "tool_calls": [call(call_id, "f", **extra)]},
            {"role": "tool", "tool_call_id": call_id, "content": "ok"},
        ],
        model="gemini-3-flash-preview",
    )
    model, results = request["contents"][1:]
    assert model["parts"] == [
        {"functionCall": {"name": "f", "args": {}, "id": "c1"}, "thoughtSignature": "S"}
    ]
    assert results["parts"][0]["functionResponse"]["id"] == "c1"  # the id, without the signature


def test_gemini_2_gets_no_call_ids() -> None:
    request = contents(
        [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "tool_calls": [call("c1", "f")]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    )
    assert "id" not in request["contents"][1]["parts"][0]["functionCall"]
    assert "id" not in request["contents"][2]["parts"][0]["functionResponse"]


def test_a_lost_signature_in_the_current_turn_gets_the_placeholder_on_each_steps_first_call() -> (
    None
):
    history = [
        {"role": "user", "content": "Earlier question"},
        {"role": "assistant", "tool_calls": [call("old", "f")]},  # an earlier turn: not validated
        {"role": "tool", "tool_call_id": "old", "content": "ok"},
        {"role": "assistant", "content": "Done."},
        {"role": "user", "content": "Now this"},
        {"role": "assistant", "tool_calls": [call("p1", "f"), call("p2", "f")]},  # a parallel step
        {"role": "tool", "tool_call_id": "p1", "content": "ok"},
        {"role": "tool", "tool_call_id": "p2", "content": "ok"},
        {
            "role": "assistant",
            "tool_calls": [
                call("s1", "g", extra_content={"google": {"thought_signature": "REAL"}})
            ],
        },
        {"role": "tool", "tool_call_id": "s1", "content": "ok"},
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        request = contents(history, model="gemini-3-pro-preview")
    signatures = [
        [part.get("thoughtSignature") for part in content["parts"] if "functionCall" in part]
        for content in request["contents"]
        if content["role"] == "model"
    ]
    assert signatures == [[None], [], [PLACEHOLDER, None], ["REAL"]]
    assert len([w for w in caught if issubclass(w.category, SignatureWarning)]) == 1


def test_gemini_2_5_is_sent_no_placeholder() -> None:
    request = contents(
        [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "tool_calls": [call("c1", "f")]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    )
    assert "thoughtSignature" not in request["contents"][1]["parts"][0]


def test_the_text_signature_goes_on_the_last_text_part() -> None:
    request = contents(
        [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": "Hello!",
                "extra_content": {"google": {"thought_signature": "T"}},
            },
            {"role": "user", "content": "Bye"},
        ]
    )
    assert request["contents"][1] == {
        "role": "model",
        "parts": [{"text": "Hello!", "thoughtSignature": "T"}],
    }


@pytest.mark.parametrize("content", [None, "Let me check."])
def test_a_call_signature_copied_onto_its_message_is_sent_once(content: str | None) -> None:
    # The Agents SDK for JS copies a call's extra_content onto the assistant message:
    # the same signature twice would be an extra signed part Gemini never made.
    signed = {"extra_content": {"google": {"thought_signature": "S"}}}
    request = contents(
        [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": content,
                "tool_calls": [call("c1", "w", **signed)],
                **signed,
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ],
        model="gemini-3-flash-preview",
    )
    parts = request["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts].count("S") == 1
    assert parts[-1]["functionCall"]["name"] == "w"
    assert parts[-1]["thoughtSignature"] == "S"
    assert parts[:-1] == ([{"text": content}] if content else [])


def test_text_is_not_merged_into_a_content_of_function_responses() -> None:
    request = contents(
        [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "tool_calls": [call("c1", "f")]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "user", "content": "and also this"},
            {"role": "user", "content": "and that"},
        ]
    )
    roles = [(c["role"], len(c["parts"])) for c in request["contents"]]
    assert roles == [("user", 1), ("model", 1), ("user", 1), ("user", 2)]


def test_arguments_as_an_empty_string_are_no_arguments() -> None:
    request = contents(
        [
            {"role": "user", "content": "Go"},
            {"role": "assistant", "tool_calls": [call("c1", "f", "")]},
            {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "[1, 2]"}]},
        ]
    )
    assert request["contents"][1]["parts"][0]["functionCall"]["args"] == {}
    # a result that is JSON but not an object is wrapped, so that response is an object
    assert request["contents"][2]["parts"][0]["functionResponse"]["response"] == {
        "output": "[1, 2]"
    }


# -- bad requests -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("messages", "where", "words"),
    [
        ([{"role": "robot", "content": "x"}], "messages[0].role", "unknown role"),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "tool", "tool_call_id": "nope", "content": "r"},
            ],
            "messages[1].tool_call_id",
            "'nope'",
        ),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [call("c", "f", "{not json")]},
                {"role": "tool", "tool_call_id": "c", "content": "r"},
            ],
            "messages[1].tool_calls[0].function.arguments",
            "not valid JSON",
        ),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [call("c", "f", "[1]")]},
                {"role": "tool", "tool_call_id": "c", "content": "r"},
            ],
            "messages[1].tool_calls[0].function.arguments",
            "JSON object",
        ),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [call("a", "f"), call("b", "f")]},
                {"role": "tool", "tool_call_id": "a", "content": "r"},
                {"role": "user", "content": "y"},
            ],
            "messages[1].tool_calls[1]",
            "no tool message",
        ),
        (
            [{"role": "user", "content": [{"type": "video", "video": {}}]}],
            "messages[0].content[0].type",
            "'video'",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "data:image/png,abc"}}],
                }
            ],
            "messages[0].content[0].image_url.url",
            "base64",
        ),
        ([], "messages", "non-empty"),
        ([{"role": "user", "content": []}], "messages[0].content", "needs content"),
        ([{"role": "system", "content": "Be brief."}], "messages", "not only system"),
        (
            [
                {"role": "user", "content": "x"},
                {"role": "assistant", "tool_calls": [call("c", "")]},
                {"role": "tool", "tool_call_id": "c", "content": "r"},
            ],
            "messages[1].tool_calls[0].function.name",
            "needs a name",
        ),
    ],
)
def test_a_bad_message_is_one_error_naming_where(
    messages: list[Any], where: str, words: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        contents(messages)
    assert caught.value.where == where
    assert words in str(caught.value)


def test_images_in_a_tool_result_become_function_response_parts_on_gemini_3() -> None:
    result = [
        {"type": "text", "text": '{"found": 1}'},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBO"}},
    ]
    history = [
        {"role": "user", "content": "Screenshot?"},
        {
            "role": "assistant",
            "tool_calls": [
                call("c1", "shot", extra_content={"google": {"thought_signature": "S"}})
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]
    request = contents(history, model="gemini-3-flash-preview")
    assert request["contents"][2]["parts"] == [
        {
            "functionResponse": {
                "name": "shot",
                "response": {"found": 1},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBO"}}],
                "id": "c1",
            }
        }
    ]
    with pytest.raises(InvalidRequestError, match="Gemini 3") as caught:
        contents(history)
    assert caught.value.where == "messages[2].content"
