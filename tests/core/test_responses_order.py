"""The Responses output in the stream's order: a run of text (or of thoughts) is one item,
and what comes after another item opens a new one after it, so that the final ``output``
reads as the stream did (a client lists ``output`` in order, or items as they are done).
Judged by the ``openai`` SDK's strict validation and accumulator."""

from __future__ import annotations

from typing import Any

from responses_judge import check_sequence, run_converter, run_operator, sdk_final

from rxgem import samples
from rxgem.converter import Converter
from rxgem.core import assemble_response
from rxgem.core.responses import decode_signatures
from rxgem.testing import call, event, finish, text, thought, usage
from rxgem.testing._gemini_builders import candidate_fields, code, code_result, media

CODE_BETWEEN_TEXT = [
    event(text("Let me run it.")),
    event(code("print(1)")),
    event(code_result("1\n")),
    event(text("It printed 1.")),
    event(finish("STOP"), usage(5, 9)),
]


def kinds(response: dict[str, Any]) -> list[str]:
    return [item["type"] for item in response["output"]]


def message_texts(response: dict[str, Any]) -> list[str]:
    return [item["content"][0]["text"] for item in response["output"] if item["type"] == "message"]


def in_stream_order(events: list[Any]) -> None:
    """Each item's events (``added``, deltas, ``done``) come before the next item's."""
    indices = [d["output_index"] for d in (e.to_dict() for e in events) if "output_index" in d]
    assert indices == sorted(indices), f"items interleave: {indices}"


def test_text_after_code_is_a_new_message_after_the_code() -> None:
    events, error = run_converter(CODE_BETWEEN_TEXT)
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["message", "code_interpreter_call", "message"]
    assert message_texts(response) == ["Let me run it.", "It printed 1."]
    first, _, second = response["output"]
    assert first["id"] != second["id"]
    assert first["status"] == second["status"] == "completed"
    in_stream_order(events)
    final = sdk_final(events)
    assert [item.type for item in final.output] == kinds(response)
    assert final.output[2].content[0].text == "It printed 1."
    assert final.output_text == "Let me run it.It printed 1."


def test_the_capture_with_text_around_code_reads_in_its_order() -> None:
    # text, code (with a STOP mid-stream), its result, more text, then a call
    events, error = run_converter(samples.read("mid_stream_finish"))
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["message", "code_interpreter_call", "message", "function_call"]
    first, second = message_texts(response)
    assert first.startswith("Let me work out the compound growth")
    assert second.startswith("After 7 years at 4.2% a year")
    in_stream_order(events)
    final = sdk_final(events)
    assert [item.type for item in final.output] == kinds(response)


def test_the_operator_and_the_assembled_answer_keep_the_order() -> None:
    events, error = run_operator(CODE_BETWEEN_TEXT)
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["message", "code_interpreter_call", "message"]
    assembled = assemble_response(events).to_dict()  # a request without ``stream``
    assert assembled == response
    assert message_texts(assembled) == ["Let me run it.", "It printed 1."]


def test_chat_keeps_one_content_in_the_same_order() -> None:
    converter = Converter()
    chunks = [chunk for data in CODE_BETWEEN_TEXT for chunk in converter.feed(data)]
    chunks += converter.close()
    content = "".join(choice.delta.content or "" for chunk in chunks for choice in chunk.choices)
    assert content == "Let me run it.\n```python\nprint(1)\n```\n```output\n1\n```\nIt printed 1."


def test_text_after_an_image_is_a_new_message_after_the_image() -> None:
    events, error = run_converter(
        [
            event(text("Here it is:")),
            event(media("image/png", b"PNG")),
            event(text("A square.")),
            event(finish("STOP")),
        ]
    )
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["message", "image_generation_call", "message"]
    assert message_texts(response) == ["Here it is:", "A square."]
    in_stream_order(events)
    sdk_final(events)


def test_a_call_after_text_comes_after_its_message() -> None:
    events, error = run_converter(
        [event(text("Looking it up.")), event(call("search", q="rx"), finish("STOP"))]
    )
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["message", "function_call"]
    in_stream_order(events)
    sdk_final(events)


def test_each_run_of_thoughts_is_its_own_reasoning_item() -> None:
    events, error = run_converter(
        [
            event(thought("Plan A.")),
            event(text("First.")),
            event(thought("Plan B.")),
            event(text("Second."), finish("STOP")),
        ]
    )
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["reasoning", "message", "reasoning", "message"]
    summaries = [item["summary"][0]["text"] for item in response["output"][::2]]
    assert summaries == ["Plan A.", "Plan B."]
    assert message_texts(response) == ["First.", "Second."]
    in_stream_order(events)
    sdk_final(events)


def test_with_encrypted_reasoning_the_first_item_still_carries_every_signature() -> None:
    events, error = run_converter(
        [
            event(thought("Plan A.", sig="T1")),
            event(text("First.")),
            event(thought("Plan B.")),
            event(text("Second.", sig="X1"), finish("STOP")),
        ],
        include_encrypted_reasoning=True,
    )
    assert error is None
    response = check_sequence(events)
    assert kinds(response) == ["reasoning", "message", "reasoning", "message"]
    carrier, _, later, _ = response["output"]
    signatures = decode_signatures(carrier["encrypted_content"])
    assert [(s.kind, s.signature) for s in signatures or []] == [("thought", "T1"), ("text", "X1")]
    assert "encrypted_content" not in later
    assert later["summary"] == [{"type": "summary_text", "text": "Plan B."}]
    assert message_texts(response) == ["First.", "Second."]
    sdk_final(events)


def test_annotations_are_placed_in_the_message_that_holds_their_text() -> None:
    grounding = {
        "groundingChunks": [{"web": {"uri": "https://example.com/r", "title": "R"}}],
        "groundingSupports": [
            {
                "segment": {"partIndex": 3, "startIndex": 0, "endIndex": 4, "text": "Rome"},
                "groundingChunkIndices": [0],
            }
        ],
    }
    events, error = run_converter(
        [
            event(text("Paris is big."), candidate_fields(groundingMetadata={})),
            event(code("print(1)")),
            event(code_result("1\n")),
            event(text("Rome is old.")),
            event(candidate_fields(groundingMetadata=grounding), finish("STOP")),
        ]
    )
    assert error is None
    response = check_sequence(events)
    first, _, second = response["output"]
    assert first["content"][0]["annotations"] == []
    (annotation,) = second["content"][0]["annotations"]
    assert (annotation["start_index"], annotation["end_index"]) == (0, 4)
    assert annotation["url"] == "https://example.com/r"
    sdk_final(events)
