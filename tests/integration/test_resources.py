"""Resource bounds: memory flat over a million events, time linear in the size of arguments.

The million-event test runs the whole Rx pipeline (``gemini_to_openai`` behind a ``Subject``)
under ``tracemalloc``, about 45 s on a 2-core machine; a second test checks the sans-IO cores'
own state (one slot for a call re-sent 10,000 times).

Timings use CPU time of this process (the CI machine is shared) with the cyclic GC paused: the
GC's cost grows with the live heap, which is CPython's doing, not rxgem's algorithm.
"""

from __future__ import annotations

import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from reactivex.subject import Subject

import rxgem

# 100 events: text on every event, a thought every 25th, the same call re-sent identically every
# 10th (it must stay one slot), and a cumulative usage snapshot on every event.
_TEXT = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "tok \\u2028 \xc3\xa9 "}],'
    b'"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 7,'
    b'"candidatesTokenCount": 3,"totalTokenCount": 10},"modelVersion": "gemini-2.5-flash",'
    b'"responseId": "mem-1"}\r\n\r\n'
)
_THOUGHT = (
    b'data: {"candidates": [{"content": {"parts": [{"text": "hmm","thought": true}]}}]}\r\n\r\n'
)
_CALL = (
    b'data: {"candidates": [{"content": {"parts": [{"functionCall": {"name": "search",'
    b'"args": {"q": "rxgem"}}}]}}]}\r\n\r\n'
)
_BLOCK = b"".join(_CALL if i % 10 == 9 else _THOUGHT if i % 25 == 0 else _TEXT for i in range(100))
_END = b'data: {"candidates": [{"content": {"parts": [{"text": "."}]},"finishReason": "STOP"}]}\n\n'


def _traced(feed: Callable[[bytes], None], events: int, marks: tuple[int, ...]) -> list[int]:
    """Feed ``events`` events (100 per call); tracemalloc's current size at each mark."""
    sizes = []
    gc.collect()
    tracemalloc.start()
    try:
        for block in range(1, events // 100 + 1):
            feed(_BLOCK)
            if block * 100 in marks:
                gc.collect()
                sizes.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    return sizes


@pytest.mark.timeout(300)
def test_memory_stays_flat_over_a_million_events_through_the_rx_pipeline() -> None:
    subject: Subject[bytes] = Subject()
    chunks: list[rxgem.ChatCompletionChunk] = []
    counts = {"chunks": 0, "errors": 0, "completed": 0}

    def on_next(chunk: rxgem.ChatCompletionChunk) -> None:
        counts["chunks"] += 1
        if (chunk.choices and chunk.choices[0].finish_reason) or chunk.usage is not None:
            chunks.append(chunk)  # keep only the end; every text chunk is dropped

    def on_error(_error: Exception) -> None:
        counts["errors"] += 1

    def on_completed() -> None:
        counts["completed"] += 1

    subject.pipe(rxgem.gemini_to_openai()).subscribe(on_next, on_error, on_completed)
    at_100k, at_1m = _traced(subject.on_next, 1_000_000, (100_000, 1_000_000))
    growth = at_1m - at_100k
    assert growth < 64 * 1024, f"grew {growth} bytes from 100k to 1M events ({at_100k} at 100k)"
    assert counts["chunks"] >= 900_000  # a chunk per text or thought event, produced and dropped
    subject.on_next(_END)
    subject.on_completed()
    assert counts["errors"] == 0
    assert counts["completed"] == 1
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens == 10
    assert chunks[-2].choices[0].finish_reason == "tool_calls"


def test_the_slot_table_does_not_grow_with_events() -> None:
    """The sans-IO cores under the pipeline: 100,000 events, one slot, one call at the end."""
    decoder = rxgem.SSEDecoder()
    parser = rxgem.ResponseParser()
    slots = rxgem.SlotTable()
    args = rxgem.ArgsTable()
    buffer = rxgem.FinishBuffer()
    builder = rxgem.ChunkBuilder()
    for data in [_BLOCK] * 1000 + [_END]:
        for event in decoder.feed(data):
            for response in parser.feed(event):
                builder.feed(buffer.feed(args.feed(slots.feed(response))))
    assert parser.events == 100_001
    assert len(slots.slots(0)) == 1, "an identical re-send must not open slots"
    final, error = buffer.close()
    assert error is None
    calls = [
        call
        for chunk in builder.feed(final)
        for choice in chunk.choices
        for call in choice.delta.tool_calls or ()
    ]
    assert [json.loads(c.function.arguments) for c in calls if c.function] == [{"q": "rxgem"}]


# -- time linear in the bytes ----------------------------------------------------------------


def _cpu_seconds(run: Callable[[], None], repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            run()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


def _convert(pieces: list[bytes]) -> None:
    decoder = rxgem.SSEDecoder()
    parser = rxgem.ResponseParser()
    slots = rxgem.SlotTable()
    args = rxgem.ArgsTable()
    buffer = rxgem.FinishBuffer()
    builder = rxgem.ChunkBuilder()
    events = [e for piece in pieces for e in decoder.feed(piece)] + decoder.close()
    for event in events:
        for response in parser.feed(event):
            builder.feed(buffer.feed(args.feed(slots.feed(response))))
    final, error = buffer.close()
    assert error is None
    chunks = builder.feed(final)
    assert sum(1 for c in chunks for ch in c.choices for _ in ch.delta.tool_calls or ()) == 1


def _resent_object(size: int, times: int = 20) -> list[bytes]:
    """An argument object of ``size`` bytes (rows of text, numbers, lists), re-sent ``times``
    times, each re-send grown a little; as the SSE body in 64 KiB pieces."""
    text = "lorem ipsum dolor sit amet, consectetur adipiscing elit – é 😀 " * 6
    row: dict[str, Any] = {"id": 0, "text": text, "tags": ["a", "b"], "ok": True}
    rows = [{**row, "id": i} for i in range(size // len(json.dumps(row)))]
    body = []
    for k in range(times):
        call = {"name": "load", "args": {"rows": rows + [row] * k, "note": "x" * k}}
        candidate: dict[str, Any] = {"content": {"parts": [{"functionCall": call}]}}
        if k == times - 1:
            candidate["finishReason"] = "STOP"
        body.append(b"data: " + json.dumps({"candidates": [candidate]}).encode() + b"\r\n\r\n")
    data = b"".join(body)
    return [data[i : i + 65536] for i in range(0, len(data), 65536)]


@pytest.mark.timeout(300)
def test_a_10mb_argument_object_resent_20_times_costs_linear_time() -> None:
    small, large = _resent_object(5_000_000), _resent_object(10_000_000)
    t_small = _cpu_seconds(lambda: _convert(small))
    t_large = _cpu_seconds(lambda: _convert(large))
    if t_large / t_small >= 3:  # measure again before calling it quadratic (shared machine)
        t_small = min(t_small, _cpu_seconds(lambda: _convert(small)))
        t_large = min(t_large, _cpu_seconds(lambda: _convert(large)))
    ratio = t_large / t_small
    assert ratio < 3, f"5 MB: {t_small:.2f} s, 10 MB: {t_large:.2f} s (ratio {ratio:.2f})"
    assert t_large < 60


def _streamed_string(size: int, fragment: int = 1000) -> list[bytes]:
    """A Vertex streamed call whose one string argument arrives in ``fragment``-byte pieces."""

    def event(part: dict[str, Any], finish: bool = False) -> bytes:
        candidate: dict[str, Any] = {"content": {"parts": [part]}}
        if finish:
            candidate["finishReason"] = "STOP"
        return b"data: " + json.dumps({"candidates": [candidate]}).encode() + b"\n\n"

    piece = {"jsonPath": "$.content", "stringValue": "x" * fragment, "willContinue": True}
    middle = event({"functionCall": {"partialArgs": [piece], "willContinue": True}})
    return [
        event({"functionCall": {"name": "write_file", "willContinue": True}}),
        *([middle] * (size // fragment)),
        event({"functionCall": {}}, finish=True),
    ]


@pytest.mark.timeout(300)
def test_a_streamed_string_argument_costs_linear_time() -> None:
    """4x the bytes in 4x the fragments: linear ~4x the time, quadratic ~16x (measured: ~10x).

    The copies' cost swings with the allocator (fresh pages or reused ones), so each size is
    measured twice and the best kept.
    """
    small, large = _streamed_string(1_000_000, 500), _streamed_string(4_000_000, 500)
    t_small = _cpu_seconds(lambda: _convert(small), repeat=2)
    t_large = _cpu_seconds(lambda: _convert(large), repeat=2)
    ratio = t_large / t_small
    assert ratio < 7, f"1 MB: {t_small:.2f} s, 4 MB: {t_large:.2f} s (ratio {ratio:.1f})"
