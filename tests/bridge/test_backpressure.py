"""Bounded buffering: a consumer slower than Gemini holds back the HTTP read.

A stalled consumer (it takes one chunk, then stops) must stop the body being read:
FakeGemini's count of body bytes handed to the kernel stops far before the end of
the body (the socket buffers on the way fill up), and the memory the process holds
stays flat. When the consumer resumes, every chunk arrives, in order. Closing while
the producer waits frees it at once. Sources that emit on the consumer's own thread
cannot be held back and must not deadlock.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import reactivex
from reactivex import operators as ops
from reactivex.scheduler import NewThreadScheduler

import rxgem
from rxgem.bridge._gate import MAX_BUFFERED
from rxgem.testing import FakeGemini, FakeResponse

pytestmark = pytest.mark.timeout(120)

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
EVENTS = 32_000
PAD = "x" * 1000
# a fixed receive buffer (no autotuning, which may grow it to 32 MB): what the kernel
# holds on the client's side stays small, so the bytes FakeGemini manages to send show
# what the client read. Not too small: under an MSS (64 KiB on loopback) the window
# can stay shut with the buffer empty, and a close then sends no reset.
SMALL_RCVBUF = [(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)]
# FakeGemini runs in this process: its copies of the body are not the stream's memory
NOT_THE_SERVER = [
    tracemalloc.Filter(False, "*/rxgem/testing/*"),
    tracemalloc.Filter(False, tracemalloc.__file__),
]


def text_of(i: int) -> str:
    return f"{i:06d} {PAD}\n"


def event(i: int) -> bytes:
    candidate: dict[str, Any] = {
        "content": {"parts": [{"text": text_of(i)}], "role": "model"},
        "index": 0,
    }
    if i == EVENTS - 1:
        candidate["finishReason"] = "STOP"
    return b"data: " + json.dumps({"candidates": [candidate]}).encode() + b"\r\n\r\n"


BODY = b"".join(event(i) for i in range(EVENTS))  # 35 MB
EXPECTED = "".join(text_of(i) for i in range(EVENTS))


def big() -> FakeResponse:
    return FakeResponse(body=BODY, chunk_size=16384)


def warm_up() -> FakeResponse:
    """A first, short response: imports and pools settle before memory is traced."""
    return FakeResponse(body=b"".join(event(i) for i in range(EVENTS - 3, EVENTS)))


def source(fake: FakeGemini, client: httpx.Client | httpx.AsyncClient) -> Any:
    return rxgem.stream_chat(
        REQUEST, model=MODEL, client=client, api_key="k", base_url=fake.base_url
    )


def until_stalled(fake: FakeGemini, earlier: int = 0, quiet: float = 0.5, limit: float = 60) -> int:
    """The body bytes FakeGemini sent (beyond ``earlier``), once they stop growing.

    Stopped means: unchanged for ``quiet`` seconds, or the whole body.
    """
    last, since, start = -1, time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit:
        now = fake.body_bytes_sent - earlier
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet or now == len(BODY):
            return now
        time.sleep(0.02)
    raise AssertionError(f"the server kept sending for {limit} s")


def traced() -> int:
    snapshot = tracemalloc.take_snapshot().filter_traces(NOT_THE_SERVER)
    return sum(trace.size for trace in snapshot.traces)


@pytest.fixture
def tracing() -> Iterator[None]:
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


def content(chunks: list[rxgem.ChatCompletionChunk]) -> str:
    return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)


def check_complete(chunks: list[rxgem.ChatCompletionChunk]) -> None:
    assert content(chunks) == EXPECTED  # every event's text, in order
    assert chunks[-1].choices[0].finish_reason == "stop"


def check_held_back(sent: int, before: int, held: int) -> None:
    # the body is 35 MB; what got out is what the socket buffers hold (~4 MB sent,
    # ~2 MB received on Linux loopback), and what the process holds is a few dozen
    # chunks and a read
    assert sent < len(BODY) // 3, f"{sent} of {len(BODY)} bytes were sent"
    assert held - before < 2_000_000, f"the stream holds {held - before} bytes"


def worker_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name == "rxgem-from-gemini"}


def wait_for(condition: Any, limit: float = 10) -> bool:
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# --------------------------------------------------------------------------- iterate


def test_iterate_holds_back_the_read_of_a_stalled_consumer(tracing: None) -> None:
    with (
        FakeGemini(warm_up(), big()) as fake,
        httpx.Client(transport=httpx.HTTPTransport(socket_options=SMALL_RCVBUF)) as client,
    ):
        assert content(list(rxgem.iterate(source(fake, client)))) == EXPECTED[-3 * 1008 :]
        before, earlier = traced(), fake.body_bytes_sent
        chunks = rxgem.iterate(source(fake, client))
        first = [next(chunks)]  # then the consumer stalls
        sent = until_stalled(fake, earlier)
        check_held_back(sent, before, traced())
        tracemalloc.stop()
        check_complete(first + list(chunks))  # it resumes: nothing lost
        assert fake.completed == 2


def test_closing_iterate_frees_a_blocked_producer_at_once() -> None:
    with (
        FakeGemini(big()) as fake,
        httpx.Client(transport=httpx.HTTPTransport(socket_options=SMALL_RCVBUF)) as client,
    ):
        earlier = worker_threads()
        chunks = rxgem.iterate(source(fake, client))
        next(chunks)
        until_stalled(fake)
        workers = worker_threads() - earlier
        assert len(workers) == 1  # blocked, with the body half read
        chunks.close()
        assert fake.wait_for_disconnect(timeout=10)
        assert wait_for(lambda: not any(t.is_alive() for t in workers))
        with pytest.raises(StopIteration):
            next(chunks)


def test_dropping_iterate_frees_a_blocked_producer() -> None:
    with (
        FakeGemini(big()) as fake,
        httpx.Client(transport=httpx.HTTPTransport(socket_options=SMALL_RCVBUF)) as client,
    ):
        earlier = worker_threads()
        chunks = rxgem.iterate(source(fake, client))
        next(chunks)
        until_stalled(fake)
        workers = worker_threads() - earlier
        del chunks  # the producer holds no reference to the iterator
        assert fake.wait_for_disconnect(timeout=10)
        assert wait_for(lambda: not any(t.is_alive() for t in workers))


def test_iterate_bounds_a_producer_thread_to_max_buffered_items() -> None:
    emitted: list[int] = []
    threaded = reactivex.from_iterable(range(10 * MAX_BUFFERED)).pipe(
        ops.do_action(emitted.append), ops.subscribe_on(NewThreadScheduler())
    )
    items = rxgem.iterate(threaded)
    assert next(items) == 0
    assert wait_for(lambda: len(emitted) >= MAX_BUFFERED)
    time.sleep(0.2)  # room for a producer that would not stop
    assert len(emitted) <= MAX_BUFFERED + 1
    assert [0, *items] == list(range(10 * MAX_BUFFERED))


def test_iterate_does_not_deadlock_on_a_source_on_its_own_thread() -> None:
    # from_iterable emits every item during the subscription, on the consumer's thread
    assert list(rxgem.iterate(reactivex.from_iterable(range(100 * MAX_BUFFERED)))) == list(
        range(100 * MAX_BUFFERED)
    )


# --------------------------------------------------------------------------- aiterate


def test_aiterate_holds_back_the_read_of_a_stalled_consumer(tracing: None) -> None:
    async def scenario(fake: FakeGemini) -> None:
        transport = httpx.AsyncHTTPTransport(socket_options=SMALL_RCVBUF)
        async with httpx.AsyncClient(transport=transport) as client:
            warm = [c async for c in rxgem.aiterate(source(fake, client))]
            assert content(warm) == EXPECTED[-3 * 1008 :]
            before, earlier = traced(), fake.body_bytes_sent
            chunks = rxgem.aiterate(source(fake, client))
            first = [await anext(chunks)]  # then the consumer stalls; the loop runs on
            sent = await asyncio.to_thread(until_stalled, fake, earlier)
            check_held_back(sent, before, traced())
            tracemalloc.stop()
            check_complete(first + [c async for c in chunks])

    with FakeGemini(warm_up(), big()) as fake:
        asyncio.run(scenario(fake))
        assert fake.completed == 2


def test_aiterate_blocks_a_producer_thread_of_a_stalled_consumer() -> None:
    """A sync client from async code: its worker thread is blocked, not the loop."""

    async def scenario(fake: FakeGemini, client: httpx.Client) -> None:
        chunks = rxgem.aiterate(source(fake, client))
        first = [await anext(chunks)]
        sent = await asyncio.to_thread(until_stalled, fake)
        assert sent < len(BODY) // 3
        await asyncio.sleep(0)  # the loop is free meanwhile
        check_complete(first + [c async for c in chunks])

    with (
        FakeGemini(big()) as fake,
        httpx.Client(transport=httpx.HTTPTransport(socket_options=SMALL_RCVBUF)) as client,
    ):
        asyncio.run(scenario(fake, client))


def test_closing_aiterate_frees_a_blocked_read_at_once() -> None:
    async def scenario(fake: FakeGemini) -> None:
        transport = httpx.AsyncHTTPTransport(socket_options=SMALL_RCVBUF)
        async with httpx.AsyncClient(transport=transport) as client:
            chunks = rxgem.aiterate(source(fake, client))
            await anext(chunks)
            await asyncio.to_thread(until_stalled, fake)
            others = asyncio.all_tasks() - {asyncio.current_task()}
            assert len(others) == 1  # the transport's task, waiting at the gate
            await chunks.aclose()
            assert await asyncio.to_thread(fake.wait_for_disconnect, 10)
            done, _ = await asyncio.wait(others, timeout=10)
            assert done == others
            with pytest.raises(StopAsyncIteration):
                await anext(chunks)

    with FakeGemini(big()) as fake:
        asyncio.run(scenario(fake))


def test_closing_aiterate_frees_a_blocked_producer_thread() -> None:
    async def scenario(fake: FakeGemini, client: httpx.Client) -> None:
        earlier = worker_threads()
        chunks = rxgem.aiterate(source(fake, client))
        await anext(chunks)
        await asyncio.to_thread(until_stalled, fake)
        workers = worker_threads() - earlier
        assert len(workers) == 1
        await chunks.aclose()
        assert await asyncio.to_thread(fake.wait_for_disconnect, 10)
        assert await asyncio.to_thread(wait_for, lambda: not any(t.is_alive() for t in workers))

    with (
        FakeGemini(big()) as fake,
        httpx.Client(transport=httpx.HTTPTransport(socket_options=SMALL_RCVBUF)) as client,
    ):
        asyncio.run(scenario(fake, client))


def test_aiterate_does_not_deadlock_on_a_source_on_its_loop() -> None:
    async def scenario() -> list[int]:
        return [i async for i in rxgem.aiterate(reactivex.from_iterable(range(100 * MAX_BUFFERED)))]

    assert asyncio.run(scenario()) == list(range(100 * MAX_BUFFERED))


def test_aiterate_bounds_a_producer_thread_to_max_buffered_items() -> None:
    emitted: list[int] = []
    threaded = reactivex.from_iterable(range(10 * MAX_BUFFERED)).pipe(
        ops.do_action(emitted.append), ops.subscribe_on(NewThreadScheduler())
    )

    async def scenario() -> list[int]:
        items = rxgem.aiterate(threaded)
        first = [await anext(items)]
        assert await asyncio.to_thread(wait_for, lambda: len(emitted) >= MAX_BUFFERED)
        await asyncio.sleep(0.2)  # room for a producer that would not stop
        assert len(emitted) <= MAX_BUFFERED + 1
        return first + [i async for i in items]

    assert asyncio.run(scenario()) == list(range(10 * MAX_BUFFERED))
