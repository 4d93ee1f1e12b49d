"""The Responses output on every sample, corpus file and generated stream: the same events
three ways, whatever the splitting of the bytes, each event valid for the ``openai`` SDK
(strict validation) and accumulated by it to the response ``response.completed`` carries.

The three ways: ``ResponsesConverter`` fed the bytes, ``gemini_to_responses()`` (one Rx hop
over it), and the reference: the cores of ``RESPONSES_STAGES`` composed by hand with
``test_equivalence.drive`` (the core protocol and nothing else).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from responses_judge import (
    Outcome,
    check_sequence,
    deterministic,
    run_converter,
    run_operator,
    sdk_final,
    sdk_validate,
)
from strategies import PROPERTIES, blocked_streams, encode, examples, framings, gemini_streams
from test_equivalence import drive

from rxgem import samples
from rxgem.converter import ResponsesConverter
from rxgem.core.pipeline import RESPONSES_STAGES, PipelineSettings
from rxgem.core.responses import decode_signatures

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CORPUS_NAMES = sorted(path.stem for path in CORPUS.glob("*.bin"))
SAMPLES = samples.names()
BATCHED = tuple(stage.batched for stage in RESPONSES_STAGES)


def run_reference(
    pieces: Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> Outcome:
    cores = PipelineSettings(deterministic(options), RESPONSES_STAGES).cores()
    return drive(cores, BATCHED, pieces, fail)


def fingerprint(outcome: Outcome) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    events, error = outcome
    return [e.to_dict() for e in events], (
        None if error is None else (type(error).__name__, str(error))
    )


def in_pieces(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)] or [b""]


def agreed(pieces: Sequence[bytes], *, fail: Exception | None = None, **options: Any) -> Outcome:
    """The outcome, the same three ways (else the assertion names the way that differs)."""
    ways = {
        "converter": run_converter(pieces, fail=fail, **options),
        "gemini_to_responses": run_operator(pieces, fail=fail, **options),
        "reference": run_reference(pieces, fail=fail, **options),
    }
    expected = fingerprint(ways["reference"])
    for name, outcome in ways.items():
        assert fingerprint(outcome) == expected, name
    return ways["converter"]


def judged(outcome: Outcome) -> None:
    """Every event valid for the SDK; a started response ends with its terminal event,
    which the SDK's accumulator reaches too."""
    events, error = outcome
    if not events:
        assert error is not None, "a stream that ended well gives a response"
        return
    response = check_sequence(events)
    final = sdk_final(events)
    assert final.id == response["id"]
    if response["status"] == "completed":
        assert [item.model_dump(exclude_none=True) for item in final.output] == response["output"]
    else:  # the accumulator's snapshot: the items as their deltas built them
        assert [(item.type, item.id) for item in final.output] == [
            (item["type"], item["id"]) for item in response["output"]
        ]
        assert [_text(item.model_dump()) for item in final.output] == [
            _text(item) for item in response["output"]
        ]
    if response["status"] == "failed":
        assert "error" in response
    if error is not None:
        assert response["status"] == "failed"


def _text(item: dict[str, Any]) -> str:
    return "".join(part.get("text") or "" for part in item.get("content") or [])


def body_of(name: str) -> bytes:
    return samples.read(name) if name in SAMPLES else (CORPUS / f"{name}.bin").read_bytes()


def options_for(name: str) -> dict[str, Any]:
    expected = samples.expected().get(name)
    return {"api": expected.get("api", "gemini")} if expected else {}


@pytest.mark.parametrize("announce", ["first", "none"])
@pytest.mark.parametrize("name", SAMPLES + CORPUS_NAMES)
def test_every_body_gives_the_same_valid_events_three_ways_however_split(
    name: str, announce: str
) -> None:
    body = body_of(name)
    options = {**options_for(name), "announce": announce}
    whole = agreed([body], **options)
    judged(whole)
    for size in (1, 7, 64):
        if size == 1 and len(body) > 20_000:
            continue
        assert fingerprint(agreed(in_pieces(body, size), **options)) == fingerprint(whole)


@pytest.mark.parametrize("name", SAMPLES)
def test_a_body_cut_off_by_the_transport_fails_with_what_came_before(name: str) -> None:
    body = body_of(name)
    cut = body[: len(body) // 2]
    outcome = agreed(in_pieces(cut, 7), fail=ConnectionResetError("gone"), **options_for(name))
    judged(outcome)


@pytest.mark.parametrize("name", SAMPLES)
def test_samples_meet_their_expectation(name: str) -> None:
    expected = samples.expected()[name]
    events, error = run_converter(body_of(name), **options_for(name))
    assert (type(error).__name__ if error else None) == (
        expected["error"]["type"] if expected["error"] else None
    )
    response = check_sequence(events)
    if expected["response_id"]:
        assert response["id"] == f"resp_{expected['response_id']}"
    assert response["model"] == expected["model"]
    want = expected["choices"][0] if expected["choices"] else None
    texts = [
        part["text"]
        for item in response["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    ]
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    thoughts = [
        part["text"]
        for item in response["output"]
        if item["type"] == "reasoning"
        for part in item["summary"]
    ]
    if want is None:
        assert texts == calls == thoughts == []
        return
    chat_content = want["content"] or ""
    code_shown = bool(want.get("parts")) and "```" in chat_content
    if not code_shown:  # chat shows code as Markdown in the content; Responses as its own item
        assert "".join(texts) == chat_content
        assert ("".join(thoughts) or None) == want["reasoning"]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        (w["function"]["name"], w["function"]["arguments"]) for w in want["tool_calls"]
    ]
    for call, want_call in zip(calls, want["tool_calls"], strict=True):
        if want_call["id"] is not None:
            assert call["call_id"] == want_call["id"]
    if expected["error"] is None:
        finish = want["finish_reason"]
        if finish in ("stop", "tool_calls"):
            assert response["status"] == "completed"
        elif finish == "length":
            assert response["incomplete_details"] == {"reason": "max_output_tokens"}
        elif response["status"] == "failed":  # a blocked prompt
            assert response["error"]["code"] == "invalid_prompt"
        else:
            assert response["incomplete_details"] == {"reason": "content_filter"}
    if expected["usage"] is not None and expected["error"] is None:
        usage = response["usage"]
        assert usage["input_tokens"] == expected["usage"]["prompt_tokens"]
        assert usage["output_tokens"] == expected["usage"]["completion_tokens"]
        assert usage["total_tokens"] == expected["usage"]["total_tokens"]
        assert usage["output_tokens_details"]["reasoning_tokens"] == (
            expected["usage"]["reasoning_tokens"] or 0
        )
        assert usage["input_tokens_details"]["cached_tokens"] == (
            expected["usage"]["cached_tokens"] or 0
        )


@pytest.mark.parametrize("name", SAMPLES)
def test_every_signature_rides_in_encrypted_content_when_asked(name: str) -> None:
    converter = ResponsesConverter(**deterministic({"include_encrypted_reasoning": True}))
    events = list(converter.feed(body_of(name)))
    try:
        events += converter.close()
    except Exception as error:
        events += getattr(error, "chunks", [])
    response = events[-1].to_dict()["response"]
    placed = converter.placed  # signatures standing in their place: their own items
    carried = [
        item["encrypted_content"]
        for item in response["output"]
        if item["type"] == "reasoning" and "encrypted_content" in item and item["id"] not in placed
    ]
    for item in response["output"]:
        if item["id"] in placed:
            assert decode_signatures(item["encrypted_content"]) == placed[item["id"]]
    if response["output"]:  # the reasoning item first, before what its signatures sign
        assert response["output"][0]["type"] == "reasoning"
    if not converter.signatures:
        assert carried == []
        return
    (content,) = carried
    assert decode_signatures(content) == converter.signatures
    call_ids = {item["call_id"] for item in response["output"] if item["type"] == "function_call"}
    for signature in converter.signatures:
        if signature.kind == "call":
            assert signature.call_id in call_ids
    sdk_validate(events)


@settings(PROPERTIES, max_examples=examples(60))
@given(
    st.one_of(gemini_streams(truncated=None), blocked_streams()),
    framings,
    st.sampled_from(["first", "none"]),
    st.booleans(),
    st.data(),
)
def test_generated_streams_agree_and_validate(
    stream: Any, framing: Any, announce: str, include: bool, data: st.DataObject
) -> None:
    body = encode(stream.events, framing)
    options: dict[str, Any] = {"announce": announce, "include_encrypted_reasoning": include}
    whole = agreed([body], **options)
    judged(whole)
    assert fingerprint(agreed(in_pieces(body, 7), **options)) == fingerprint(whole)
    cut = data.draw(st.integers(0, len(body)), label="source fails at byte")
    judged(agreed(in_pieces(body[:cut], 7), fail=ConnectionResetError("gone"), **options))


@pytest.mark.parametrize("name", ["text.sse", "truncated.sse", "error_mid_stream.sse"])
def test_iterate_and_aiterate_give_the_events_then_the_error(name: str) -> None:
    import asyncio

    body = body_of(name)
    expected_events, expected_error = run_converter(in_pieces(body, 50))
    pieces = in_pieces(body, 50)

    def collect_sync() -> Outcome:
        converter = ResponsesConverter(**deterministic({}))
        events: list[Any] = []
        try:
            for event in converter.iterate(iter(pieces)):
                events.append(event)
        except Exception as error:
            return events, error
        return events, None

    async def collect_async() -> Outcome:
        async def body_stream() -> Any:
            for piece in pieces:
                yield piece

        converter = ResponsesConverter(**deterministic({}))
        events: list[Any] = []
        try:
            async for event in converter.aiterate(body_stream()):
                events.append(event)
        except Exception as error:
            return events, error
        return events, None

    for outcome in (collect_sync(), asyncio.run(collect_async())):
        assert fingerprint(outcome) == fingerprint((expected_events, expected_error))
    assert (expected_error is None) == (name == "text.sse")
