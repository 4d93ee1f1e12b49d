"""Resource bounds: memory flat in the number of events, time linear in the size of arguments.

Memory: the Rx pipeline (``gemini_to_openai`` behind a ``Subject``) and ``rxgem.Converter`` are
fed 10k, 20k, 40k and 80k events under ``tracemalloc``; the memory retained after each size (and
the peak within each stretch) must not grow with the number of events: a leak of one byte per
event would show as 70 KB between the first and the last size. Then the slot table's own state:
one slot for a call re-sent thousands of times.

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

import msgspec
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


MARKS = (10_000, 20_000, 40_000, 80_000)
"""The numbers of events after which memory is measured."""
FLAT = 0.25
"""The most memory that may stay behind per event, in bytes, between the first and last mark
(measured: about 0.01; a chunk kept per event would be hundreds)."""


def _memory(feed: Callable[[bytes], object]) -> tuple[list[int], list[int]]:
    """Feed events 100 at a time up to the last mark; at each mark, the memory retained (after
    a collection) and the peak since the previous mark, as ``tracemalloc`` traces them."""
    retained, peaks = [], []
    gc.collect()
    tracemalloc.start()
    try:
        for block in range(1, MARKS[-1] // 100 + 1):
            feed(_BLOCK)
            if block * 100 in MARKS:
                gc.collect()
                current, peak = tracemalloc.get_traced_memory()
                retained.append(current)
                peaks.append(peak)
                tracemalloc.reset_peak()
    finally:
        tracemalloc.stop()
    return retained, peaks


def _assert_flat(retained: list[int], peaks: list[int]) -> None:
    events = MARKS[-1] - MARKS[0]
    per_event = (retained[-1] - retained[0]) / events
    sizes = ", ".join(f"{n // 1000}k: {r} B" for n, r in zip(MARKS, retained, strict=True))
    assert per_event < FLAT, f"retained {per_event:.2f} B per event ({sizes})"
    assert max(peaks) - peaks[0] < FLAT * events, f"the peak grows with the events: {peaks}"


def test_memory_stays_flat_in_the_number_of_events_through_the_rx_pipeline() -> None:
    subject: Subject[bytes] = Subject()
    ends: list[rxgem.ChatCompletionChunk] = []
    counts = {"chunks": 0, "errors": 0, "completed": 0}

    def on_next(chunk: rxgem.ChatCompletionChunk) -> None:
        counts["chunks"] += 1
        if (chunk.choices and chunk.choices[0].finish_reason) or chunk.usage is not None:
            ends.append(chunk)  # keep only the end; every text chunk is dropped

    def on_error(_error: Exception) -> None:
        counts["errors"] += 1

    def on_completed() -> None:
        counts["completed"] += 1

    subject.pipe(rxgem.gemini_to_openai()).subscribe(on_next, on_error, on_completed)
    _assert_flat(*_memory(subject.on_next))
    assert counts["chunks"] >= 0.9 * MARKS[-1]  # a chunk per text or thought event
    subject.on_next(_END)
    subject.on_completed()
    assert counts["errors"] == 0
    assert counts["completed"] == 1
    assert ends[-1].usage is not None
    assert ends[-1].usage.total_tokens == 10
    assert ends[-2].choices[0].finish_reason == "tool_calls"


def test_memory_stays_flat_in_the_number_of_events_through_the_converter() -> None:
    converter = rxgem.Converter()
    produced = 0

    def feed(data: bytes) -> None:
        nonlocal produced
        produced += len(converter.feed(data))  # every chunk dropped at once

    _assert_flat(*_memory(feed))
    assert produced >= 0.9 * MARKS[-1]
    end = converter.feed(_END) + converter.close()
    assert converter.error is None
    assert end[-1].usage is not None
    assert end[-2].choices[0].finish_reason == "tool_calls"


def _responses(block: bytes) -> list[rxgem.core.GenerateContentResponse]:
    payloads = [line[len(b"data: ") :] for line in block.split(b"\r\n\r\n") if line]
    return [msgspec.json.decode(p, type=rxgem.core.GenerateContentResponse) for p in payloads]


def test_the_slot_table_keeps_one_slot_for_a_call_resent_thousands_of_times() -> None:
    table = rxgem.core.SlotTable()
    responses = _responses(_BLOCK)
    for _ in range(200):  # 20,000 events, the call re-sent 2,000 times
        for response in responses:
            table.feed(response)
    assert len(table.slots(0)) == 1, "an identical re-send must not open slots"


def test_a_call_resent_thousands_of_times_comes_out_once() -> None:
    chunks = list(rxgem.Converter().iterate([_BLOCK] * 200 + [_END]))
    message = rxgem.assemble(chunks)["choices"][0]["message"]
    assert [json.loads(c["function"]["arguments"]) for c in message["tool_calls"]] == [
        {"q": "rxgem"}
    ]


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
    chunks = list(rxgem.Converter().iterate(pieces))
    assert len(rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]) == 1


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
