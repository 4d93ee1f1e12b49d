"""rxgem.Converter: the six cores composed without Rx, and the one rule for errors.

A call returns everything valid (pending tool calls flushed); the error is raised by
the call that finds it when that call has nothing to return, else by the next call,
and ``error`` shows it at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pipeline_harness import counter_ids

import rxgem
from rxgem import samples
from rxgem.converter import CoreConverter, CoreResponsesConverter, ResponsesConverter
from rxgem.core.pipeline import RESPONSES_STAGES, STAGES, PipelineSettings
from rxgem.testing import call, event, finish, text, usage

CALL_THEN_BAD = event(call("search", q="rx")) + b"data: {not json}\r\n\r\n"


def converter(**options: object) -> rxgem.Converter:
    return rxgem.Converter(id_factory=counter_ids(), clock=lambda: 0, **options)  # type: ignore[arg-type]


def names(chunks: list[rxgem.ChatCompletionChunk]) -> list[str]:
    message = rxgem.assemble(chunks)["choices"][0]["message"]
    return [c["function"]["name"] for c in message.get("tool_calls") or ()]


def test_feed_returns_the_chunks_each_piece_completes() -> None:
    conv = converter()
    assert conv.feed(event(text("Hel"))[:10]) == []
    first = conv.feed(event(text("Hel"))[10:])
    assert [c.choices[0].delta.content for c in first] == ["Hel"]
    rest = conv.feed(event(text("lo"), finish("STOP"), usage(3, 2))) + conv.close()
    result = rxgem.assemble(first + rest)
    assert result["choices"][0]["message"]["content"] == "Hello"
    assert result["choices"][0]["finish_reason"] == "stop"
    assert result["usage"]["total_tokens"] == 5
    assert conv.error is None
    assert conv.done


@pytest.mark.parametrize("name", samples.names())
def test_a_sample_converts_as_its_expected_message(name: str) -> None:
    expected = samples.expected()[name]
    conv = converter(api=expected.get("api", "gemini"))
    chunks: list[rxgem.ChatCompletionChunk] = []
    error: Exception | None = None
    try:
        for chunk in conv.iterate([samples.read(name)]):
            chunks.append(chunk)
    except rxgem.RxGemError as exc:
        error = exc
    if expected["error"] is not None:
        assert type(error).__name__ == expected["error"]["type"]
    else:
        assert error is None
    finishes = [c["finish_reason"] for c in rxgem.assemble(chunks)["choices"]]
    assert finishes == [c["finish_reason"] for c in expected["choices"]]
    for got, want in zip(rxgem.assemble(chunks)["choices"], expected["choices"], strict=True):
        calls = got["message"].get("tool_calls") or []
        for made, want_call in zip(calls, want["tool_calls"], strict=True):
            if want_call["id"] is None:  # Gemini sent none: the translator minted it
                assert made["id"].startswith("call_")
                made["id"] = None
        assert calls == want["tool_calls"], "expected() has the assembled message's shape"


def test_an_error_after_valid_events_is_raised_by_the_next_call() -> None:
    conv = converter()
    chunks = conv.feed(event(text("Looking.")) + CALL_THEN_BAD)
    assert names(chunks) == ["search"], "the pending call is flushed before the error"
    assert isinstance(conv.error, rxgem.MalformedStreamError)
    assert conv.error.event == 3
    with pytest.raises(rxgem.MalformedStreamError):
        conv.feed(event(text("more")))
    with pytest.raises(rxgem.MalformedStreamError):
        conv.close()


def test_an_error_with_nothing_valid_before_it_is_raised_at_once() -> None:
    conv = converter()
    with pytest.raises(rxgem.GeminiAPIError, match="quota"):
        conv.feed(b'data: {"error": {"code": 429, "message": "quota"}}\r\n\r\n')
    assert conv.done


def test_a_truncated_stream_raises_from_close_carrying_its_calls() -> None:
    conv = converter(announce="none")
    assert conv.feed(event(call("search", q="rx"))) == []
    with pytest.raises(rxgem.TruncatedStreamError) as raised:
        conv.close()
    assert names(list(raised.value.chunks)) == ["search"], "the held call rides on the error"
    assert conv.error is raised.value
    with pytest.raises(rxgem.TruncatedStreamError) as again:
        conv.close()
    assert list(again.value.chunks) == [], "owed once: a later call carries nothing"


def documented_loop(
    conv: rxgem.Converter, body: list[bytes], delivered: list[rxgem.ChatCompletionChunk]
) -> None:
    """The form the README and the docs teach."""
    try:
        for piece in body:
            delivered += conv.feed(piece)
        delivered += conv.close()
    except rxgem.RxGemError as error:
        delivered += error.chunks
        raise


def test_the_documented_loop_delivers_every_chunk_and_the_error() -> None:
    body = [event(text("Looking.")), event(call("search", q="rx"))]  # no finishReason
    delivered: list[rxgem.ChatCompletionChunk] = []
    with pytest.raises(rxgem.TruncatedStreamError):
        documented_loop(converter(), body, delivered)
    message = rxgem.assemble(delivered)["choices"][0]["message"]
    assert message["content"] == "Looking."
    assert names(delivered) == ["search"]


def test_a_clean_stream_closes_without_raising() -> None:
    conv = converter(announce="none")
    conv.feed(event(call("search", q="rx"), finish("STOP")))
    chunks = conv.close()
    assert names(chunks) == ["search"]
    assert conv.error is None
    assert conv.close() == []


def test_an_error_after_valid_chunks_in_feed_is_kept_then_raised_by_close() -> None:
    conv = converter()
    chunks = conv.feed(event(text("Looking.")) + CALL_THEN_BAD)
    assert names(chunks) == ["search"], "feed returns the valid chunks, the call flushed"
    assert isinstance(conv.error, rxgem.MalformedStreamError)
    with pytest.raises(rxgem.MalformedStreamError) as raised:
        conv.close()
    assert raised.value is conv.error
    assert list(raised.value.chunks) == [], "feed already returned everything owed"


def test_iterate_and_aiterate_yield_what_close_owed_then_raise() -> None:
    body = [event(text("Looking.")), event(call("search", q="rx"))]  # no finishReason
    seen: list[rxgem.ChatCompletionChunk] = []
    with pytest.raises(rxgem.TruncatedStreamError):
        seen.extend(converter(announce="none").iterate(body))
    assert names(seen) == ["search"]

    async def pieces() -> AsyncIterator[bytes]:
        for piece in body:
            yield piece

    async def main(got: list[rxgem.ChatCompletionChunk]) -> None:
        async for chunk in converter(announce="none").aiterate(pieces()):
            got.append(chunk)

    got: list[rxgem.ChatCompletionChunk] = []
    with pytest.raises(rxgem.TruncatedStreamError):
        asyncio.run(main(got))
    assert names(got) == ["search"]


def test_the_operator_emits_what_close_owed_then_the_error() -> None:
    body = event(text("Looking.")) + event(call("search", q="rx"))
    seen: list[rxgem.ChatCompletionChunk] = []
    errors: list[Exception] = []
    operator = rxgem.gemini_to_openai(id_factory=counter_ids(), clock=lambda: 0, announce="none")
    rxgem.from_body([body]).pipe(operator).subscribe(seen.append, errors.append)
    assert names(seen) == ["search"]
    assert [type(e) for e in errors] == [rxgem.TruncatedStreamError]


def test_a_truncated_stream_with_nothing_held_raises_at_close() -> None:
    conv = converter()
    conv.feed(event(text("cut off")))
    with pytest.raises(rxgem.TruncatedStreamError):
        conv.close()


def test_iterate_yields_every_valid_chunk_then_raises() -> None:
    body = event(text("Looking.")) + CALL_THEN_BAD
    seen: list[rxgem.ChatCompletionChunk] = []
    with pytest.raises(rxgem.MalformedStreamError):
        seen.extend(converter().iterate([body[:20], body[20:]]))  # extend keeps what came first
    assert names(seen) == ["search"]
    assert rxgem.assemble(seen)["choices"][0]["message"]["content"] == "Looking."


def test_aiterate_reads_an_async_body() -> None:
    async def body() -> AsyncIterator[bytes]:
        data = samples.read("thinking_tools")
        for i in range(0, len(data), 100):
            yield data[i : i + 100]

    async def main() -> list[rxgem.ChatCompletionChunk]:
        return [chunk async for chunk in converter().aiterate(body())]

    chunks = asyncio.run(main())
    assert names(chunks) == ["read_file", "read_file", "read_file", "search"]


def test_done_ends_the_stream_with_its_last_chunks() -> None:
    conv = converter()
    chunks = conv.feed(event(text("Hi"), finish("STOP")) + b"data: [DONE]\n\ndata: ignored\n\n")
    assert rxgem.assemble(chunks)["choices"][0]["finish_reason"] == "stop"
    assert conv.done
    assert conv.feed(event(text("after"))) == []
    assert conv.close() == []


def test_close_with_the_callers_error_flushes_and_never_raises() -> None:
    conv = converter(announce="none")
    conv.feed(event(call("search", q="rx")))
    chunks = conv.close(ConnectionResetError("gone"))
    assert names(chunks) == ["search"]
    assert all(choice.finish_reason is None for c in chunks for choice in c.choices)
    assert conv.error is None
    assert conv.close() == []


def test_options_are_checked_at_construction() -> None:
    with pytest.raises(TypeError, match="unknown pipeline option 'modle'"):
        rxgem.Converter(modle="x")  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="announce"):
        rxgem.Converter(announce="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="slot policy"):
        rxgem.Converter(slot_policy="first")  # type: ignore[arg-type]


CORES = [
    rxgem.core.SSEDecoder,
    rxgem.core.ResponseParser,
    rxgem.core.SlotTable,
    rxgem.core.ArgsTable,
    rxgem.core.FinishBuffer,
    rxgem.core.ChunkBuilder,
    rxgem.Converter,
]


@pytest.mark.parametrize("make", CORES, ids=lambda c: c.__name__)
def test_every_core_has_the_one_shape(make: type) -> None:
    core = make()
    assert core.error is None
    assert core.close(RuntimeError("upstream")) == []
    assert core.close() == []  # spent: closing again gives nothing


OUTPUTS: dict[str, tuple[Any, Any, Any, str]] = {
    "chat": (rxgem.Converter, CoreConverter, STAGES, "ChatCompletionChunk"),
    "responses": (ResponsesConverter, CoreResponsesConverter, RESPONSES_STAGES, "ResponseFailed"),
}


def kind_of(out: Any) -> str:
    return type(out).__name__


@pytest.mark.parametrize("output", OUTPUTS)
def test_both_outputs_keep_the_one_contract(output: str) -> None:
    make, make_core, stages, last = OUTPUTS[output]
    conv = make(announce="none")
    conv.feed(event(call("search", q="rx")))  # no finishReason: truncated
    with pytest.raises(rxgem.TruncatedStreamError) as raised:
        conv.close()
    carried = [kind_of(out) for out in raised.value.chunks]
    assert carried[-1] == last, "what it owed rides on the error"
    assert conv.error is raised.value
    assert conv.done
    with pytest.raises(rxgem.TruncatedStreamError) as again:
        conv.feed(event(text("more")))
    assert list(again.value.chunks) == []

    core = make_core(PipelineSettings({"announce": "none"}, stages))
    core.feed(event(call("search", q="rx")))
    owed = core.close()  # the cores' close: what it owed returned, the error kept
    assert [kind_of(out) for out in owed] == carried
    assert isinstance(core.error, rxgem.TruncatedStreamError)
    assert core.close() == []
    with pytest.raises(rxgem.TruncatedStreamError):
        core.feed(event(text("more")))


@pytest.mark.parametrize("output", OUTPUTS)
def test_both_outputs_return_what_feed_completes_and_keep_its_error(output: str) -> None:
    make, *_ = OUTPUTS[output]
    conv = make()
    outs = conv.feed(event(text("Looking.")) + CALL_THEN_BAD)
    assert outs, "the valid outputs before the error are returned"
    assert isinstance(conv.error, rxgem.MalformedStreamError)
    with pytest.raises(rxgem.MalformedStreamError) as raised:
        conv.close()
    assert raised.value is conv.error
