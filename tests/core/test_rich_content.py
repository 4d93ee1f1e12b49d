"""Everything Gemini sends beyond text and calls reaches the OpenAI output: code, media,
built-in tool parts, grounding, citations, logprobs, finish details, prompt feedback.

Each test feeds Gemini events through a ``Converter`` and reads the result through the
real ``openai`` SDK (``ChatCompletionChunk.model_validate`` and ``ChatCompletionStreamState``).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import msgspec
import pytest
from pipeline_harness import check_protocol, counter_ids, sdk_accumulate

import rxgem
from rxgem.converter import ResponsesConverter
from rxgem.core import GenerateContentResponse, SlotTable
from rxgem.items import DataPart, Details, Feedback, Logprobs, Sources, Text
from rxgem.testing import FakeInteraction, interaction_stream, text_step
from rxgem.testing._interaction_script import code_steps, url_citation


def sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events)


def candidate(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": list(parts), "role": "model"}, **fields}]}


def convert(data: bytes, **options: Any) -> list[rxgem.ChatCompletionChunk]:
    converter = rxgem.Converter(id_factory=counter_ids(), clock=lambda: 0.0, **options)
    chunks = converter.feed(data) + converter.close()
    assert converter.error is None
    check_protocol(chunks)
    return chunks


def message(chunks: list[rxgem.ChatCompletionChunk], choice: int = 0) -> Any:
    return sdk_accumulate(chunks).choices[choice].message


def google(message: Any) -> dict[str, Any]:
    extra = (message.model_extra or {}).get("extra_content") or {}
    result: dict[str, Any] = extra.get("google", {})
    return result


def finish_google(chunks: list[rxgem.ChatCompletionChunk]) -> dict[str, Any]:
    finish = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    extra = finish[-1].choices[0].delta.extra_content or {}
    result: dict[str, Any] = extra.get("google", {})
    return result


CODE = {"executableCode": {"language": "PYTHON", "code": "print(6 * 7)\n"}}
RESULT = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "42\n"}}


# -- slot table: which item each part becomes ------------------------------------------------


def test_a_data_part_keeps_its_signature_and_never_becomes_the_text_signature() -> None:
    table = SlotTable()
    response = msgspec.json.decode(
        json.dumps(
            candidate(
                {"text": "Let me compute.", "thoughtSignature": "TEXTSIG"},
                {**CODE, "thoughtSignature": "CODESIG"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}},
            )
        ),
        type=GenerateContentResponse,
    )
    batch = table.feed(response)
    texts = [item for item in batch if type(item) is Text]
    parts = [item for item in batch if type(item) is DataPart]
    assert [t.signature for t in texts] == ["TEXTSIG"]
    assert [p.part.thought_signature for p in parts] == ["CODESIG", None]
    assert parts[0].part.executable_code == CODE["executableCode"]


def test_candidate_metadata_becomes_sources_logprobs_details_and_feedback_items() -> None:
    event = candidate(
        {"text": "Hi"},
        groundingMetadata={"webSearchQueries": ["hi"]},
        logprobsResult={"chosenCandidates": [], "logProbabilitySum": -1.5},
        avgLogprobs=-0.25,
        safetyRatings=[{"category": "HARM_CATEGORY_HARASSMENT", "probability": "LOW"}],
        finishReason="STOP",
        finishMessage="Done",
    )
    event["promptFeedback"] = {"safetyRatings": []}
    batch = SlotTable().feed(msgspec.json.decode(json.dumps(event), type=GenerateContentResponse))
    kinds = [type(item).__name__ for item in batch]
    assert kinds == ["Sources", "Text", "Logprobs", "Details", "Finish", "Feedback"]
    sources = next(item for item in batch if type(item) is Sources)
    assert sources.grounding == {"webSearchQueries": ["hi"]}
    details = next(item for item in batch if type(item) is Details)
    assert details.details == {
        "safety_ratings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "LOW"}],
        "avg_logprobs": -0.25,
        "log_probability_sum": -1.5,
        "finish_message": "Done",
    }
    assert next(item for item in batch if type(item) is Logprobs).candidate == 0
    assert next(item for item in batch if type(item) is Feedback).feedback == {"safetyRatings": []}


# -- code execution -----------------------------------------------------------------------------


def test_code_execution_is_fenced_in_the_content_and_lossless_in_the_extension() -> None:
    chunks = convert(
        sse(
            candidate({"text": "Computing:"}),
            candidate({**CODE, "thoughtSignature": "CODESIG"}),
            candidate(RESULT),
            candidate({"text": "The answer is 42."}, finishReason="STOP"),
        )
    )
    msg = message(chunks)
    assert msg.content == (
        "Computing:\n```python\nprint(6 * 7)\n```\n```output\n42\n```\nThe answer is 42."
    )
    assert google(msg)["parts"] == [
        {"index": 0, "content_index": 10, "part": {**CODE, "thoughtSignature": "CODESIG"}},
        {"index": 1, "content_index": 38, "part": RESULT},
    ]
    assert "thought_signature" not in google(msg)  # a code signature is not the text's


def test_render_code_false_keeps_code_out_of_the_content() -> None:
    msg = message(
        convert(
            sse(candidate(CODE, RESULT, {"text": "42"}, finishReason="STOP")), render_code=False
        )
    )
    assert msg.content == "42"
    assert [entry["content_index"] for entry in google(msg)["parts"]] == [0, 0]


def test_thought_code_goes_to_the_reasoning_field_and_a_failed_outcome_is_shown() -> None:
    failed = {"codeExecutionResult": {"outcome": "OUTCOME_FAILED", "output": "boom"}}
    msg = message(
        convert(
            sse(
                candidate(
                    {**CODE, "thought": True},
                    {**failed, "thought": True},
                    {"text": "x"},
                    finishReason="STOP",
                )
            )
        )
    )
    assert msg.content == "x"
    assert (
        msg.reasoning_content
        == "\n```python\nprint(6 * 7)\n```\n\n```output\nboom\n[OUTCOME_FAILED]\n```\n"
    )
    assert [entry["content_index"] for entry in google(msg)["parts"]] == [0, 0]


def test_a_fence_is_longer_than_any_backtick_run_in_the_code() -> None:
    code = {"executableCode": {"language": "PYTHON", "code": 'print("```")'}}
    msg = message(convert(sse(candidate(code, finishReason="STOP"))))
    assert msg.content == '````python\nprint("```")\n````\n'


# -- images, files and audio ------------------------------------------------------------------


def test_images_get_running_indices_so_the_sdk_keeps_them_apart() -> None:
    first = {"inlineData": {"mimeType": "image/png", "data": "AAAA"}, "thoughtSignature": "S1"}
    second = {"inlineData": {"mimeType": "image/jpeg", "data": "BBBB"}, "thoughtSignature": "S2"}
    link = {"fileData": {"mimeType": "image/webp", "fileUri": "gs://bucket/c.webp"}}
    chunks = convert(
        sse(candidate({"text": "Here:"}, first), candidate(second, link, finishReason="STOP"))
    )
    msg = message(chunks)
    images = (msg.model_extra or {})["images"]
    assert images == [
        {"index": 0, "type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"index": 1, "type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BBBB"}},
        {"index": 2, "type": "image_url", "image_url": {"url": "gs://bucket/c.webp"}},
    ]
    entries = google(msg)["parts"]
    assert [e["image_index"] for e in entries] == [0, 1, 2]
    # the base64 travels once, in images; the entry keeps the rest of the part
    assert entries[0]["part"] == {"inlineData": {"mimeType": "image/png"}, "thoughtSignature": "S1"}
    assert entries[1]["part"]["thoughtSignature"] == "S2"
    assert entries[0]["content_index"] == 5


def test_a_thought_image_and_a_document_stay_whole_in_the_extension() -> None:
    draft = {"inlineData": {"mimeType": "image/png", "data": "AAAA"}, "thought": True}
    pdf = {"inlineData": {"mimeType": "application/pdf", "data": "JVBERi0="}}
    msg = message(convert(sse(candidate(draft, pdf, finishReason="STOP"))))
    assert "images" not in (msg.model_extra or {})
    assert [e["part"] for e in google(msg)["parts"]] == [draft, pdf]


@pytest.mark.parametrize("sizes", [[1, 1, 1], [4, 5, 7], [3, 6], [2], [0, 5]])
def test_audio_pieces_concatenate_to_valid_base64_of_all_the_clips(sizes: list[int]) -> None:
    clips = [bytes(range(i * 10, i * 10 + n)) for i, n in enumerate(sizes)]
    events = [
        candidate(
            {
                "inlineData": {
                    "mimeType": "audio/L16;codec=pcm;rate=24000",
                    "data": base64.b64encode(c).decode(),
                }
            }
        )
        for c in clips
    ]
    events[-1]["candidates"][0]["finishReason"] = "STOP"
    chunks = convert(sse(*events))
    pieces = [c.choices[0].delta.audio for c in chunks if c.choices and c.choices[0].delta.audio]
    assert pieces[0]["id"].startswith("audio_")
    assert all("id" not in piece for piece in pieces[1:])
    assert all(len(piece["data"]) % 4 == 0 for piece in pieces)
    msg = message(chunks)
    assert base64.b64decode(msg.audio.data, validate=True) == b"".join(clips)
    assert [entry["audio_bytes"] for entry in google(msg)["parts"]] == sizes


def test_audio_that_is_not_base64_is_a_malformed_stream() -> None:
    bad = candidate({"inlineData": {"mimeType": "audio/wav", "data": "not base64!"}})
    converter = rxgem.Converter()
    chunks = converter.feed(sse(candidate({"text": "a"}), bad))
    assert [c.choices[0].delta.content for c in chunks] == ["a"]  # what came before is delivered
    assert isinstance(converter.error, rxgem.MalformedStreamError)
    assert "base64" in str(converter.error)


# -- built-in tool parts -------------------------------------------------------------------------


def test_built_in_tool_parts_keep_their_order_and_signatures() -> None:
    call = {
        "toolCall": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "args": {"q": "rx"}},
        "thoughtSignature": "A",
    }
    response = {
        "toolResponse": {"id": "t1", "toolType": "GOOGLE_SEARCH_WEB", "response": {"ok": 1}},
        "thoughtSignature": "B",
    }
    msg = message(
        convert(
            sse(
                candidate(call),
                candidate(response),
                candidate({"text": "Done"}, finishReason="STOP"),
            )
        )
    )
    assert [e["part"] for e in google(msg)["parts"]] == [call, response]
    assert msg.content == "Done"
    assert msg.tool_calls is None  # run by Google, never by the client


# -- grounding and citations -----------------------------------------------------------------------


ANSWER = ["Café ☕ ", "is open. ", "Tokyo 東京 is big."]


def _byte_span(text: str, part: str) -> tuple[int, int]:
    start = text.encode().index(part.encode())
    return start, start + len(part.encode())


def test_grounding_supports_become_url_citations_in_characters() -> None:
    text = "".join(ANSWER)
    s1, e1 = _byte_span(text, "is open.")
    s2, e2 = _byte_span(text, "Tokyo 東京 is big.")
    metadata = {
        "groundingChunks": [
            {"web": {"uri": "https://a.example", "title": "a.example"}},
            {"web": {"uri": "https://b.example", "title": "b.example"}},
        ],
        "groundingSupports": [
            {
                "segment": {"startIndex": s1, "endIndex": e1, "text": "is open."},
                "groundingChunkIndices": [0],
            },
            {
                "segment": {"startIndex": s2, "endIndex": e2, "text": "Tokyo 東京 is big."},
                "groundingChunkIndices": [0, 1],
            },
        ],
        "webSearchQueries": ["cafe tokyo"],
    }
    events = [candidate({"text": piece}, groundingMetadata={}) for piece in ANSWER]
    events.append(candidate({"text": ""}, groundingMetadata=metadata, finishReason="STOP"))
    chunks = convert(sse(*events))
    msg = message(chunks)
    cites = [
        (a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index)
        for a in msg.annotations
    ]
    c1 = text.index("is open.")
    c2 = text.index("Tokyo")
    assert cites == [
        ("https://a.example", c1, c1 + 8),
        ("https://a.example", c2, len(text)),
        ("https://b.example", c2, len(text)),
    ]
    assert msg.annotations[1].url_citation.title == "a.example"
    assert google(msg)["grounding_metadata"] == metadata
    # once, just before the finish
    annotated = [i for i, c in enumerate(chunks) if c.choices and c.choices[0].delta.annotations]
    finished = [i for i, c in enumerate(chunks) if c.choices and c.choices[0].finish_reason]
    assert len(annotated) == 1
    assert annotated[0] + 1 == finished[0]


def test_grounding_chunks_accumulate_across_events() -> None:
    first = {
        "groundingChunks": [{"web": {"uri": "https://one.example", "title": "one"}}],
        "webSearchQueries": ["q"],
    }
    second = {
        "groundingChunks": [{"web": {"uri": "https://two.example", "title": "two"}}],
        "groundingSupports": [
            {"segment": {"endIndex": 5, "text": "Hello"}, "groundingChunkIndices": [1]}
        ],
        "webSearchQueries": ["q", "r"],
    }
    chunks = convert(
        sse(
            candidate({"text": "Hello world"}, groundingMetadata=first),
            candidate({"text": "!"}, groundingMetadata=second, finishReason="STOP"),
        )
    )
    msg = message(chunks)
    assert [
        (a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index)
        for a in msg.annotations
    ] == [("https://two.example", 0, 5)]
    merged = google(msg)["grounding_metadata"]
    assert [c["web"]["title"] for c in merged["groundingChunks"]] == ["one", "two"]
    assert merged["webSearchQueries"] == ["q", "r"]


def test_a_support_is_placed_by_its_text_when_its_offsets_do_not_match() -> None:
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://x.example", "title": "x"}}],
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 3, "text": "world"},
                "groundingChunkIndices": [0],
            }
        ],
    }
    msg = message(
        convert(
            sse(candidate({"text": "Hello world"}, groundingMetadata=metadata, finishReason="STOP"))
        )
    )
    assert [(a.url_citation.start_index, a.url_citation.end_index) for a in msg.annotations] == [
        (6, 11)
    ]


def test_offsets_after_rendered_code_are_shifted_by_it() -> None:
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://x.example", "title": "x"}}],
        "groundingSupports": [
            {
                "segment": {"partIndex": 2, "startIndex": 0, "endIndex": 4, "text": "Done"},
                "groundingChunkIndices": [0],
            }
        ],
    }
    msg = message(
        convert(
            sse(
                candidate(
                    {"text": "a"},
                    CODE,
                    {"text": "Done"},
                    groundingMetadata=metadata,
                    finishReason="STOP",
                )
            )
        )
    )
    start = msg.content.index("Done")
    assert [(a.url_citation.start_index, a.url_citation.end_index) for a in msg.annotations] == [
        (start, start + 4)
    ]


def _cited(msg: Any) -> list[tuple[str, str]]:
    """Each annotation's url and the content it points at."""
    return [
        (a.url_citation.url, msg.content[a.url_citation.start_index : a.url_citation.end_index])
        for a in msg.annotations or []
    ]


def test_offsets_in_the_whole_text_skip_the_code_rendered_before_them() -> None:
    # Gemini's offsets count its text only; the content also shows the code
    before, said = "Let me check.\n", "Paris is the capital."
    s1, e1 = len(before), len(before) + len(said)
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://g.example", "title": "g"}}],
        "groundingSupports": [
            {"segment": {"startIndex": s1, "endIndex": e1}, "groundingChunkIndices": [0]},
            {"segment": {"startIndex": 0, "endIndex": 5}, "groundingChunkIndices": [0]},
        ],
    }
    citation = {
        "citationSources": [{"uri": "https://c.example", "startIndex": s1, "endIndex": s1 + 5}]
    }
    events = [
        candidate({"text": before}, groundingMetadata={}),
        candidate(CODE),
        candidate(RESULT),
        candidate(
            {"text": said},
            groundingMetadata=metadata,
            citationMetadata=citation,
            finishReason="STOP",
        ),
    ]
    msg = message(convert(sse(*events)))
    assert "```python" in msg.content
    assert _cited(msg) == [
        ("https://g.example", said),
        ("https://g.example", "Let m"),
        ("https://c.example", "Paris"),
    ]
    plain = message(convert(sse(*events), render_code=False))
    assert _cited(plain) == _cited(msg)


def test_a_citation_ending_where_code_was_rendered_stays_before_it() -> None:
    said = "Tokyo 東京."
    end = len(said.encode())
    citation = {"citationSources": [{"uri": "https://t.example", "startIndex": 0, "endIndex": end}]}
    events = [
        candidate({"text": said}, citationMetadata={}),
        candidate(CODE),
        candidate({"text": " And more."}, citationMetadata=citation, finishReason="STOP"),
    ]
    assert _cited(message(convert(sse(*events)))) == [("https://t.example", said)]


def test_an_interactions_annotation_after_a_code_step_points_at_its_text() -> None:
    before, said = "Let me compute it.\n", "2 to the 10th is 1024, says Ada 🙂."
    start = len(said.encode()) - len(" Ada 🙂.".encode()) + 1
    script = FakeInteraction(
        steps=[
            text_step(before),
            code_steps("print(2**10)", "1024\n", id="ce1"),
            text_step(said, annotations=[url_citation("https://ada.example", start, start + 8)]),
        ]
    )
    data = interaction_stream(script)
    for options in ({}, {"render_code": False}):
        converter = rxgem.Converter(
            upstream="interactions", id_factory=counter_ids(), clock=lambda: 0.0, **options
        )
        chunks = converter.feed(data) + converter.close()
        assert converter.error is None
        assert _cited(message(chunks)) == [("https://ada.example", "Ada 🙂")]


def test_the_responses_message_after_code_is_annotated_in_its_own_text() -> None:
    before, said = "Let me compute it.\n", "2 to the 10th is 1024, says Ada."
    start = said.index("Ada")
    script = FakeInteraction(
        steps=[
            text_step(before),
            code_steps("print(2**10)", "1024\n", id="ce1"),
            text_step(said, annotations=[url_citation("https://ada.example", start, start + 3)]),
        ]
    )
    converter = ResponsesConverter(upstream="interactions", id_factory=counter_ids())
    events = [e.to_dict() for e in converter.feed(interaction_stream(script)) + converter.close()]
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    texts = [item["content"][0] for item in done if item["type"] == "message"]
    assert [t["text"] for t in texts] == [before, said]
    cited = [
        (a["url"], t["text"][a["start_index"] : a["end_index"]])
        for t in texts
        for a in t["annotations"]
    ]
    assert cited == [("https://ada.example", "Ada")]


def test_citation_sources_become_url_citations_and_url_context_is_carried() -> None:
    text = "Zürich has a lake."
    s, e = _byte_span(text, "a lake")
    citation = {
        "citationSources": [
            {"startIndex": s, "endIndex": e, "uri": "https://lake.example", "license": "cc"}
        ]
    }
    urls = {
        "urlMetadata": [
            {
                "retrievedUrl": "https://lake.example",
                "urlRetrievalStatus": "URL_RETRIEVAL_STATUS_SUCCESS",
            }
        ]
    }
    msg = message(
        convert(
            sse(
                candidate(
                    {"text": text},
                    citationMetadata=citation,
                    urlContextMetadata=urls,
                    finishReason="STOP",
                )
            )
        )
    )
    start = text.index("a lake")
    assert [
        (a.url_citation.url, a.url_citation.start_index, a.url_citation.end_index)
        for a in msg.annotations
    ] == [("https://lake.example", start, start + 6)]
    assert google(msg)["citation_metadata"] == citation
    assert google(msg)["url_context_metadata"] == urls


def test_a_stream_without_grounding_sends_no_annotations() -> None:
    chunks = convert(sse(candidate({"text": "plain"}, finishReason="STOP")))
    assert all(not (c.choices and c.choices[0].delta.annotations) for c in chunks)
    assert message(chunks).annotations is None


# -- logprobs --------------------------------------------------------------------------------


def test_logprobs_ride_on_the_text_chunk_of_their_event() -> None:
    result = {
        "chosenCandidates": [
            {"token": "Hé", "tokenId": 5, "logProbability": -0.5},
            {"token": "!", "logProbability": -1.0},
        ],
        "topCandidates": [
            {
                "candidates": [
                    {"token": "Hé", "logProbability": -0.5},
                    {"token": "Hi", "logProbability": -2.0},
                ]
            },
            {"candidates": [{"token": "!"}]},
        ],
    }
    chunks = convert(
        sse(
            candidate(
                {"text": "Hé!"}, logprobsResult=result, avgLogprobs=-0.75, finishReason="STOP"
            )
        )
    )
    snapshot = sdk_accumulate(chunks).choices[0]
    tokens = snapshot.logprobs.content
    assert [(t.token, t.logprob, t.bytes) for t in tokens] == [
        ("Hé", -0.5, list("Hé".encode())),
        ("!", -1.0, [33]),
    ]
    assert [(t.token, t.logprob) for t in tokens[0].top_logprobs] == [("Hé", -0.5), ("Hi", -2.0)]
    assert tokens[1].top_logprobs[0].logprob == 0.0  # proto3 JSON leaves zeros out
    text_chunks = [c for c in chunks if c.choices and c.choices[0].delta.content]
    assert text_chunks[0].choices[0].logprobs is not None
    assert finish_google(chunks)["avg_logprobs"] == -0.75


# -- finish details, blocks, feedback, response metadata ------------------------------------


def test_the_finish_chunk_carries_the_candidates_details() -> None:
    ratings = [{"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"}]
    chunks = convert(
        sse(
            candidate({"text": "a"}, safetyRatings=[{"category": "X", "probability": "LOW"}]),
            candidate(
                {"text": "b"},
                safetyRatings=ratings,
                tokenCount=2,
                finishReason="STOP",
                finishMessage="Finished",
            ),
        )
    )
    assert finish_google(chunks) == {
        "safety_ratings": ratings,
        "token_count": 2,
        "finish_message": "Finished",
    }
    assert message(chunks).refusal is None  # a normal finish message is not a refusal


def test_a_safety_finish_message_is_the_refusal() -> None:
    chunks = convert(
        sse(
            candidate(
                {"text": "a"}, finishReason="SAFETY", finishMessage="Blocked: dangerous content"
            )
        )
    )
    snapshot = sdk_accumulate(chunks).choices[0]
    assert snapshot.finish_reason == "content_filter"
    assert snapshot.message.refusal == "Blocked: dangerous content"


def test_a_blocked_prompt_shows_its_message_and_its_feedback() -> None:
    feedback = {"blockReason": "MODEL_ARMOR", "blockReasonMessage": "Blocked by Model Armor policy"}
    chunks = convert(
        sse(
            {
                "promptFeedback": feedback,
                "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3},
            }
        )
    )
    snapshot = sdk_accumulate(chunks).choices[0]
    assert snapshot.finish_reason == "content_filter"
    assert snapshot.message.refusal == "Blocked by Model Armor policy"
    assert finish_google(chunks) == {"prompt_feedback": feedback}


def test_prompt_feedback_without_a_block_goes_to_choice_0s_finish() -> None:
    feedback = {
        "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]
    }
    event = candidate({"text": "ok"}, finishReason="STOP")
    event["promptFeedback"] = feedback
    assert finish_google(convert(sse(event))) == {"prompt_feedback": feedback}


def test_create_time_sets_created_and_model_status_reaches_the_finish() -> None:
    event = candidate({"text": "ok"}, finishReason="STOP")
    status = {"modelStage": "DEPRECATED", "retirementTime": "2026-12-31T00:00:00Z"}
    event.update(
        createTime="2025-06-01T12:00:00.123456789Z", modelStatus=status, modelVersion="gemini-x"
    )
    chunks = convert(sse(event))
    assert {c.created for c in chunks} == {1748779200}
    assert finish_google(chunks) == {"model_status": status}


def test_an_unreadable_create_time_falls_back_to_the_clock() -> None:
    event = candidate({"text": "ok"}, finishReason="STOP")
    event.update(createTime="yesterday", modelVersion="gemini-x")
    assert {c.created for c in convert(sse(event))} == {0}


def test_a_candidate_with_only_an_image_and_no_finish_is_truncated_after_the_image() -> None:
    converter = rxgem.Converter()
    image = {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}
    chunks = converter.feed(sse(candidate(image)))
    assert chunks[-1].choices[0].delta.images
    with pytest.raises(rxgem.TruncatedStreamError):
        converter.close()


def test_a_citation_after_non_ascii_text_that_came_before_any_metadata_is_placed() -> None:
    source = {"startIndex": 3, "endIndex": 9, "uri": "https://example.com/"}  # "quoted"
    chunks = convert(
        sse(
            candidate({"text": "é "}),
            candidate({"text": "quoted"}, citationMetadata={"citationSources": [source]}),
            candidate({"text": ""}, finishReason="STOP"),
        )
    )
    spans = [
        (a.url_citation.start_index, a.url_citation.end_index) for a in message(chunks).annotations
    ]
    assert spans == [(2, 8)]


def test_grounding_only_at_the_end_after_unkept_non_ascii_text_is_carried_but_not_placed() -> None:
    metadata = {
        "groundingChunks": [{"web": {"uri": "https://x.example", "title": "x"}}],
        "groundingSupports": [
            {
                "segment": {"startIndex": 8, "endIndex": 12, "text": "Ünïc"},
                "groundingChunkIndices": [0],
            }
        ],
    }
    chunks = convert(
        sse(
            candidate({"text": "Ünïcödé "}),
            candidate({"text": "and "}),
            candidate({"text": ""}, groundingMetadata=metadata, finishReason="STOP"),
        )
    )
    # the text before the metadata was not kept and is not ASCII: no annotation, but the
    # metadata is all there
    assert message(chunks).annotations is None
    assert google(message(chunks))["grounding_metadata"] == metadata
