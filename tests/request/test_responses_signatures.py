"""Thought signatures come back from reasoning items' ``encrypted_content`` to their parts,
and Gemini 3's current turn is checked as FakeGemini's strict mode checks it."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from rxgem import InvalidRequestError
from rxgem.core.responses import CarriedSignature, encode_signatures
from rxgem.request import SignatureWarning, responses_to_gemini_request
from rxgem.request._signatures import PLACEHOLDER
from rxgem.testing import gemini_request_problems

G3 = "gemini-3-pro-preview"


def reasoning(*signatures: tuple[str, str | None, str]) -> dict[str, Any]:
    carried = [CarriedSignature(kind, call_id, sig) for kind, call_id, sig in signatures]  # type: ignore[arg-type]
    return {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "I thought hard"}],
        "content": None,
        "encrypted_content": encode_signatures(carried),
    }


def call(call_id: str, name: str = "look") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def output(call_id: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": "ok"}


def said(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {"type": "message", "role": "assistant", "content": content}


def contents(items: list[Any], model: str = G3) -> list[dict[str, Any]]:
    gemini = responses_to_gemini_request({"model": model, "input": items}).gemini
    assert gemini_request_problems(gemini, model=model) == []
    result: list[dict[str, Any]] = gemini["contents"]
    return result


GO = {"role": "user", "content": "go"}


def test_each_signature_goes_back_to_its_part_and_the_summary_does_not() -> None:
    items = [
        GO,
        reasoning(("thought", None, "T"), ("text", None, "X"), ("call", "c1", "C1")),
        said("let me look"),
        call("c1"),
        call("c2"),
        output("c1"),
        output("c2"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SignatureWarning)  # the parallel step's first call is signed
        model = contents(items)[1]
    assert model["parts"] == [
        {"text": "", "thought": True, "thoughtSignature": "T"},
        {"text": "let me look", "thoughtSignature": "X"},
        {"functionCall": {"name": "look", "args": {}, "id": "c1"}, "thoughtSignature": "C1"},
        {"functionCall": {"name": "look", "args": {}, "id": "c2"}},
    ]
    assert "I thought hard" not in str(model)


def test_a_text_signature_without_a_message_is_kept_on_an_empty_text_part() -> None:
    (_, model) = contents([GO, reasoning(("text", None, "X"))])
    assert model["parts"] == [{"text": "", "thoughtSignature": "X"}]


def test_each_step_of_a_turn_gets_its_own_signature() -> None:
    items = [
        GO,
        reasoning(("call", "c1", "S1")),
        call("c1"),
        output("c1"),
        reasoning(("call", "c2", "S2"), ("text", None, "X2")),
        call("c2"),
        output("c2"),
        said("done"),
    ]
    found = contents(items)
    assert found[1]["parts"][0]["thoughtSignature"] == "S1"
    assert found[3]["parts"] == [
        {"text": "", "thoughtSignature": "X2"},  # no message in its turn: kept where it stood
        {"functionCall": {"name": "look", "args": {}, "id": "c2"}, "thoughtSignature": "S2"},
    ]
    assert found[5]["parts"] == [{"text": "done"}]


def test_a_lost_signature_in_the_current_turn_gets_the_placeholder() -> None:
    items = [GO, call("c1"), output("c1")]
    with pytest.warns(SignatureWarning, match="placeholder"):
        found = contents(items)
    assert found[1]["parts"][0]["thoughtSignature"] == PLACEHOLDER


def test_without_the_placeholder_strict_gemini_would_refuse_the_turn() -> None:
    """The check the tests above lean on does fail on an unsigned current turn."""
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "look", "args": {}, "id": "c1"}}],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "look", "response": {}, "id": "c1"}}],
            },
        ]
    }
    assert gemini_request_problems(body, model=G3) != []


def test_an_earlier_turn_keeps_no_placeholder() -> None:
    items = [GO, call("c1"), output("c1"), said("done"), {"role": "user", "content": "next"}]
    found = contents(items)
    assert "thoughtSignature" not in found[1]["parts"][0]


def test_openai_encrypted_content_is_left_out_with_a_warning() -> None:
    foreign = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAABo..."}
    with pytest.warns(SignatureWarning, match="not written by rxgem"):
        found = contents([GO, foreign, said("hi")])
    assert found[1] == {"role": "model", "parts": [{"text": "hi"}]}


@pytest.mark.parametrize(
    ("content", "where"),
    [
        ("rxgem.sig.v1.!!!", "input[1].encrypted_content"),
        (5, "input[1].encrypted_content"),
    ],
)
def test_an_altered_carrier_is_refused(content: Any, where: str) -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": content}
    with pytest.raises(InvalidRequestError) as caught:
        responses_to_gemini_request({"model": G3, "input": [GO, item, said("x")]})
    assert caught.value.where == where


def test_a_reasoning_item_without_content_adds_no_part() -> None:
    item = {"type": "reasoning", "id": "rs_1", "summary": []}
    found = contents([GO, item, said("hi")])
    assert found[1] == {"role": "model", "parts": [{"text": "hi"}]}


def test_gemini_2_5_takes_the_signatures_but_no_ids() -> None:
    items = [GO, reasoning(("call", "c1", "C1")), call("c1"), output("c1")]
    found = contents(items, model="gemini-2.5-flash")
    assert found[1]["parts"] == [
        {"functionCall": {"name": "look", "args": {}}, "thoughtSignature": "C1"}
    ]
