"""JSON that is not a Gemini response is named for what it looks like, not as a truncation.

An object with none of ``GenerateContentResponse``'s keys: an OpenAI chunk fed back is
reported at once; any other such object is skipped, and named at the end only if the
stream never held a Gemini response. Valid streams around such objects are unaffected.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipeline_harness import counter_ids, run

import rxgem
from rxgem import samples
from rxgem.core import ResponseParser, SSEEvent


def converter(**options: Any) -> rxgem.Converter:
    return rxgem.Converter(id_factory=counter_ids(), clock=lambda: 0, **options)


def outcome(body: bytes, **options: Any) -> tuple[list[dict[str, Any]], Exception | None]:
    """The chunks (as dicts) and the error of ``body`` through a Converter."""
    chunks: list[rxgem.ChatCompletionChunk] = []
    try:
        chunks.extend(converter(**options).iterate([body]))
    except rxgem.RxGemError as exc:
        return [c.to_dict() for c in chunks], exc
    return [c.to_dict() for c in chunks], None


def sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\n\n" for p in payloads)


def openai_stream() -> bytes:
    """A real stream of rxgem's OpenAI chunks, framed as SSE: what a proxy would send."""
    chunks = converter().iterate([samples.read("text")])
    return sse(*(chunk.to_dict() for chunk in chunks)) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("allow_truncated", [False, True])
@pytest.mark.parametrize(
    "body", [b'{"hello": "world"}', b'data: {"hello": "world"}\n\n', b'[{"hello": "world"}]']
)
def test_an_object_of_unknown_keys_alone_is_named_not_truncated(
    body: bytes, allow_truncated: bool
) -> None:
    chunks, error = outcome(body, allow_truncated=allow_truncated)
    assert chunks == []
    assert isinstance(error, rxgem.MalformedStreamError)
    assert error.event == 1
    assert error.reason == "JSON that is not a Gemini GenerateContentResponse (keys: 'hello')"
    assert "hello" in error.snippet
    assert "before any response" not in str(error)


def test_an_openai_stream_fed_back_is_named_at_its_first_event() -> None:
    chunks, error = outcome(openai_stream())
    assert chunks == []
    assert isinstance(error, rxgem.MalformedStreamError)
    assert error.event == 1
    assert error.reason == "an OpenAI chat.completion.chunk, not a Gemini GenerateContentResponse"
    assert error.snippet.startswith('\'{"id": "chatcmpl-')


def test_an_openai_completion_is_named_too() -> None:
    body = sse({"id": "chatcmpl-1", "object": "chat.completion", "choices": []})
    _, error = outcome(body)
    assert isinstance(error, rxgem.MalformedStreamError)
    assert error.reason == "an OpenAI chat.completion, not a Gemini GenerateContentResponse"


def test_the_error_names_the_event_of_the_first_stray_object() -> None:
    body = b": comment\n\n" + sse({}, {"kind": "ping"}, {"other": 1})
    _, error = outcome(body)
    assert isinstance(error, rxgem.MalformedStreamError)
    assert error.event == 2
    assert "(keys: 'kind')" in error.reason


def test_keys_and_snippet_are_escaped_and_bounded() -> None:
    odd = {"k\n\x00" + "x" * 500: 1, **{f"key{i}": i for i in range(50)}}
    _, error = outcome(sse(odd))
    assert isinstance(error, rxgem.MalformedStreamError)
    message = str(error)
    assert len(message) < 400
    assert "\n" not in message
    assert "\x00" not in message
    assert message.count("'key") == 4  # five keys shown (the odd one first), then "…"
    assert "…)" in error.reason


@pytest.mark.parametrize("where", [0, 1, -1])
def test_stray_objects_beside_gemini_responses_change_nothing(where: int) -> None:
    gemini = samples.read("text")
    events = gemini.split(b"\r\n\r\n") if b"\r\n\r\n" in gemini else gemini.split(b"\n\n")
    stray = b'data: {"kind": "keepalive"}'
    position = where if where >= 0 else len(events) - 1
    mixed = b"\n\n".join([*events[:position], stray, *events[position:]])
    plain = b"\n\n".join(events)
    assert outcome(mixed) == outcome(plain)
    assert outcome(plain)[1] is None


def test_an_empty_object_is_no_stray() -> None:
    _, error = outcome(sse({}))
    assert isinstance(error, rxgem.TruncatedStreamError)


def test_the_operators_report_it_too() -> None:
    chunks, error = run(b'data: {"hello": "world"}\n\n')
    assert chunks == []
    assert isinstance(error, rxgem.MalformedStreamError)
    assert error.event == 1


def test_the_parser_raises_at_close_unless_closed_with_an_error() -> None:
    parser = ResponseParser()
    assert parser.feed(SSEEvent('{"hello": "world"}'))[0] == parser.feed(SSEEvent("{}"))[0]
    assert parser.close(ValueError("cut")) == []
    parser = ResponseParser()
    parser.feed(SSEEvent('{"hello": "world"}'))
    with pytest.raises(rxgem.MalformedStreamError):
        parser.close()
