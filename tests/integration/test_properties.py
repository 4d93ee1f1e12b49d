"""Properties of the whole pipeline on generated Gemini streams, judged by the real openai SDK.

Every stream comes from ``strategies.gemini_streams`` with the outcome a correct translator must
produce (derived from the README rules by construction, never by running rxgem). The output is
checked through ``openai.types.chat.ChatCompletionChunk.model_validate`` and the SDK's
``ChatCompletionStreamState`` with strict tools (which parses every call's arguments).

Besides text, thoughts and calls, the streams hold the other parts (code execution, images, audio,
documents, built-in tool parts), grounding, logprobs and finish details, and may number their
enums (``enum-encoding=int``, read with the stream's ``api``) or come as a JSON array body.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai import ContentFilterFinishReasonError, LengthFinishReasonError
from openai.lib.streaming.chat import ChatCompletionStreamState
from pipeline_harness import check_protocol, run, sdk_validate, strict_tools
from strategies import (
    PROPERTIES,
    ExpectedChoice,
    Framing,
    GeminiStream,
    blocked_streams,
    encode,
    examples,
    framings,
    gemini_streams,
    same_json,
    split_points,
)

import rxgem

Outcome = tuple[list[rxgem.ChatCompletionChunk], Exception | None]

streams = gemini_streams(truncated=None)  # one candidate in six ends without a finishReason


def convert(stream: GeminiStream, framing: Framing, **options: Any) -> Outcome:
    options.setdefault("api", stream.expected.api)  # whose numbers integer enums are
    return run(encode(stream.events, framing), **options)


def fingerprint(outcome: Outcome) -> tuple[list[dict[str, Any]], str | None]:
    """Everything observable about a run, for comparing two runs."""
    chunks, error = outcome
    described = None if error is None else f"{type(error).__name__}: {error}"
    return [chunk.to_dict() for chunk in chunks], described


def sdk_completion(chunks: Sequence[rxgem.ChatCompletionChunk], names: Sequence[str]) -> Any:
    """The SDK's completion, accumulated with strict tools.

    With strict tools the SDK raises ``LengthFinishReasonError``/``ContentFilterFinishReasonError``
    on a ``length``/``content_filter`` finish, by design, after updating its snapshot: those are
    skipped and the snapshot is used. Every other SDK error (a bad delta, arguments that do not
    parse) propagates.
    """
    state: ChatCompletionStreamState[Any] = (
        ChatCompletionStreamState(input_tools=strict_tools(names))  # type: ignore[arg-type]
        if names
        else ChatCompletionStreamState()
    )
    for chunk in sdk_validate(chunks):
        try:
            for _event in state.handle_chunk(chunk):
                pass
        except (LengthFinishReasonError, ContentFilterFinishReasonError):
            pass
    snapshot = state.current_completion_snapshot
    if all(choice.finish_reason in ("stop", "tool_calls") for choice in snapshot.choices):
        return state.get_final_completion()
    return snapshot


def per_choice(chunks: Sequence[rxgem.ChatCompletionChunk]) -> dict[int, dict[str, Any]]:
    """Per choice, straight from the chunks: content, reasoning, finishes, chunk positions."""
    out: dict[int, dict[str, Any]] = {}
    for position, chunk in enumerate(chunks):
        for choice in chunk.choices:
            state = out.setdefault(
                choice.index,
                {"content": "", "reasoning": "", "finishes": [], "tool_positions": []},
            )
            state["content"] += choice.delta.content or ""
            state["reasoning"] += choice.delta.reasoning_content or ""
            if choice.delta.tool_calls:
                state["tool_positions"].append(position)
            if choice.finish_reason is not None:
                state["finishes"].append(
                    (position, choice.finish_reason, choice.native_finish_reason)
                )
    return out


def check_error(stream: GeminiStream, error: Exception | None) -> None:
    expected = stream.expected
    if expected.error is None:
        assert error is None, f"unexpected {error!r}"
    else:
        assert isinstance(error, rxgem.TruncatedStreamError), repr(error)
        assert error.candidates == expected.truncated


def signature_of(model: Any) -> str | None:
    extra = (model.model_extra or {}).get("extra_content")
    return extra["google"].get("thought_signature") if extra else None


def google_of(model: Any) -> dict[str, Any]:
    """``extra_content.google`` of an SDK model (a message, a delta), ``{}`` when absent."""
    extra = (model.model_extra or {}).get("extra_content")
    google: dict[str, Any] = extra["google"] if extra else {}
    return google


def deltas_of(chunks: Sequence[rxgem.ChatCompletionChunk], index: int) -> list[dict[str, Any]]:
    """The wire deltas of choice ``index``, in order."""
    return [
        choice["delta"]
        for chunk in chunks
        for choice in chunk.to_dict()["choices"]
        if choice["index"] == index
    ]


def cited(annotations: Any) -> list[tuple[str, str, int, int]]:
    return [
        (
            a.url_citation.url,
            a.url_citation.title,
            a.url_citation.start_index,
            a.url_citation.end_index,
        )
        for a in annotations or ()
    ]


def expected_tokens(want: ExpectedChoice) -> list[tuple[str, float, list[int], Any]]:
    """``(token, logprob, bytes, [(top token, logprob)...])`` of each expected logprobs entry."""
    return [(t.token, t.logprob, list(t.token.encode()), list(t.top)) for t in want.logprobs]


def check_parts(message: Any, want: ExpectedChoice, *, audio: bool = True) -> None:
    """The other parts of a choice as the SDK accumulated them (``audio``: check the audio)."""
    rendered = want.render()
    entries = google_of(message).get("parts", [])
    # each part with its own signature and thought flag, in order
    assert [
        (e["part"].get("thoughtSignature"), e["part"].get("thought") is True) for e in entries
    ] == [(p.signature, p.thought) for p in want.parts]
    assert entries == rendered.entries
    images = (message.model_extra or {}).get("images") or []
    assert [image["index"] for image in images] == list(range(len(images))), "dense indices"
    assert all(image["type"] == "image_url" for image in images)
    assert [image["image_url"]["url"] for image in images] == rendered.images
    if rendered.audio is None:
        assert message.audio is None
    elif audio:
        assert message.audio.id.startswith("audio_")
        clips = base64.b64decode(message.audio.data, validate=True)
        assert clips == rendered.audio
        assert base64.b64encode(clips).decode() == message.audio.data, "valid base64 throughout"


# -- properties ----------------------------------------------------------------------------


@settings(PROPERTIES, max_examples=examples(150))
@given(streams, framings)
def test_every_chunk_validates_and_the_sdk_accumulates_it(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    sdk_validate(chunks)
    check_protocol(chunks)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    assert len(completion.choices) == len(stream.expected.choices)
    assert completion.model == stream.expected.model
    if stream.expected.response_id is not None:
        assert completion.id == f"chatcmpl-{stream.expected.response_id}"
    for chunk in chunks:
        json.loads(chunk.to_json())  # the wire form is valid JSON too


@settings(PROPERTIES, max_examples=examples(150))
@given(streams, framings)
def test_content_and_reasoning_are_exactly_the_generated_text(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    got = per_choice(chunks)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    for index, want in enumerate(stream.expected.choices):
        assert got[index]["content"] == want.content, "content lost or doubled"
        assert got[index]["reasoning"] == want.reasoning, "reasoning lost or doubled"
        message = completion.choices[index].message
        assert message.content == (want.content or None)
        assert getattr(message, "reasoning_content", None) == (want.reasoning or None)
        assert signature_of(message) == want.text_signature


@settings(PROPERTIES, max_examples=examples(150))
@given(streams, framings)
def test_every_call_is_reported_once_with_its_final_args(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    for index, want in enumerate(stream.expected.choices):
        calls = completion.choices[index].message.tool_calls or []
        assert [c.function.name for c in calls] == [c.name for c in want.calls]
        for call, want_call in zip(calls, want.calls, strict=True):
            arguments = json.loads(call.function.arguments)
            assert same_json(arguments, want_call.args), (arguments, want_call.args)
            if call.function.parsed_arguments is not None:  # strict tools: the SDK parsed them
                assert call.function.parsed_arguments == want_call.args
            if want_call.id is not None:
                assert call.id == want_call.id
            else:
                assert call.id.startswith("call_")
            assert signature_of(call) == want_call.signature
        assert len({call.id for call in calls}) == len(calls), "tool ids must be unique"


@settings(PROPERTIES, max_examples=examples(150))
@given(streams, framings)
def test_indices_dense_ids_stable_one_finish_per_choice_after_its_calls(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    check_protocol(chunks)  # dense tool indices, id/type/name once, role once, choices in order
    got = per_choice(chunks)
    assert sorted(got) == list(range(len(stream.expected.choices)))
    ids: dict[tuple[int, int], str] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            for call in choice.delta.tool_calls or ():
                if call.id is not None:
                    ids[(choice.index, call.index)] = call.id
    for index, want in enumerate(stream.expected.choices):
        assert sum(1 for key in ids if key[0] == index) == len(want.calls)
        finishes = got[index]["finishes"]
        if want.finish is None:
            assert finishes == [], "a truncated candidate gets no finish"
            continue
        [(position, finish, native)] = finishes
        assert (finish, native) == (want.finish, want.native_finish)
        assert all(p < position for p in got[index]["tool_positions"]), "finish before a call"


@settings(PROPERTIES, max_examples=examples(100))
@given(streams, framings)
def test_other_parts_are_entries_in_order_with_their_own_signatures_images_and_audio(
    stream: GeminiStream, framing: Framing
) -> None:
    """Code, media and built-in tool parts: one ``extra_content.google.parts`` entry each (the
    part verbatim, its signature on it, ``content_index``, ``image_index``, ``audio_bytes``), images
    with dense running indices, audio that decodes to exactly the clips' bytes."""
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    for index, want in enumerate(stream.expected.choices):
        finished = index not in stream.expected.truncated
        check_parts(completion.choices[index].message, want, audio=finished)
        for delta in deltas_of(chunks, index):
            for image in delta.get("images") or ():
                assert image["image_url"]["url"].startswith(("data:image/", "https://"))


@settings(PROPERTIES, max_examples=examples(100))
@given(gemini_streams(truncated=None, grounded=True), framings)
def test_grounding_becomes_url_citations_at_the_offsets_of_the_generated_text(
    stream: GeminiStream, framing: Framing
) -> None:
    """Supports in UTF-8 bytes within a part → ``url_citation`` in characters of the content;
    the merged metadata in ``extra_content.google``; once per choice, just before its finish."""
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    for index, want in enumerate(stream.expected.choices):
        message = completion.choices[index].message
        google = google_of(message)
        if want.finish is None:  # truncated: no finish, so no sources either
            assert message.annotations is None
            assert "grounding_metadata" not in google
            continue
        rendered = want.render()
        assert cited(message.annotations) == rendered.annotations
        for _url, _title, start, end in rendered.annotations:
            assert 0 <= start < end <= len(message.content)
        assert google.get("grounding_metadata") == want.grounding
    sources = [
        (position, choice.index)
        for position, chunk in enumerate(sdk_validate(chunks))
        for choice in chunk.choices
        if "annotations" in (choice.delta.model_extra or {})
        or "grounding_metadata" in google_of(choice.delta)
    ]
    assert len({index for _, index in sources}) == len(sources), "sources once per choice"
    for position, index in sources:
        [after] = chunks[position + 1].choices
        assert (after.index, after.finish_reason is not None) == (index, True)


@settings(PROPERTIES, max_examples=examples(100))
@given(streams, framings)
def test_logprobs_in_order_and_the_finish_details(stream: GeminiStream, framing: Framing) -> None:
    """``logprobsResult`` → ``choices[].logprobs.content`` in order; the finish chunk's
    ``extra_content.google`` holds the last of each candidate field; a content_filter finish
    shows its ``finishMessage`` as the refusal."""
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    sdk_chunks = sdk_validate(chunks)
    for index, want in enumerate(stream.expected.choices):
        tokens = expected_tokens(want)
        sent = [
            (t.token, t.logprob, t.bytes, [(a.token, a.logprob) for a in t.top_logprobs])
            for chunk in sdk_chunks
            for choice in chunk.choices
            if choice.index == index and choice.logprobs is not None
            for t in choice.logprobs.content or ()
        ]
        assert sent == tokens
        finishes = [
            choice
            for chunk in sdk_chunks
            for choice in chunk.choices
            if choice.index == index and choice.finish_reason is not None
        ]
        if want.finish is None:
            assert finishes == []
            continue
        [finish] = finishes
        assert google_of(finish.delta) == want.details
        assert completion.choices[index].message.refusal == want.refusal
    for index, want in enumerate(stream.expected.choices):
        logprobs = completion.choices[index].logprobs
        accumulated = [
            (t.token, t.logprob, t.bytes, [(a.token, a.logprob) for a in t.top_logprobs])
            for t in (logprobs.content or [] if logprobs else [])
        ]
        assert accumulated == expected_tokens(want), "the SDK accumulates other logprobs"


@settings(PROPERTIES, max_examples=examples(100))
@given(streams, framings)
def test_usage_is_the_last_snapshot_with_counts_in_the_last_chunk(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    check_error(stream, error)
    usages = [chunk.usage for chunk in chunks if chunk.usage is not None]
    want = stream.expected.usage
    if want is None:
        assert usages == []
        return
    [usage] = usages
    assert chunks[-1].usage is usage
    assert usage.prompt_tokens == want["prompt_tokens"]
    assert usage.completion_tokens == want["completion_tokens"]
    assert usage.total_tokens == want["total_tokens"]
    details = usage.completion_tokens_details or {}
    assert details.get("reasoning_tokens") == want["reasoning_tokens"]
    cached = usage.prompt_tokens_details or {}
    assert cached.get("cached_tokens") == want["cached_tokens"]
    completion = sdk_completion(chunks, stream.expected.tool_names)
    assert completion.usage.total_tokens == want["total_tokens"]


@settings(PROPERTIES, max_examples=examples(100))
@given(gemini_streams(truncated=True), framings)
def test_a_candidate_without_finish_ends_the_stream_truncated_after_everything_was_delivered(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    assert isinstance(error, rxgem.TruncatedStreamError)
    assert error.candidates == stream.expected.truncated
    assert all(chunk.usage is None for chunk in chunks)
    check_protocol(chunks)
    got = per_choice(chunks)
    completion = sdk_completion(chunks, stream.expected.tool_names)
    for index, want in enumerate(stream.expected.choices):
        assert got[index]["content"] == want.content
        assert got[index]["reasoning"] == want.reasoning
        assert len(got[index]["finishes"]) == (0 if index in error.candidates else 1)
        check_parts(completion.choices[index].message, want)  # audio included
        calls = completion.choices[index].message.tool_calls or []
        assert [c.function.name for c in calls] == [c.name for c in want.calls]
        for call, want_call in zip(calls, want.calls, strict=True):
            assert same_json(json.loads(call.function.arguments), want_call.args)


@settings(PROPERTIES, max_examples=examples(40))
@given(blocked_streams(), framings)
def test_a_blocked_prompt_is_one_choice_with_content_filter(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing)
    assert error is None
    sdk_validate(chunks)
    check_protocol(chunks)
    [want] = stream.expected.choices
    got = per_choice(chunks)
    assert list(got) == [0]
    [(_, finish, native)] = got[0]["finishes"]
    assert (finish, native) == (want.finish, want.native_finish)
    assert got[0]["content"] == ""
    completion = sdk_completion(chunks, [])
    assert completion.choices[0].finish_reason == want.finish
    if stream.expected.usage is not None:
        assert completion.usage.prompt_tokens == stream.expected.usage["prompt_tokens"]
    else:
        assert completion.usage is None


@settings(PROPERTIES, max_examples=examples(80))
@given(streams, framings, st.data())
def test_output_does_not_depend_on_how_the_bytes_are_split(
    stream: GeminiStream, framing: Framing, data: st.DataObject
) -> None:
    body = encode(stream.events, framing)
    whole = fingerprint(run(body))
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(body) - 1)), max_size=20)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert fingerprint(run([p for p in pieces if p])) == whole
    if len(body) > 1:  # empty pieces are allowed too
        assert fingerprint(run([body[:1], b"", body[1:]])) == whole


@settings(PROPERTIES, max_examples=examples(80))
@given(streams, framings, st.data())
def test_output_does_not_depend_on_splits_inside_utf8_sequences_and_crlf_pairs(
    stream: GeminiStream, framing: Framing, data: st.DataObject
) -> None:
    body = encode(stream.events, framing)
    awkward = split_points(body)
    if not awkward:
        return
    cuts = sorted(data.draw(st.sets(st.sampled_from(awkward), min_size=1, max_size=30)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert fingerprint(run(pieces)) == fingerprint(run(body))


@settings(PROPERTIES, max_examples=examples(30))
@given(streams, framings)
def test_output_does_not_depend_on_splits_one_byte_at_a_time(
    stream: GeminiStream, framing: Framing
) -> None:
    body = encode(stream.events, framing)
    assert fingerprint(run([body[i : i + 1] for i in range(len(body))])) == fingerprint(run(body))


@settings(PROPERTIES, max_examples=examples(80))
@given(streams, framings)
def test_output_does_not_depend_on_the_line_ending_style(
    stream: GeminiStream, framing: Framing
) -> None:
    outcomes = [
        fingerprint(run(encode(stream.events, framing.with_eol(eol))))
        for eol in ("\n", "\r\n", "\r")
    ]
    assert outcomes[0] == outcomes[1] == outcomes[2]


@settings(PROPERTIES, max_examples=examples(60))
@given(streams, framings)
def test_announce_none_gives_the_same_final_messages(
    stream: GeminiStream, framing: Framing
) -> None:
    first, error_first = convert(stream, framing)
    none, error_none = convert(stream, framing, announce="none")
    assert repr(error_first) == repr(error_none)
    check_protocol(none)
    assert without_minted_ids(first) == without_minted_ids(none)


def without_minted_ids(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[dict[str, Any]]:
    """The assembled choices, minted ``call_…``/``audio_…`` ids left out (they are minted in
    another order)."""
    choices: list[dict[str, Any]] = rxgem.assemble(list(chunks))["choices"]
    for choice in choices:
        for call in choice["message"].get("tool_calls") or ():
            if call["id"].startswith("call_"):
                del call["id"]
        audio = choice["message"].get("audio")
        if audio is not None:
            assert audio.pop("id").startswith("audio_")
    return choices


@settings(PROPERTIES, max_examples=examples(60))
@given(gemini_streams(truncated=True), framings)
def test_allow_truncated_ends_every_choice_with_a_finish_instead_of_an_error(
    stream: GeminiStream, framing: Framing
) -> None:
    chunks, error = convert(stream, framing, allow_truncated=True)
    assert error is None
    check_protocol(chunks)
    got = per_choice(chunks)
    for index, want in enumerate(stream.expected.choices):
        [(position, finish, native)] = got[index]["finishes"]
        if want.finish is None:  # the truncated ones: no native reason, stop or tool_calls
            assert native is None
            assert finish == ("tool_calls" if want.calls else "stop")
        else:
            assert (finish, native) == (want.finish, want.native_finish)
        assert all(p < position for p in got[index]["tool_positions"])
        assert got[index]["content"] == want.content
    usages = [chunk.usage for chunk in chunks if chunk.usage is not None]
    want_usage = stream.expected.last_usage
    assert [u.total_tokens for u in usages] == ([want_usage["total_tokens"]] if want_usage else [])
    sdk_completion(chunks, stream.expected.tool_names)


@settings(PROPERTIES, max_examples=examples(60))
@given(streams, framings, st.sampled_from(["reasoning", None]), st.booleans(), st.booleans())
def test_reasoning_field_render_code_and_include_usage_options(
    stream: GeminiStream,
    framing: Framing,
    field: str | None,
    include_usage: bool,
    render_code: bool,
) -> None:
    chunks, error = convert(
        stream, framing, reasoning_field=field, include_usage=include_usage, render_code=render_code
    )
    check_error(stream, error)
    check_protocol(chunks)
    for index, want in enumerate(stream.expected.choices):
        rendered = want.render(render_code=render_code)
        content = reasoning = ""
        for chunk in chunks:
            for choice in chunk.choices:
                if choice.index == index:
                    content += choice.delta.content or ""
                    reasoning += choice.delta.reasoning or ""
                    assert choice.delta.reasoning_content is None
        assert content == rendered.content
        assert reasoning == (rendered.reasoning if field == "reasoning" else "")
        deltas = deltas_of(chunks, index)
        entries = [
            entry
            for delta in deltas
            for entry in delta.get("extra_content", {}).get("google", {}).get("parts", [])
        ]
        assert entries == rendered.entries  # content_index counts the content as sent
        if want.finish is not None:
            annotations = [a for delta in deltas for a in delta.get("annotations") or ()]
            got = [a["url_citation"] for a in annotations]
            assert [
                (a["url"], a["title"], a["start_index"], a["end_index"]) for a in got
            ] == rendered.annotations
    has_usage = any(chunk.usage is not None for chunk in chunks)
    assert has_usage == (include_usage and stream.expected.usage is not None)


# -- examples the generator keeps away from: README rules the code does not follow -----------------


def _sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events)


def _event(*parts: dict[str, Any], index: int = 0, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": index}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def _streamed(name: str, *pieces: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        _event({"functionCall": {"name": name, "willContinue": True}}),
        *(_event({"functionCall": {"partialArgs": [p], "willContinue": True}}) for p in pieces),
    ]


def test_every_opened_choice_gets_exactly_one_finish() -> None:
    """Only candidate 1 appears: choice 0 opens first (choices open in order) and must end too."""
    chunks, error = run(_sse(_event({"text": "hi"}, index=1, finish="STOP")))
    assert error is None
    got = per_choice(chunks)
    assert sorted(got) == [0, 1]
    for index, state in got.items():
        assert len(state["finishes"]) == 1, f"choice {index} never finished"


def test_a_part_index_does_not_count_function_call_parts() -> None:
    """README: ``partIndex`` counts the content's parts (consecutive text parts are one part,
    a data part is one); a functionCall part is not content, so "Tokyo" is in part 0 here."""
    chunk = {"web": {"uri": "https://a.example", "title": "A"}}
    segment = {"partIndex": 0, "startIndex": 6, "endIndex": 11}
    metadata = {
        "groundingChunks": [chunk],
        "groundingSupports": [{"segment": segment, "groundingChunkIndices": [0]}],
    }
    first = _event({"text": "Intro "})
    first["candidates"][0]["groundingMetadata"] = {}
    last = _event({"text": "Tokyo is big"}, finish="STOP")
    last["candidates"][0]["groundingMetadata"] = metadata
    chunks, error = run(_sse(first, _event({"functionCall": {"name": "f", "args": {}}}), last))
    assert error is None
    message = sdk_completion(chunks, ["f"]).choices[0].message
    assert message.content == "Intro Tokyo is big"
    assert cited(message.annotations) == [("https://a.example", "A", 6, 11)]


def test_a_named_call_completes_the_streamed_call() -> None:
    """README: a streamed call is complete at the next named call; a later piece is an orphan."""
    events = [
        *_streamed("s", {"jsonPath": "$.q", "stringValue": "he", "willContinue": True}),
        _event({"functionCall": {"name": "g", "args": {"k": 1}}}),
        _event({"functionCall": {"partialArgs": [{"jsonPath": "$.q", "stringValue": "y"}]}}),
    ]
    _chunks, error = run(_sse(*events))
    assert isinstance(error, rxgem.MalformedStreamError)
    assert "no streamed call was open" in str(error)


def test_a_named_call_with_an_id_completes_the_streamed_call() -> None:
    events = [
        *_streamed("s", {"jsonPath": "$.q", "stringValue": "he", "willContinue": True}),
        _event({"functionCall": {"name": "g", "args": {"k": 1}, "id": "g-0001"}}),
        _event({"functionCall": {"partialArgs": [{"jsonPath": "$.q", "stringValue": "y"}]}}),
    ]
    table = rxgem.core.SlotTable()
    for event in events[:-1]:
        table.feed(msgspec.convert(event, rxgem.core.GenerateContentResponse))
    assert table.slots()[0].complete, "the streamed call is still open"
    _chunks, error = run(_sse(*events))
    assert isinstance(error, rxgem.MalformedStreamError)


@pytest.mark.parametrize(
    ("path", "key"),
    [("$['it\\'s']", "it's"), ("$['a\\\\b']", "a\\b"), ("$['a.b[0]']", "a.b[0]"), ("$.é", "é")],
)
def test_bracket_quoted_json_paths(path: str, key: str) -> None:
    events = [*_streamed("s", {"jsonPath": path, "numberValue": 1}), _event(finish="STOP")]
    chunks, error = run(_sse(*events))
    assert error is None
    [call] = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {key: 1}


@pytest.mark.parametrize(
    ("path", "key"),
    [("$['a\\nb']", "a\nb"), ("$['tab\\there']", "tab\there"), ("$['\\u0001']", "\x01")],
    ids=["newline", "tab", "control-u0001"],
)
def test_rfc_9535_escapes_in_bracket_quoted_json_paths(path: str, key: str) -> None:
    events = [*_streamed("s", {"jsonPath": path, "numberValue": 1}), _event(finish="STOP")]
    chunks, error = run(_sse(*events))
    assert error is None
    [call] = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {key: 1}
