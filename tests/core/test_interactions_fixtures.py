"""Every recorded Interactions stream and object (``tests/data/interactions``) read into
items, then to chat chunks and Responses events that the ``openai`` SDK validates, with
the text, calls, finish and usage that the recording's steps say."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from interactions_harness import (
    FAILING,
    OBJECTS,
    OLD,
    STREAMS,
    Said,
    name,
    read,
    said_by_object,
    said_by_stream,
    sse,
    to_chat,
    to_responses,
)
from responses_judge import check_sequence, sdk_final

from rxgem.core import (
    InteractionsParser,
    MalformedStreamError,
    SSEDecoder,
    StepReader,
    interaction_items,
)
from rxgem.items import ArgsDelta, Batch, DataPart, End, ToolCall, ToolCallHeader, Usage
from rxgem.testing import assert_openai_stream

GOOD_STREAMS = [path for path in STREAMS if name(path) not in FAILING | OLD]
GOOD_OBJECTS = [path for path in OBJECTS if name(path) not in OLD]

FINISH = {
    "completed": "stop",
    "requires_action": "tool_calls",
    "incomplete": "length",
    "budget_exceeded": "length",
}
STATUS = {"completed": "completed", "requires_action": "completed"}


def _quiet_read(data: bytes) -> tuple[list[Batch], Exception | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the unknown types' warnings: tested on their own
        return read([data])


def _quiet_object(path: Path) -> Batch:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return interaction_items(path.read_bytes())


def _check_outputs(batches: list[Batch], said: Said) -> None:
    """Chat and Responses outputs of ``batches`` against what the steps said."""
    names = [call_name for _, call_name, _ in said.calls]
    chunks = to_chat(batches, render_code=False)  # the text alone (code is in its parts)
    result = assert_openai_stream(chunks, tools=names or None)
    choice = result["choices"][0]
    message = choice["message"]
    assert (message.get("content") or "") == said.text
    assert (message.get("reasoning_content") or "") == said.thought
    calls = [
        (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls") or []
    ]
    assert calls == [(i, n, json.loads(a)) for i, n, a in said.calls]
    assert choice["finish_reason"] == (
        "tool_calls" if said.calls and said.status == "completed" else FINISH[said.status or ""]
    )
    usage = said.usage or {}
    if usage:
        assert result["usage"]["prompt_tokens"] == usage.get("total_input_tokens", 0) + usage.get(
            "total_tool_use_tokens", 0
        )
        assert result["usage"]["completion_tokens"] == usage.get(
            "total_output_tokens", 0
        ) + usage.get("total_thought_tokens", 0)
        assert result["usage"]["total_tokens"] == usage["total_tokens"]

    events = to_responses(batches)
    terminal = check_sequence(events)
    final = sdk_final(events)
    assert terminal["status"] == STATUS.get(said.status or "", "incomplete")
    texts = [
        part.text
        for item in final.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    ]
    assert "".join(texts) == said.text
    function_calls = [
        (item.call_id, item.name, item.arguments)
        for item in final.output
        if item.type == "function_call"
    ]
    assert [(i, n, json.loads(a)) for i, n, a in function_calls] == [
        (i, n, json.loads(a)) for i, n, a in said.calls
    ]
    if usage:
        assert terminal["usage"]["total_tokens"] == usage["total_tokens"]


@pytest.mark.parametrize("path", GOOD_STREAMS, ids=name)
def test_a_recorded_stream_gives_what_its_steps_say(path: Path) -> None:
    batches, error = _quiet_read(sse(path))
    assert error is None
    items = [item for batch in batches for item in batch]
    said = said_by_stream(path)
    # a streamed call: its header, its fragments as they came, then the call, whose
    # `arguments` is exactly their concatenation
    for slot, (call_id, call_name, arguments) in enumerate(said.calls):
        header = [i for i in items if type(i) is ToolCallHeader and i.slot == slot]
        assert [(h.id, h.name) for h in header] == [(call_id, call_name)]
        fragments = "".join(i.text for i in items if type(i) is ArgsDelta and i.slot == slot)
        (call,) = [i for i in items if type(i) is ToolCall and i.slot == slot]
        assert call.args == json.loads(arguments)
        assert call.arguments == (fragments or None)
    (end,) = [i for i in items if type(i) is End]
    assert end.reason == said.status
    assert end.has_calls == bool(said.calls)
    assert [type(i) for i in items][-2:] == [End, Usage]
    _check_outputs(batches, said)


@pytest.mark.parametrize("path", GOOD_OBJECTS, ids=name)
def test_a_recorded_object_gives_what_its_steps_say(path: Path) -> None:
    items = _quiet_object(path)
    said = said_by_object(path)
    (end,) = [i for i in items if type(i) is End]
    assert end.reason == said.status
    assert [i.name for i in items if type(i) is ToolCall] == [n for _, n, _ in said.calls]
    _check_outputs([items], said)


def test_the_streamed_arguments_are_sent_as_they_came_and_never_again() -> None:
    path = next(p for p in STREAMS if name(p) == "parallel-calls")
    batches, _ = _quiet_read(sse(path))
    fragments = [
        call["function"]["arguments"]
        for chunk in to_chat(batches)
        for choice in chunk.to_dict()["choices"]
        for call in choice["delta"].get("tool_calls") or []
        if call["index"] == 0 and "function" in call
    ]
    assert fragments == ["", '{"city":', ' "Zürich", "unit":', '"celsius"}', ""]
    events = [event.to_dict() for event in to_responses(batches)]
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    dones = [e["arguments"] for e in events if e["type"] == "response.function_call_arguments.done"]
    assert deltas[:3] == ['{"city":', ' "Zürich", "unit":', '"celsius"}']
    assert dones[0] == "".join(deltas[:3])
    assert dones == [
        '{"city": "Zürich", "unit":"celsius"}',
        '{"tz":"Europe/Zurich"}',
        '{"host":"example.com"}',
    ]


def test_a_thought_signature_rides_on_the_next_call_or_else_stays_in_its_place() -> None:
    calls, _ = _quiet_read(sse(next(p for p in STREAMS if name(p) == "tool-call-step1")))
    message = assert_openai_stream(to_chat(calls), tools=["getWeather"])["choices"][0]["message"]
    (call,) = message["tool_calls"]
    assert call["extra_content"]["google"]["thought_signature"].startswith("CiQBDDnWx+Xp")
    assert "extra_content" not in message
    text, _ = _quiet_read(sse(next(p for p in STREAMS if name(p) == "basic")))
    message = assert_openai_stream(to_chat(text))["choices"][0]["message"]
    (entry,) = message["extra_content"]["google"]["parts"]
    assert entry["content_index"] == 0  # the thought step came before the text
    assert entry["part"]["thought"] is True
    assert entry["part"]["thoughtSignature"].startswith("CiQBDDnWxzCn")
    assert "thought_signature" not in message["extra_content"]["google"]


def test_url_citations_land_on_the_text_they_cite() -> None:
    path = next(p for p in STREAMS if name(p) == "search-annotations")
    batches, _ = _quiet_read(sse(path))
    message = assert_openai_stream(to_chat(batches))["choices"][0]["message"]
    content = message["content"]
    cited = {
        a["url_citation"]["url"]: content[
            a["url_citation"]["start_index"] : a["url_citation"]["end_index"]
        ]
        for a in message["annotations"]
    }
    # the byte offsets Google sends (UTF-8, with ü and é) are characters in OpenAI's
    assert cited == {
        "https://example.com/spruengli": "Café Sprüngli is in Zürich.",
        "https://example.com/history": "It opened in 1836.",
    }
    final = sdk_final(to_responses(batches))
    (message_item,) = [item for item in final.output if item.type == "message"]
    annotations = message_item.content[0].annotations
    assert [(a.url, content[a.start_index : a.end_index]) for a in annotations] == list(
        cited.items()
    )


def test_code_execution_is_a_code_interpreter_call_between_the_texts() -> None:
    path = next(p for p in STREAMS if name(p) == "code-execution")
    batches, _ = _quiet_read(sse(path))
    final = sdk_final(to_responses(batches))
    code = [item for item in final.output if item.type == "code_interpreter_call"]
    assert [(c.code, c.outputs[0].logs) for c in code] == [("print(2**10)", "1024\n")]
    content = assert_openai_stream(to_chat(batches))["choices"][0]["message"]["content"]
    assert "```python\nprint(2**10)\n```" in content
    assert "```output\n1024\n```" in content


def test_built_in_tool_steps_are_the_parts_generate_content_gives() -> None:
    path = next(p for p in STREAMS if name(p) == "search-annotations")
    batches, _ = _quiet_read(sse(path))
    message = assert_openai_stream(to_chat(batches))["choices"][0]["message"]
    parts = [entry["part"] for entry in message["extra_content"]["google"]["parts"]]
    assert parts == [
        {
            "toolCall": {
                "id": "gs1",
                "toolType": "GOOGLE_SEARCH_WEB",
                "args": {"queries": ["Zürich café"]},
            },
            "thoughtSignature": "c2lnLXNlYXJjaA==",
        },
        {
            "toolResponse": {
                "id": "gs1",
                "toolType": "GOOGLE_SEARCH_WEB",
                "response": {"result": [{"search_suggestions": "<div>Zürich café</div>"}]},
            }
        },
    ]


def test_usage_maps_every_total_and_the_transitional_metadata_total_usage() -> None:
    items = interaction_items(
        next(p for p in OBJECTS if name(p) == "transitional-usage").read_bytes()
    )
    (usage,) = [i for i in items if type(i) is Usage]
    assert (usage.usage.prompt_token_count, usage.usage.candidates_token_count) == (2, 1)
    batches, _ = _quiet_read(sse(next(p for p in STREAMS if name(p) == "search-annotations")))
    (usage,) = [i for batch in batches for i in batch if type(i) is Usage]
    assert usage.usage.tool_use_prompt_token_count == 30
    assert [
        (m.modality, m.token_count) for m in usage.usage.tool_use_prompt_tokens_details or []
    ] == [("TEXT", 30)]


@pytest.mark.parametrize("path", [p for p in STREAMS + OBJECTS if name(p) in OLD], ids=name)
def test_the_schema_before_june_2026_is_refused_saying_so(path: Path) -> None:
    if path.suffix == ".json":
        with pytest.raises(MalformedStreamError, match="before June 2026"):
            interaction_items(path.read_bytes())
        return
    batches, error = read([sse(path)])
    assert batches == []
    assert isinstance(error, MalformedStreamError)
    assert error.event == 1
    assert "'interaction.start'" in str(error)
    assert "no longer serves" in str(error)


def test_an_objects_annotations_land_on_the_text_they_cite() -> None:
    first = "Zürich: "
    cited = "Café Sprüngli, 1836."
    body = {
        "id": "v1_o",
        "status": "completed",
        "steps": [
            {"type": "model_output", "content": [{"type": "text", "text": "Über. "}]},
            {"type": "thought", "signature": "c2ln"},
            {
                "type": "model_output",
                "content": [
                    {
                        "type": "text",
                        "text": first + cited,
                        "annotations": [
                            {
                                "type": "url_citation",
                                "url": "https://example.com/s",
                                "start_index": len(first.encode()),
                                "end_index": len((first + cited).encode()),
                            }
                        ],
                    }
                ],
            },
        ],
    }
    items = interaction_items(json.dumps(body))
    message = assert_openai_stream(to_chat([items]))["choices"][0]["message"]
    (annotation,) = message["annotations"]
    span = annotation["url_citation"]
    assert message["content"][span["start_index"] : span["end_index"]] == cited


def test_each_thought_step_signature_reaches_an_item_in_its_place() -> None:
    events = [
        {"event_type": "step.start", "index": 0, "step": {"type": "thought", "signature": "QQ=="}},
        {"event_type": "step.stop", "index": 0},
        {"event_type": "step.start", "index": 1, "step": {"type": "thought"}},
        {
            "event_type": "step.delta",
            "index": 1,
            "delta": {"type": "thought_signature", "signature": "Qg=="},
        },
        {"event_type": "step.stop", "index": 1},
        {
            "event_type": "step.start",
            "index": 2,
            "step": {"type": "function_call", "id": "c1", "name": "f", "arguments": {}},
        },
        {"event_type": "step.stop", "index": 2},
        {"event_type": "step.start", "index": 3, "step": {"type": "thought", "signature": "Qw=="}},
        {"event_type": "step.stop", "index": 3},
        {"event_type": "interaction.completed", "interaction": {"status": "requires_action"}},
    ]
    frames = "".join(f"data: {json.dumps(event)}\n\n" for event in events).encode()
    reader, parser = StepReader(), InteractionsParser()
    items = [
        item
        for event in SSEDecoder().feed(frames)
        for typed in parser.feed(event)
        for item in reader.feed(typed)
    ]
    signed = [
        item.part.thought_signature if type(item) is DataPart else item.signature
        for item in items
        if type(item) in (DataPart, ToolCallHeader)
    ]
    # the first in its place, the second on the call right after it, the last at the end
    assert signed == ["QQ==", "Qg==", "Qw=="]
    assert [
        type(item).__name__
        for item in items
        if type(item) in (DataPart, ToolCallHeader, ToolCall, End)
    ] == ["DataPart", "ToolCallHeader", "ToolCall", "DataPart", "End"]
