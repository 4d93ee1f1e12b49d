"""Responses ``input`` → Gemini ``contents`` and ``systemInstruction``: messages, parts,
function calls and their outputs, ``item_reference`` and the history before the input."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from rxgem import InvalidRequestError
from rxgem.request import UnsupportedWarning, item_references, responses_to_gemini_request
from rxgem.testing import gemini_request_problems

G3 = "gemini-3-flash-preview"
G25 = "gemini-2.5-flash"
PNG = "data:image/png;base64,iVBORw0KGgo="


def gemini(input: Any, model: str = G3, **fields: Any) -> dict[str, Any]:
    result = responses_to_gemini_request({"model": model, "input": input, **fields})
    return result.gemini


def valid(body: dict[str, Any], model: str = G3) -> dict[str, Any]:
    """``body``, after checking that Gemini would take it."""
    assert gemini_request_problems(body, model=model) == []
    return body


def call(call_id: str, name: str = "look", arguments: str = "{}", **extra: Any) -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        **extra,
    }


def output(call_id: str, out: Any = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": out}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


# -- messages ---------------------------------------------------------------------------------


def test_a_string_input_is_one_user_message() -> None:
    assert gemini("Hi") == {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


def test_messages_with_or_without_type_and_with_text_parts() -> None:
    body = gemini(
        [
            {"role": "user", "content": "a"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "b"}]},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "c", "annotations": []}],
            },
            {"role": "assistant", "content": "d"},
            user("e"),
        ]
    )
    assert valid(body)["contents"] == [
        {"role": "user", "parts": [{"text": "a"}, {"text": "b"}]},
        {"role": "model", "parts": [{"text": "c"}, {"text": "d"}]},
        {"role": "user", "parts": [{"text": "e"}]},
    ]


def test_instructions_then_system_and_developer_messages_go_to_the_system_instruction() -> None:
    body = gemini(
        [
            {
                "role": "developer",
                "content": [
                    {"type": "input_text", "text": "one"},
                    {"type": "input_text", "text": "+"},
                ],
            },
            {"role": "system", "content": "two"},
            user("Hi"),
            {"role": "developer", "content": "three"},
        ],
        instructions="zero",
    )
    assert body["systemInstruction"] == {
        "parts": [{"text": "zero"}, {"text": "one+"}, {"text": "two"}, {"text": "three"}]
    }
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]


def test_images_and_files() -> None:
    content = [
        {"type": "input_text", "text": "look"},
        {"type": "input_image", "image_url": PNG, "detail": "auto"},
        {"type": "input_image", "image_url": "https://example.com/cat.jpg", "detail": "low"},
        {"type": "input_file", "file_data": "JVBERi0=", "filename": "a.pdf"},
        {"type": "input_file", "file_data": "data:text/plain;base64,aGk="},
        {"type": "input_file", "file_url": "https://example.com/b.pdf"},
    ]
    assert valid(gemini([{"role": "user", "content": content}]))["contents"][0]["parts"] == [
        {"text": "look"},
        {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
        {"fileData": {"fileUri": "https://example.com/cat.jpg", "mimeType": "image/jpeg"}},
        {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}},
        {"inlineData": {"mimeType": "text/plain", "data": "aGk="}},
        {"fileData": {"fileUri": "https://example.com/b.pdf", "mimeType": "application/pdf"}},
    ]


@pytest.mark.parametrize(
    ("part", "where"),
    [
        ({"type": "input_image", "file_id": "file-1"}, "input[0].content[1].file_id"),
        ({"type": "input_file", "file_id": "file-1"}, "input[0].content[1].file_id"),
    ],
)
def test_a_file_id_is_unsupported(part: dict[str, Any], where: str) -> None:
    items = [{"role": "user", "content": [{"type": "input_text", "text": "x"}, part]}]
    with pytest.raises(InvalidRequestError) as caught:
        gemini(items)
    assert caught.value.where == where
    with pytest.warns(UnsupportedWarning, match="file storage"):
        result = responses_to_gemini_request({"model": G3, "input": items}, unsupported="warn")
    assert result.gemini["contents"][0]["parts"] == [{"text": "x"}]


@pytest.mark.parametrize(
    ("items", "where"),
    [
        (
            [{"role": "user", "content": [{"type": "input_image", "image_url": 3}]}],
            "input[0].content[0].image_url",
        ),
        (
            [
                {
                    "role": "user",
                    "content": [{"type": "input_image", "image_url": "data:image/png,xx"}],
                }
            ],
            "input[0].content[0].image_url",
        ),
        ([{"role": "user", "content": [{"type": "input_image"}]}], "input[0].content[0]"),
        ([{"role": "user", "content": [{"type": "input_file"}]}], "input[0].content[0]"),
        ([{"role": "user", "content": [{"type": "input_audio"}]}], "input[0].content[0].type"),
        (
            [{"role": "assistant", "content": [{"type": "input_image", "image_url": PNG}]}],
            "input[0].content[0].type",
        ),
        (
            [{"role": "user", "content": [{"type": "input_text", "text": 1}]}],
            "input[0].content[0].text",
        ),
        ([{"role": "user", "content": 5}], "input[0].content"),
        ([{"role": "user", "content": []}], "input[0].content"),
        ([{"role": "tool", "content": "x"}], "input[0].role"),
        ([user("a"), 7], "input[1]"),
        ([user("a"), {"content": "x"}], "input[1]"),
        ([user("a"), {"type": 3}], "input[1]"),
        (12, "input"),
        ([], "input"),
    ],
)
def test_errors_name_the_field(items: Any, where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        gemini(items)
    assert caught.value.where == where


# -- function calls ---------------------------------------------------------------------------


def test_a_model_turn_is_one_model_content_and_its_outputs_one_user_content() -> None:
    body = gemini(
        [
            user("go"),
            {"role": "assistant", "content": "let me look"},
            call("c1", arguments='{"q": 1}', id="fc_1", status="completed"),
            call("c2", name="other"),
            output("c2", "two"),
            output("c1", '{"found": true}'),
            {"role": "assistant", "content": "done"},
        ],
        model=G25,
    )
    assert valid(body, G25)["contents"] == [
        {"role": "user", "parts": [{"text": "go"}]},
        {
            "role": "model",
            "parts": [
                {"text": "let me look"},
                {"functionCall": {"name": "look", "args": {"q": 1}}},
                {"functionCall": {"name": "other", "args": {}}},
            ],
        },
        {
            "role": "user",
            "parts": [  # in the order of the calls
                {"functionResponse": {"name": "look", "response": {"found": True}}},
                {"functionResponse": {"name": "other", "response": {"output": "two"}}},
            ],
        },
        {"role": "model", "parts": [{"text": "done"}]},
    ]


def test_gemini_3_gets_the_call_ids() -> None:
    body = gemini([user("go"), call("c1", thought="x"), output("c1")])
    (part,) = body["contents"][1]["parts"]
    assert part["functionCall"] == {"name": "look", "args": {}, "id": "c1"}
    assert body["contents"][2]["parts"][0]["functionResponse"]["id"] == "c1"


def test_a_namespaced_call_is_named_like_its_declaration() -> None:
    body = gemini([user("go"), call("c1", name="f", namespace="mcp"), output("c1")], model=G25)
    assert body["contents"][1]["parts"][0]["functionCall"]["name"] == "mcp.f"
    assert body["contents"][2]["parts"][0]["functionResponse"]["name"] == "mcp.f"


def test_a_function_output_with_parts() -> None:
    parts = [
        {"type": "input_text", "text": "see "},
        {"type": "input_text", "text": "this"},
        {"type": "input_image", "image_url": PNG},
    ]
    body = gemini([user("go"), call("c1"), output("c1", parts)])
    assert valid(body)["contents"][2]["parts"][0]["functionResponse"] == {
        "name": "look",
        "response": {"output": "see this"},
        "parts": [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}],
        "id": "c1",
    }
    with pytest.raises(InvalidRequestError) as caught:
        gemini([user("go"), call("c1"), output("c1", parts)], model=G25)
    assert caught.value.where == "input[2].output[2]"


@pytest.mark.parametrize(
    ("items", "where"),
    [
        ([user("go"), call("c1")], "input[1]"),
        ([user("go"), call("c1"), user("again")], "input[1]"),
        ([user("go"), call("c1"), output("c9")], "input[2].call_id"),
        ([user("go"), output("c1")], "input[1].call_id"),
        ([user("go"), call("c1"), output("c1"), output("c1x")], "input[3].call_id"),
        ([user("go"), call("c1", arguments="{")], "input[1].arguments"),
        ([user("go"), call("c1", arguments="[1]")], "input[1].arguments"),
        ([user("go"), call("c1", name="")], "input[1].name"),
        ([user("go"), {"type": "function_call", "name": "f"}], "input[1].call_id"),
        ([user("go"), call("c1"), output("c1", 5)], "input[2].output"),
    ],
)
def test_call_errors_name_the_item(items: list[Any], where: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        gemini(items)
    assert caught.value.where == where


def test_arguments_nested_too_deep_are_refused_with_their_path() -> None:
    deep = "[" * 200 + "]" * 200
    with pytest.raises(InvalidRequestError) as caught:
        gemini([user("go"), call("c1", arguments=f'{{"a": {deep}}}')])
    assert caught.value.where.startswith("input[1].arguments")


def test_a_web_search_call_item_is_a_record_with_nothing_to_send() -> None:
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {}}
    body = gemini([user("go"), search, {"role": "assistant", "content": "found"}])
    assert body["contents"][1:] == [{"role": "model", "parts": [{"text": "found"}]}]


def test_other_item_types_follow_the_unsupported_policy() -> None:
    items = [user("go"), {"type": "custom_tool_call", "call_id": "x", "name": "p", "input": ""}]
    with pytest.raises(InvalidRequestError) as caught:
        gemini(items)
    assert caught.value.where == "input[1].type"
    with pytest.warns(UnsupportedWarning):
        result = responses_to_gemini_request({"model": G3, "input": items}, unsupported="warn")
    assert result.gemini["contents"] == [{"role": "user", "parts": [{"text": "go"}]}]


# -- item_reference and history --------------------------------------------------------------


STORED = {
    "msg_1": {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": "stored"}],
    },
    "msg_2": {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "answer"}],
    },
}


def test_item_references_are_resolved_by_the_callers_resolver() -> None:
    body = {
        "model": G3,
        "input": [
            {"type": "item_reference", "id": "msg_1"},
            {"type": "item_reference", "id": "msg_2"},
            user("more"),
        ],
    }
    assert item_references(body) == ["msg_1", "msg_2"]
    result = responses_to_gemini_request(body, resolve=STORED.get)
    assert result.gemini["contents"] == [
        {"role": "user", "parts": [{"text": "stored"}]},
        {"role": "model", "parts": [{"text": "answer"}]},
        {"role": "user", "parts": [{"text": "more"}]},
    ]


@pytest.mark.parametrize(
    ("resolve", "ref"),
    [
        (None, {"type": "item_reference", "id": "msg_1"}),
        (STORED.get, {"type": "item_reference", "id": "msg_9"}),
        (STORED.get, {"type": "item_reference"}),
        ({"r": {"type": "item_reference", "id": "r"}}.get, {"type": "item_reference", "id": "r"}),
    ],
)
def test_an_unresolved_reference_names_its_id(resolve: Any, ref: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_gemini_request({"model": G3, "input": [user("a"), ref]}, resolve=resolve)
    assert caught.value.where == "input[1].id"


def test_the_history_comes_before_the_input() -> None:
    history = [
        user("first"),
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "one"}],
        },
        call("c1"),
    ]
    result = responses_to_gemini_request(
        {"model": G25, "previous_response_id": "resp_1", "input": [output("c1")]}, history=history
    )
    assert result.previous_response_id == "resp_1"
    assert valid(result.gemini, G25)["contents"] == [
        {"role": "user", "parts": [{"text": "first"}]},
        {
            "role": "model",
            "parts": [{"text": "one"}, {"functionCall": {"name": "look", "args": {}}}],
        },
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "look", "response": {"output": "ok"}}}],
        },
    ]
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_gemini_request({"model": G3, "input": "x"}, history=[user("a"), 5])  # type: ignore[list-item]
    assert caught.value.where == "history[1]"


def test_previous_response_id_without_history_is_refused() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_gemini_request({"model": G3, "previous_response_id": "resp_1", "input": "x"})
    assert caught.value.where == "previous_response_id"


def test_the_translation_does_not_change_the_request() -> None:
    import copy

    items = [user("go"), call("c1"), output("c1"), {"type": "item_reference", "id": "msg_2"}]
    body = {"model": G3, "input": items, "tools": [{"type": "function", "name": "look"}]}
    before = copy.deepcopy(body)
    stored = copy.deepcopy(STORED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        responses_to_gemini_request(body, resolve=stored.get)
    assert body == before
    assert stored == STORED
