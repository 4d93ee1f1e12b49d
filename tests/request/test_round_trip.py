"""Gemini's answer → rxgem's chunks → the openai SDK's assistant message → the next request.

The model content that ``to_gemini_request`` sends back must hold what Gemini sent: the
text, every non-text part in its place with its own signature, the text signature on
the last text part, and each tool call with its signature.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from pipeline_harness import counter_ids, expected_for, sample_names, sdk_accumulate
from strategies import DATA_KEYS, PROPERTIES, GeminiStream, encode, examples, gemini_streams

import rxgem
from rxgem import samples
from rxgem.request import SignatureWarning, to_gemini_request
from rxgem.request._signatures import PLACEHOLDER


def signature(call: dict[str, Any]) -> str | None:
    """The thought signature of an assembled tool call (``samples.expected()``'s too)."""
    google: dict[str, Any] = call.get("extra_content", {}).get("google", {})
    return google.get("thought_signature")


def _events(name: str) -> list[dict[str, Any]]:
    text = samples.read(name).decode()
    return [
        json.loads(line[len("data: ") :])
        for line in text.replace("\r\n", "\n").split("\n")
        if line.startswith("data: ")
    ]


def gemini_parts(name: str) -> list[dict[str, Any]]:
    """Candidate 0's text and data parts of a sample, as Gemini means them (:func:`parts_of`)."""
    return parts_of(_events(name))


def _dump(message: Any) -> dict[str, Any]:
    data: dict[str, Any] = message.model_dump(exclude_none=True)
    data.pop("parsed", None)
    for call in data.get("tool_calls") or []:
        call["function"].pop("parsed_arguments", None)
    return data


ROUND_TRIP = [
    name
    for name in sample_names()
    if expected_for(name)["error"] is None
    and len(expected_for(name)["choices"]) == 1
    and expected_for(name).get("api", "gemini") == "gemini"
]


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_the_next_request_sends_back_what_gemini_sent(name: str) -> None:
    chunks = list(rxgem.Converter(id_factory=counter_ids()).iterate([samples.read(name)]))
    message = _dump(sdk_accumulate(chunks).choices[0].message)
    calls = message.get("tool_calls") or []
    history = [
        {"role": "user", "content": "Go."},
        message,
        *({"role": "tool", "tool_call_id": c["id"], "content": '{"ok": true}'} for c in calls),
    ]
    request = to_gemini_request({"model": "gemini-2.5-flash", "messages": history})
    user, *answer = request["contents"]
    assert user == {"role": "user", "parts": [{"text": "Go."}]}
    if not answer:  # a blocked prompt: nothing came, nothing goes back
        assert gemini_parts(name) == []
        assert not calls
        return
    model, *rest = answer
    sent = [part for part in model["parts"] if "functionCall" not in part]
    assert sent == gemini_parts(name)
    want = expected_for(name)["choices"][0]["tool_calls"]
    sent_calls = [part for part in model["parts"] if "functionCall" in part]
    assert [
        (p["functionCall"]["name"], p["functionCall"]["args"], p.get("thoughtSignature"))
        for p in sent_calls
    ] == [
        (c["function"]["name"], json.loads(c["function"]["arguments"]), signature(c)) for c in want
    ]
    if calls:
        (results,) = rest
        assert [p["functionResponse"]["name"] for p in results["parts"]] == [
            c["function"]["name"] for c in want
        ]
        assert all(p["functionResponse"]["response"] == {"ok": True} for p in results["parts"])


@pytest.mark.parametrize("name", ["gemini3_ids.sse", "thinking_tools.sse"])
def test_gemini_3_gets_ids_and_a_placeholder_only_where_a_step_lost_its_signature(
    name: str,
) -> None:
    chunks = list(rxgem.Converter(id_factory=counter_ids()).iterate([samples.read(name)]))
    message = _dump(sdk_accumulate(chunks).choices[0].message)
    calls = message["tool_calls"]
    history = [
        {"role": "user", "content": "Go."},
        message,
        *({"role": "tool", "tool_call_id": c["id"], "content": "done"} for c in calls),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        request = to_gemini_request({"model": "gemini-3-pro-preview", "messages": history})
    model = request["contents"][1]
    sent = [p for p in model["parts"] if "functionCall" in p]
    assert [p["functionCall"]["id"] for p in sent] == [c["id"] for c in calls]
    results = request["contents"][2]["parts"]
    assert [p["functionResponse"]["id"] for p in results] == [c["id"] for c in calls]
    assert results[0]["functionResponse"]["response"] == {"output": "done"}
    first_signed = sent[0].get("thoughtSignature") not in (None, PLACEHOLDER)
    signatures = [
        c.get("extra_content", {}).get("google", {}).get("thought_signature") for c in calls
    ]
    if signatures[0] is None:
        assert sent[0]["thoughtSignature"] == PLACEHOLDER
        assert any(issubclass(w.category, SignatureWarning) for w in caught)
    else:
        assert first_signed
        assert not [w for w in caught if issubclass(w.category, SignatureWarning)]
    # the other calls keep exactly what they came with: no placeholder stamped on them
    assert [p.get("thoughtSignature") for p in sent[1:]] == signatures[1:]


def test_signatures_carried_in_ids_come_back_for_clients_that_drop_extra_fields() -> None:
    chunks = list(
        rxgem.Converter(id_factory=counter_ids(), signature_in_id=True).iterate(
            [samples.read("gemini3_ids.sse")]
        )
    )
    message = _dump(sdk_accumulate(chunks).choices[0].message)
    for call in message["tool_calls"]:
        call.pop("extra_content", None)  # what LangChain's ChatOpenAI keeps: no extra fields
    message.pop("extra_content", None)
    want = expected_for("gemini3_ids.sse")["choices"][0]["tool_calls"]
    assert [c["id"].partition("__thought__")[0] for c in message["tool_calls"]] == [
        w["id"] for w in want
    ]
    history = [
        {"role": "user", "content": "Go."},
        message,
        *(
            {"role": "tool", "tool_call_id": c["id"], "content": "ok"}
            for c in message["tool_calls"]
        ),
    ]
    request = to_gemini_request({"model": "gemini-3-pro-preview", "messages": history})
    sent = [p for p in request["contents"][1]["parts"] if "functionCall" in p]
    assert [p["functionCall"]["id"] for p in sent] == [w["id"] for w in want]
    assert [p.get("thoughtSignature") for p in sent] == [signature(w) for w in want]
    results = request["contents"][2]["parts"]
    assert [p["functionResponse"]["id"] for p in results] == [w["id"] for w in want]


# -- generated streams ------------------------------------------------------------------------


def parts_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Candidate 0's text and data parts as Gemini means them: the text joined between data
    parts, thoughts left out, the text signature on the last text part."""
    out: list[dict[str, Any]] = []
    text = ""
    signature = None
    for event in events:
        for candidate in event.get("candidates") or []:
            if candidate.get("index", 0) != 0:
                continue
            for part in (candidate.get("content") or {}).get("parts") or []:
                if "functionCall" in part:
                    continue
                if not any(key in part for key in DATA_KEYS):
                    signature = part.get("thoughtSignature") or signature
                    if "text" in part and not part.get("thought"):
                        text += part["text"]
                    continue
                if text:
                    out.append({"text": text})
                    text = ""
                out.append(part)
    if text:
        out.append({"text": text})
    if signature is not None:
        texts = [p for p in out if "text" in p]
        if texts:
            texts[-1]["thoughtSignature"] = signature
        else:
            out.append({"text": "", "thoughtSignature": signature})
    return out


@settings(PROPERTIES, max_examples=examples(60))
@given(gemini_streams(max_candidates=1))
def test_generated_answers_come_back_as_the_same_parts_with_their_signatures(
    stream: GeminiStream,
) -> None:
    converter = rxgem.Converter(id_factory=counter_ids(), api=stream.expected.api)  # type: ignore[arg-type]
    chunks = list(converter.iterate([encode(stream.events)]))
    if not chunks or not any(c.choices for c in chunks):
        return
    message = _dump(sdk_accumulate(chunks).choices[0].message)
    calls = message.get("tool_calls") or []
    history = [
        {"role": "user", "content": "Go."},
        message,
        *({"role": "tool", "tool_call_id": c["id"], "content": "{}"} for c in calls),
    ]
    request = to_gemini_request({"model": "gemini-2.5-flash", "messages": history})
    answer = request["contents"][1:2]
    model = answer[0]["parts"] if answer and answer[0]["role"] == "model" else []
    assert [p for p in model if "functionCall" not in p] == parts_of(stream.events)
    want = stream.expected.choices[0].calls
    assert [
        (p["functionCall"]["name"], p["functionCall"]["args"], p.get("thoughtSignature"))
        for p in model
        if "functionCall" in p
    ] == [(c.name, c.args, c.signature) for c in want]
