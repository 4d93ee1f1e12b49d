"""The two readers meet in one typed conversation (``rxgem.request.form``).

One conversation said in Chat Completions' words and in Responses' words reads into equal
:class:`Conversation` values (msgspec structs compare by value), whatever the writer then
makes of it; the writers are functions of the conversation alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from rxgem.request import PLACEHOLDER, PlaceholderWarning
from rxgem.request.form import Call, Conversation, Media, Result, Text, Turn
from rxgem.request.read.chat import read_messages
from rxgem.request.read.responses import read_input
from rxgem.request.write.generate_content import gemini_contents
from rxgem.request.write.interactions import conversation_steps

PNG = "data:image/png;base64,iVBORw0KGgo="

CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "what is here?"},
            {"type": "image_url", "image_url": {"url": PNG}},
        ],
    },
    {
        "role": "assistant",
        "content": "let me look",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "look", "arguments": '{"at": "here"}'},
                "extra_content": {"google": {"thought_signature": "S1"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": '{"seen": "a cat"}'},
    {"role": "assistant", "content": "a cat"},
]

RESPONSES: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {
        "role": "user",
        "content": [
            {"type": "input_text", "text": "what is here?"},
            {"type": "input_image", "image_url": PNG},
        ],
    },
    {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "let me look"}],
    },
    {
        "type": "function_call",
        "call_id": "c1__thought__S1",
        "name": "look",
        "arguments": '{"at": "here"}',
    },
    {"type": "function_call_output", "call_id": "c1", "output": '{"seen": "a cat"}'},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a cat"}]},
]

EXPECTED = Conversation(
    system=["be brief"],
    turns=[
        Turn("user", [Text("what is here?"), Media("image/png", data="iVBORw0KGgo=")]),
        Turn("model", [Text("let me look"), Call("look", {"at": "here"}, "c1", "S1")]),
        Turn("user", [Result("look", {"seen": "a cat"}, "c1")]),
        Turn("model", [Text("a cat")]),
    ],
)


def test_chat_and_responses_read_into_one_conversation() -> None:
    chat = read_messages(CHAT, media_results=True)
    responses = read_input(
        None, [("input", RESPONSES)], media_results=True, policy="error", resolve=None
    )
    assert chat == EXPECTED
    assert responses == EXPECTED


def test_the_generate_content_writer_puts_call_ids_only_for_gemini_3() -> None:
    system, contents = gemini_contents(EXPECTED, call_ids=False, strict_signatures=False)
    assert system == {"parts": [{"text": "be brief"}]}
    assert contents[1]["parts"][1] == {
        "functionCall": {"name": "look", "args": {"at": "here"}},
        "thoughtSignature": "S1",
    }
    _, contents = gemini_contents(EXPECTED, call_ids=True, strict_signatures=False)
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "look", "response": {"seen": "a cat"}, "id": "c1"}}
    ]


def test_the_interactions_writer_puts_each_signature_before_its_step() -> None:
    steps = conversation_steps(EXPECTED, "messages")
    assert [step["type"] for step in steps] == [
        "user_input",
        "model_output",
        "thought",
        "function_call",
        "function_result",
        "model_output",
    ]
    assert steps[2] == {"type": "thought", "signature": "S1"}


def test_a_lost_signature_of_the_current_turn_gets_the_placeholder_once() -> None:
    conversation = Conversation(
        [],
        [
            Turn("user", [Text("go")]),
            Turn("model", [Call("look", {}, "c1"), Call("look", {}, "c2")]),
        ],
    )
    with pytest.warns(PlaceholderWarning):
        _, contents = gemini_contents(conversation, call_ids=True, strict_signatures=True)
    signatures = [part.get("thoughtSignature") for part in contents[1]["parts"]]
    assert signatures == [PLACEHOLDER, None]
