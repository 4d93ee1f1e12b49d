"""Signature memory's sans-IO parts: the keys, what chat and Responses answers hand out,
what a request lacks, and the request with it put back (the server's end-to-end
behaviour is in ``test_server_signature_memory.py``)."""

from __future__ import annotations

import copy
from typing import Any

import msgspec
import pytest
from reactivex import operators as ops

import rxgem
from rxgem.core import ChatCompletionChunk
from rxgem.core.chat import completion
from rxgem.core.responses import CarriedSignature, decode_signatures, encode_signatures
from rxgem.gateway._chat_signatures import ChatSignatures, chat_recall
from rxgem.gateway._responses_signatures import response_signatures, responses_recall
from rxgem.gateway._signature_keys import MAX_KEY, call_key, model_of, text_key
from rxgem.operators import responses_operator
from rxgem.request import responses_to_gemini_request, to_gemini_request
from rxgem.testing import call, event, finish, text, thought
from rxgem.testing._gemini_builders import code

MODEL = "gemini-3-flash-preview"


def chunks_of(body: bytes) -> list[ChatCompletionChunk]:
    source = rxgem.from_body(body).pipe(rxgem.gemini_to_openai(model=MODEL), ops.to_list())
    found: list[ChatCompletionChunk] = source.run()
    return found


CALLS = event(
    text("Let me check."),
    call("get_weather", sig="SIG-A", city="Paris"),
    call("get_time", city="Paris"),
) + event(finish("STOP"))
TEXT = event(text("Sunny", sig="TSIG")) + event(text(" today."), finish("STOP"))


# -- keys ---------------------------------------------------------------------------------


def test_keys_name_the_model_and_stay_bounded() -> None:
    assert call_key("gemini-3-pro", "call_1") == "call:gemini-3-pro:call_1"
    assert call_key("gemini-3-pro", "call_1") != call_key("gemini-3-flash", "call_1")
    assert model_of({"model": "models/gemini-3-pro"}) == "gemini-3-pro"
    assert model_of({"model": 3}) is None
    long = call_key(MODEL, "x" * 10_000)
    assert len(long) <= MAX_KEY
    assert long != call_key(MODEL, "x" * 9_999)
    assert text_key(MODEL, "Sunny today.") != text_key(MODEL, "Sunny today")
    assert len(text_key(MODEL, "\ud800 lone surrogate")) <= MAX_KEY


# -- chat: what goes out ------------------------------------------------------------------


def _ids(chunks: list[ChatCompletionChunk]) -> list[str]:
    message = completion(chunks).choices[0].message
    return [c["id"] for c in message.tool_calls or ()]


def test_chat_collects_call_signatures_by_id_streamed_and_whole() -> None:
    chunks = chunks_of(CALLS)
    first, _ = _ids(chunks)
    streamed = ChatSignatures(MODEL)
    for chunk in chunks:
        streamed.chunk(chunk)
    whole = ChatSignatures(MODEL)
    whole.completion(completion(chunks))
    expected = {call_key(MODEL, first): "SIG-A"}  # the second call had none
    assert streamed.signatures() == expected
    assert whole.signatures() == expected


def test_chat_collects_the_text_signature_by_the_whole_text() -> None:
    chunks = chunks_of(TEXT)
    streamed = ChatSignatures(MODEL)
    for chunk in chunks:
        streamed.chunk(chunk)
    whole = ChatSignatures(MODEL)
    whole.completion(completion(chunks))
    assert streamed.signatures() == {text_key(MODEL, "Sunny today."): "TSIG"}
    assert whole.signatures() == streamed.signatures()


def test_chat_collects_every_choice() -> None:
    chunks = [
        msgspec.convert(
            {
                "id": "c",
                "created": 1,
                "model": MODEL,
                "choices": [
                    {
                        "index": i,
                        "finish_reason": None,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": f"call_{i}",
                                    "type": "function",
                                    "function": {"name": "f", "arguments": "{}"},
                                    "extra_content": {"google": {"thought_signature": f"S{i}"}},
                                }
                            ]
                        },
                    }
                    for i in (0, 1)
                ],
            },
            ChatCompletionChunk,
        )
    ]
    collector = ChatSignatures(MODEL)
    collector.chunk(chunks[0])
    assert collector.signatures() == {
        call_key(MODEL, "call_0"): "S0",
        call_key(MODEL, "call_1"): "S1",
    }


def test_chat_does_not_remember_a_signature_the_id_carries() -> None:
    source = rxgem.from_body(CALLS).pipe(
        rxgem.gemini_to_openai(model=MODEL, signature_in_id=True), ops.to_list()
    )
    collector = ChatSignatures(MODEL)
    collector.completion(completion(source.run()))
    assert collector.signatures() == {}


# -- chat: what comes back ----------------------------------------------------------------


def _replayed(chunks: list[ChatCompletionChunk]) -> list[dict[str, Any]]:
    """The conversation as a client that drops ``extra_content`` sends it back."""
    message = completion(chunks).choices[0].message
    calls = [
        {"id": c["id"], "type": "function", "function": c["function"]}
        for c in message.tool_calls or ()
    ]
    return [
        {"role": "user", "content": "Weather and time in Paris?"},
        {"role": "assistant", "content": message.content, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": "ok"} for c in calls),
    ]


def test_chat_recall_lists_what_lacks_a_signature_and_puts_it_back() -> None:
    chunks = chunks_of(CALLS)
    first, second = _ids(chunks)
    body = {"model": MODEL, "messages": _replayed(chunks)}
    before = copy.deepcopy(body)
    recall = chat_recall(body, MODEL)
    assert recall.unsigned == 2
    assert recall.keys == [
        call_key(MODEL, first),
        call_key(MODEL, second),
        text_key(MODEL, "Let me check."),
    ]
    restored, count = recall.restore(body, {call_key(MODEL, first): "SIG-A"})
    assert count == 1
    assert body == before  # the client's body is not changed in place
    request = to_gemini_request(restored)
    parts = request["contents"][1]["parts"]
    assert [p.get("thoughtSignature") for p in parts] == [None, "SIG-A", None]


def test_chat_recall_leaves_what_the_client_kept() -> None:
    chunks = chunks_of(CALLS)
    first, _ = _ids(chunks)
    messages = _replayed(chunks)
    messages[1]["tool_calls"][0]["extra_content"] = {"google": {"thought_signature": "MINE"}}
    messages[1]["extra_content"] = {"google": {"thought_signature": "TEXT-MINE"}}
    recall = chat_recall({"model": MODEL, "messages": messages}, MODEL)
    assert call_key(MODEL, first) not in recall.keys
    assert text_key(MODEL, "Let me check.") not in recall.keys
    assert recall.unsigned == 1


def test_chat_recall_restores_a_text_signature() -> None:
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Sunny today."}]},
        {"role": "user", "content": "Thanks"},
    ]
    body = {"model": MODEL, "messages": messages}
    recall = chat_recall(body, MODEL)
    assert recall.keys == [text_key(MODEL, "Sunny today.")]
    restored, count = recall.restore(body, {text_key(MODEL, "Sunny today."): "TSIG"})
    assert count == 0
    parts = to_gemini_request(restored)["contents"][1]["parts"]
    assert parts == [{"text": "Sunny today.", "thoughtSignature": "TSIG"}]


def test_chat_recall_skips_what_is_malformed() -> None:
    assert chat_recall({"messages": "no"}, MODEL).keys == []
    body = {"messages": [1, {"role": "assistant", "tool_calls": [1, {"id": 5}, {"id": ""}]}]}
    recall = chat_recall(body, MODEL)
    assert recall.keys == []
    assert recall.unsigned == 2  # the calls without an id cannot be looked up


# -- Responses: what goes out -------------------------------------------------------------


CALL_ITEM = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
    "status": "completed",
}


def test_responses_collects_calls_texts_and_thoughts() -> None:
    body = event(
        thought("Hmm", sig="TH"),
        text("One."),
        code("print(1)"),
        text("Two.", sig="TX"),
        call("get_weather", sig="SIG-A", city="Paris"),
    ) + event(finish("STOP"))
    converters: list[Any] = []
    operator = responses_operator({"model": MODEL}, converters.append)
    events = rxgem.from_body(body).pipe(operator, ops.to_list()).run()
    response = events[-1].response
    output = [item.to_dict() for item in response.output]
    kinds = [item["type"] for item in output]
    assert kinds.count("message") == 2  # the code between the texts parts them
    reasoning_id = output[0]["id"]
    call_id = next(item["call_id"] for item in output if item["type"] == "function_call")
    (converter,) = converters
    placed = {reasoning_id: [CarriedSignature("thought", None, "PL")]}
    found = response_signatures(response, MODEL, converter.signatures, placed)
    carrier = found.pop(f"rs:{MODEL}:{reasoning_id}")
    assert decode_signatures(carrier) == [
        CarriedSignature("thought", None, "TH"),
        CarriedSignature("thought", None, "PL"),
    ]
    assert found == {call_key(MODEL, call_id): "SIG-A", text_key(MODEL, "Two."): "TX"}


# -- Responses: what comes back -----------------------------------------------------------


def _stateless(*model_items: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "Weather in Paris?"},
        *model_items,
        {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    ]


def _signed_calls(items: list[Any]) -> list[Any]:
    request = responses_to_gemini_request({"model": MODEL, "input": items})
    return [
        part.get("thoughtSignature")
        for content in request.gemini["contents"]
        for part in content["parts"]
        if "functionCall" in part
    ]


def test_responses_recall_restores_a_call_by_call_id_alone() -> None:
    bare = {k: v for k, v in CALL_ITEM.items() if k not in ("id", "status")}
    items = _stateless(bare)
    recall = responses_recall(items, MODEL)
    assert recall.keys == [call_key(MODEL, "call_1")]
    assert recall.unsigned == 1
    restored, count = recall.restore(items, {call_key(MODEL, "call_1"): "SIG-A"})
    assert count == 1
    assert _signed_calls(restored) == ["SIG-A"]
    assert len(items) == 3  # the client's list is not changed in place


def test_responses_recall_leaves_a_call_a_reasoning_item_signs() -> None:
    carried = encode_signatures([CarriedSignature("call", "call_1", "MINE")])
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": carried}
    items = _stateless(reasoning, CALL_ITEM)
    recall = responses_recall(items, MODEL)
    assert recall.keys == []
    assert recall.unsigned == 0


def test_responses_recall_restores_texts_and_reasoning_items() -> None:
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    items = [
        {"role": "user", "content": "Hi"},
        reasoning,
        {"role": "assistant", "content": "Sunny today."},
        {"role": "user", "content": "Thanks"},
    ]
    recall = responses_recall(items, MODEL)
    assert recall.keys == [f"rs:{MODEL}:rs_1", text_key(MODEL, "Sunny today.")]
    thought = encode_signatures([CarriedSignature("thought", None, "TH")])
    found = {f"rs:{MODEL}:rs_1": thought, text_key(MODEL, "Sunny today."): "TX"}
    restored, _ = recall.restore(items, found)
    request = responses_to_gemini_request({"model": MODEL, "input": restored})
    parts = request.gemini["contents"][1]["parts"]
    assert {"text": "", "thought": True, "thoughtSignature": "TH"} in parts
    assert {"text": "Sunny today.", "thoughtSignature": "TX"} in parts


def test_responses_recall_counts_a_reasoning_items_text_signature() -> None:
    carried = encode_signatures([CarriedSignature("text", None, "MINE")])
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": carried}
    items = [
        {"role": "user", "content": "Hi"},
        reasoning,
        {"role": "assistant", "content": "Sunny today."},
        {"role": "user", "content": "Thanks"},
        {"role": "assistant", "content": "You are welcome."},
    ]
    assert responses_recall(items, MODEL).keys == [text_key(MODEL, "You are welcome.")]


@pytest.mark.parametrize("items", [None, "text", [1, {"type": "function_call", "call_id": 3}]])
def test_responses_recall_skips_what_is_malformed(items: Any) -> None:
    assert responses_recall(items, MODEL).keys == []


def test_chat_recall_without_memory_only_counts() -> None:
    body = {"messages": [{"role": "assistant", "content": "Hi", "tool_calls": [{"id": "c"}]}]}
    recall = chat_recall(body, None)
    assert (recall.keys, recall.unsigned) == ([], 1)
