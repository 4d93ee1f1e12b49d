"""Bad Interactions input: a typed error naming the event's 1-based number and type, after
everything valid before it; types Google adds pass with a warning; a failed, cancelled or
erroring interaction is an API error after its output; a cut stream is truncated."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from interactions_harness import DATA, read, sse, to_chat, to_responses
from responses_judge import check_sequence

from rxgem.core import (
    GeminiAPIError,
    InteractionsParser,
    MalformedStreamError,
    SSEEvent,
    StepReader,
    TruncatedStreamError,
    interaction_items,
)
from rxgem.core.interactions._models import StepStop
from rxgem.items import ArgsDelta, End, Meta, Sources, Text, ToolCall, ToolCallHeader, UnknownStep
from rxgem.testing import assert_openai_stream

CREATED = {"event_type": "interaction.created", "interaction": {"id": "v1_x", "model": "m"}}
START = {"event_type": "step.start", "index": 0, "step": {"type": "model_output"}}
TEXT = {"event_type": "step.delta", "index": 0, "delta": {"type": "text", "text": "Hi"}}
STOP = {"event_type": "step.stop", "index": 0}
COMPLETED = {"event_type": "interaction.completed", "interaction": {"status": "completed"}}


def call_step(index: int, arguments: str) -> list[dict[str, Any]]:
    """A ``function_call`` step's start and one ``arguments_delta``."""
    step = {"type": "function_call", "id": "c1", "name": "f", "arguments": {}}
    delta = {"type": "arguments_delta", "arguments": arguments}
    return [
        {"event_type": "step.start", "index": index, "step": step},
        {"event_type": "step.delta", "index": index, "delta": delta},
    ]


def frames(*payloads: Any) -> bytes:
    return b"".join(
        f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n".encode() for p in payloads
    )


def texts(batches: list[list[Any]]) -> list[str]:
    return [i.text for batch in batches for i in batch if type(i) is Text]


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        ('{"event_type": "step.delta", "index": ', "invalid JSON"),
        (
            {"event_type": "step.delta", "index": "one", "delta": {}},
            "step.delta event of the wrong shape",
        ),
        (
            {"event_type": "step.start", "index": 1, "step": []},
            "step.start event of the wrong shape",
        ),
        ({"index": 1, "delta": {"type": "text", "text": "x"}}, "without an event_type"),
        ("[1, 2]", "a JSON list"),
        (
            {"event_type": "step.delta", "index": 7, "delta": {"type": "text", "text": "x"}},
            "step 7",
        ),
        ({"event_type": "step.stop", "index": 7}, "step.stop event for step 7"),
        ({**START, "index": 0}, "step.start event for step 0, which is open"),
        (
            {"event_type": "step.delta", "index": 0, "delta": {"type": "arguments_delta"}},
            "an arguments_delta of model_output step 0 that is not a string",
        ),
    ],
)
def test_a_malformed_event_names_its_number_after_the_valid_ones(bad: Any, expected: str) -> None:
    batches, error = read([frames(CREATED, START, TEXT, bad, STOP, COMPLETED)])
    assert texts(batches) == ["Hi"]
    assert isinstance(error, MalformedStreamError)
    assert error.event == 4
    assert expected in str(error)


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            {"object": "chat.completion.chunk", "id": "c", "choices": []},
            "an OpenAI chat.completion.chunk",
        ),
        (
            {"candidates": [{"content": {"parts": [{"text": "x"}]}}]},
            "a Gemini generateContent response",
        ),
        (
            {"event_type": "content.delta", "index": 0, "delta": {"type": "text"}},
            "before June 2026",
        ),
        ({"event_type": "interaction.start", "interaction": {}}, "'interaction.start'"),
    ],
)
def test_another_api_or_the_old_schema_is_refused_saying_what_it_is(
    payload: dict[str, Any], expected: str
) -> None:
    batches, error = read([frames(CREATED, payload)])
    assert isinstance(error, MalformedStreamError)
    assert error.event == 2
    assert expected in str(error)
    assert [type(i) for batch in batches for i in batch] == [Meta]


def test_the_event_type_of_the_sse_event_line_names_a_bare_event() -> None:
    parser = InteractionsParser()
    (event,) = parser.feed(SSEEvent(json.dumps({"index": 0}), event="step.stop", id="e9"))
    assert isinstance(event, StepStop)
    assert (event.index, event.event_id) == (0, "e9")


def test_a_bare_error_body_is_an_api_error() -> None:
    body = {"error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}}
    _, error = read([frames(body)])
    assert isinstance(error, GeminiAPIError)
    assert (error.code, error.status, error.event) == (429, "RESOURCE_EXHAUSTED", 1)


def test_bad_arguments_json_at_the_stop_names_the_event_after_the_fragments() -> None:
    batches, error = read([frames(*call_step(0, '{"a": '), STOP, COMPLETED)])
    items = [i for batch in batches for i in batch]
    assert [type(i) for i in items] == [ToolCallHeader, ArgsDelta]
    assert isinstance(error, MalformedStreamError)
    assert error.event == 3
    assert "step.stop event: the arguments of function_call step 0 (f)" in str(error)
    assert "not valid JSON" in str(error)


def test_an_error_event_is_an_api_error_after_the_output_before_it() -> None:
    batches, error = read([sse(DATA / "own" / "error-event.chunks.txt")])
    assert texts(batches) == ["Partial answer"]
    assert isinstance(error, GeminiAPIError)
    assert (error.status, error.event) == ("RESOURCE_EXHAUSTED", 4)
    assert "Quota exceeded" in str(error)
    chunks = to_chat(batches, error)
    assert assert_openai_stream(chunks, complete=False)["choices"][0]["message"]["content"] == (
        "Partial answer"
    )
    terminal = check_sequence(to_responses(batches, error))
    assert terminal["status"] == "failed"
    assert terminal["output"][0]["content"][0]["text"] == "Partial answer"


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_a_failed_or_cancelled_interaction_is_an_api_error_after_its_output(status: str) -> None:
    batches, error = read([sse(DATA / "own" / f"status-{status}.chunks.txt")])
    assert texts(batches) == ["The answer begins"]
    assert isinstance(error, GeminiAPIError)
    assert (error.status, error.event) == (status, 5)
    assert status in str(error)


def test_a_failed_object_is_an_api_error() -> None:
    body = {"id": "v1", "status": "failed", "steps": [], "errors": [{"message": "boom"}]}
    with pytest.raises(GeminiAPIError, match="failed: boom"):
        interaction_items(json.dumps(body))


@pytest.mark.parametrize("status", ["failed", "cancelled"])
def test_a_failed_object_carries_the_items_of_its_steps_on_its_error(status: str) -> None:
    body = {
        "id": "v1",
        "status": status,
        "model": "gemini-3-flash-preview",
        "steps": [
            {"type": "thought", "signature": "c2ln"},
            {"type": "model_output", "content": [{"type": "text", "text": "Partial answer"}]},
        ],
    }
    with pytest.raises(GeminiAPIError) as caught:
        interaction_items(json.dumps(body))
    assert caught.value.status == status
    items = list(caught.value.chunks)
    assert items[0] == Meta("v1", "gemini-3-flash-preview", None)
    assert [item.text for item in items if type(item) is Text] == ["Partial answer"]
    assert not any(type(item) is End for item in items)  # it did not finish


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{", "invalid JSON"),
        ('{"steps": 3}', "the wrong shape"),
        ('{"candidates": []}', "generateContent"),
        ('{"object": "chat.completion", "choices": []}', "an OpenAI chat.completion"),
    ],
)
def test_a_bad_object_is_refused_saying_why(body: str, expected: str) -> None:
    with pytest.raises(MalformedStreamError, match=expected):
        interaction_items(body)


def test_a_cut_stream_is_truncated_unless_allowed_and_gives_its_whole_calls() -> None:
    body = frames(CREATED, START, TEXT, STOP, *call_step(1, '{"a": 1}'))
    batches, error = read([body])
    assert isinstance(error, TruncatedStreamError)
    (call,) = [i for batch in batches for i in batch if type(i) is ToolCall]
    assert (call.args, call.arguments) == ({"a": 1}, '{"a": 1}')
    batches, error = read([body], allow_truncated=True)
    assert error is None
    assert batches[-1][-1] == End(0, None, True)
    _, error = read([b""])
    assert isinstance(error, TruncatedStreamError)
    assert "before any event" in str(error)


def test_unknown_step_delta_and_event_types_pass_with_one_warning_each() -> None:
    with pytest.warns(UserWarning, match="does not know the Interactions type") as caught:
        batches, error = read([sse(DATA / "own" / "unknown-types.chunks.txt")])
    assert error is None
    unknown = [i for batch in batches for i in batch if type(i) is UnknownStep]
    # passed on whole, as Google sent them
    assert [(i.kind, i.value) for i in unknown] == [
        ("hologram_call", {"type": "hologram_call", "id": "h1", "arguments": {"scene": "beach"}}),
        ("hologram_frame", {"type": "hologram_frame", "frame": 1}),
        (
            "interaction.heartbeat",
            {"event_type": "interaction.heartbeat", "interaction_id": "v1_own_unknown"},
        ),
        ("sparkle", {"type": "sparkle", "intensity": 3}),
    ]
    unknown_kinds = [i.kind for i in unknown]
    assert sorted(str(w.message).split("'")[1] for w in caught) == sorted(unknown_kinds)
    assert texts(batches) == ["Here is your scene."]
    result = assert_openai_stream(to_chat(batches))
    assert result["choices"][0]["message"]["content"] == "Here is your scene."
    assert check_sequence(to_responses(batches))["status"] == "completed"


def test_the_same_unknown_type_warns_once_per_reader() -> None:
    reader, parser = StepReader(), InteractionsParser()
    sparkle = {"event_type": "step.delta", "index": 0, "delta": {"type": "sparkle"}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for payload in (START, sparkle, sparkle, sparkle):
            for event in parser.feed(SSEEvent(json.dumps(payload))):
                reader.feed(event)
    assert len(caught) == 1


def test_the_reader_keeps_the_interaction_id_status_and_last_event_id() -> None:
    reader, parser = StepReader(), InteractionsParser()
    for payload, sse_id in ((CREATED, None), (START, "7"), ({**TEXT, "event_id": "e8"}, "8")):
        for event in parser.feed(SSEEvent(json.dumps(payload), id=sse_id)):
            batch = reader.feed(event)
    assert batch == [Text(0, "Hi")]
    assert (reader.interaction_id, reader.last_event_id) == ("v1_x", "e8")
    assert reader.status is None
    assert reader.feed(next(iter(parser.feed(SSEEvent(json.dumps(COMPLETED)))))) == [
        End(0, "completed", False)
    ]
    assert reader.status == "completed"


def test_the_first_model_output_asks_the_outputs_to_keep_the_text_once() -> None:
    batches, _ = read(
        [frames(CREATED, START, TEXT, STOP, {**START, "index": 1}, {**STOP, "index": 1})]
    )
    assert [i for batch in batches for i in batch if type(i) is Sources] == [Sources(0)]


def test_annotations_of_later_output_steps_count_the_bytes_of_the_steps_before() -> None:
    # an annotation's offsets are UTF-8 bytes within its step: the steps before it move them
    first = {**START, "step": {"type": "model_output", "content": [{"text": "Café. "}]}}
    note = {"type": "url_citation", "url": "https://e.x", "start_index": 0, "end_index": 2}
    delta = {"type": "text_annotation_delta", "annotations": [note]}
    events: list[dict[str, Any]] = [CREATED, first, STOP]
    for index in (1, 2):
        events += [
            {**START, "index": index},
            {**TEXT, "index": index},
            {"event_type": "step.delta", "index": index, "delta": delta},
            {**STOP, "index": index},
        ]
    batches, _ = read([frames(*events, COMPLETED)])
    cited = [i.citation for batch in batches for i in batch if type(i) is Sources and i.citation]
    # "Café. " is 7 bytes, each "Hi" 2
    assert [c["citationSources"][0]["startIndex"] for c in cited] == [7, 9]
