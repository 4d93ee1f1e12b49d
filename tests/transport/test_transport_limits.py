"""from_gemini's ``max_line_bytes``: an endless upstream line is stopped, not buffered.

Gemini's events are one line each; the SSE decoder downstream holds a line until it ends.
A 100 MB line without a newline used to be buffered whole (508 MB RSS) before failing. Now
the transport stops reading once a line is longer than ``max_line_bytes`` (64 MiB by
default), closes the response and errors with ``MalformedStreamError``, after emitting every
chunk before the one that took the line past the limit.

The 100 MB line comes from FakeGemini in a child process (it holds the whole body, and its
memory must not count in this process's ``tracemalloc`` peak); the exact-byte tests use an
in-process FakeGemini with smaller lines.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import reactivex
from pipeline_harness import collect_sync, counter_ids, run

import rxgem
from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse
from rxgem.transport import AiohttpTransport
from rxgem.transport._exchange import DEFAULT_MAX_LINE_BYTES
from rxgem.transport._line_framer import line_after as _line_after

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
KEY = "test-key"
MiB = 1 << 20
HEAD = samples.read("text")
"""Valid events (ending with a blank line) that come before the long line."""
PIECE = 64 * 1024


def chunks_before_an_error() -> list[dict[str, Any]]:
    """What gemini_to_openai emits for HEAD when the stream then fails (not the last
    chunks, which only a stream that ends cleanly gets)."""
    chunks, error = run(HEAD + b"data: x", id_factory=counter_ids(), clock=lambda: 1.0)
    assert isinstance(error, rxgem.MalformedStreamError)
    return [c.to_dict() for c in chunks]


async def collect_async(
    source: reactivex.Observable[Any], timeout: float = 60
) -> tuple[list[Any], Any]:
    items: list[Any] = []
    errors: list[Exception] = []
    done = asyncio.Event()

    def on_error(error: Exception) -> None:
        errors.append(error)
        done.set()

    source.subscribe(items.append, on_error, done.set)
    await asyncio.wait_for(done.wait(), timeout)
    return items, errors[0] if errors else None


def collect(
    mode: str, make: Callable[[httpx.Client | httpx.AsyncClient], reactivex.Observable[Any]]
) -> tuple[list[Any], Any]:
    """Run ``make(client)`` to its end with an ``httpx.Client`` or an ``httpx.AsyncClient``
    (over httpx's transport or the server's aiohttp one)."""
    if mode == "sync":
        with httpx.Client() as client:
            return collect_sync(make(client))

    # "aiohttp": through the server's upstream transport
    transport = AiohttpTransport() if mode == "aiohttp" else None

    async def main() -> tuple[list[Any], Any]:
        async with httpx.AsyncClient(transport=transport) as client:
            return await collect_async(make(client))

    return asyncio.run(main())


def too_long(error: Any, limit: int) -> bool:
    return isinstance(error, rxgem.MalformedStreamError) and (
        f"an upstream line is longer than max_line_bytes={limit} bytes" in str(error)
    )


def collect_body(mode: str, base_url: str, **options: Any) -> tuple[list[Any], Any]:
    """:data:`REQUEST`'s stream from ``base_url`` through ``mode``'s client, as
    :func:`collect` gives it."""
    return collect(
        mode,
        lambda client: rxgem.from_gemini(
            REQUEST, model=MODEL, api_key=KEY, base_url=base_url, client=client, **options
        ),
    )


MODES = ["sync", "async", "aiohttp"]


# -- the line counter ---------------------------------------------------------------------------


def _reference(chunks: list[bytes], limit: int) -> list[int]:
    """What _line_after must say after each chunk, found byte by byte."""
    out, line = [], 0
    for chunk in chunks:
        for byte in chunk:
            line = 0 if byte == 0x0A else line + 1
            if line > limit:
                return [*out, -1]
        out.append(line)
    return out


def test_the_line_counter_agrees_with_counting_byte_by_byte() -> None:
    rng = random.Random(7)
    for _ in range(5000):
        limit = rng.randint(1, 12)
        alphabet = rng.choice([b"ab\n", b"aaaaaab\n", b"a"])
        chunks = [
            bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            for _ in range(rng.randint(1, 6))
        ]
        found, line = [], 0
        for chunk in chunks:
            line = _line_after(chunk, line, limit)
            found.append(line)
            if line < 0:
                break
        assert found == _reference(chunks, limit), (limit, chunks)


def test_a_line_that_ends_inside_the_chunk_still_counts() -> None:
    assert _line_after(b"xxxx\nyy", 5, 8) == -1  # 5 + 4 bytes before the newline
    assert _line_after(b"xxx\nyy", 5, 8) == 2
    assert _line_after(b"\n" + b"y" * 9 + b"\nz", 0, 8) == -1  # a whole line inside it


# -- exact bytes, in-process FakeGemini ---------------------------------------------------------


def long_line_response(line: int, tail: bytes = b"") -> tuple[FakeResponse, bytes]:
    """HEAD, then ``data: `` and x's making a line of ``line`` bytes, then ``tail``."""
    body = HEAD + b"data: " + b"x" * (line - 6) + tail
    return FakeResponse(body=body, split_at=[len(HEAD)], chunk_size=PIECE), body


@pytest.mark.parametrize("mode", MODES)
def test_chunks_before_the_long_line_arrive_once_then_the_error(mode: str) -> None:
    limit = MiB
    response, body = long_line_response(32 * MiB)  # more than the sockets' buffers hold
    with FakeGemini(response) as fake:
        pieces, error = collect_body(mode, fake.base_url, max_line_bytes=limit)
        assert fake.wait_for_disconnect(5.0)  # the response was closed, not read to its end
        assert fake.body_bytes_sent < len(body)
    assert too_long(error, limit)
    emitted = b"".join(pieces)
    assert body.startswith(emitted)  # in order, nothing twice, nothing skipped
    # every piece before the one taking the line past the limit (the client may receive
    # a piece in parts: then more of it), and none of that one
    crossing = len(HEAD) + limit + 1
    last_boundary = max(b for b in (len(HEAD), *range(0, crossing, PIECE)) if b < crossing)
    assert last_boundary <= len(emitted) <= len(HEAD) + limit


@pytest.mark.parametrize("mode", MODES)
def test_a_line_of_exactly_the_limit_passes(mode: str) -> None:
    limit = 256 * 1024
    response, body = long_line_response(limit, b"\r\n\r\n")
    with FakeGemini(response) as fake:
        # the \r counts: bytes before the \n
        pieces, error = collect_body(mode, fake.base_url, max_line_bytes=limit + 1)
    assert error is None
    assert b"".join(pieces) == body


@pytest.mark.parametrize("mode", MODES)
def test_a_line_ending_inside_a_chunk_past_the_limit_is_refused(mode: str) -> None:
    """The chunk holds the newline, but the line it ends is already too long."""
    limit = 1000
    body = HEAD + b"data: " + b"x" * (limit + 10) + b"\r\n\r\n" + HEAD
    response = FakeResponse(body=body, split_at=[len(HEAD)])
    with FakeGemini(response) as fake:
        pieces, error = collect_body(mode, fake.base_url, max_line_bytes=limit)
    assert too_long(error, limit)
    emitted = b"".join(pieces)  # HEAD; more only if the piece after it came in parts
    assert body.startswith(emitted)
    assert len(HEAD) <= len(emitted) <= len(HEAD) + limit


@pytest.mark.parametrize("mode", MODES)
def test_none_means_no_limit(mode: str) -> None:
    response, body = long_line_response(2 * MiB, b"\n\n")
    with FakeGemini(response) as fake:
        pieces, error = collect_body(mode, fake.base_url, max_line_bytes=None)
    assert error is None
    assert b"".join(pieces) == body


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "1"])
def test_a_bad_limit_is_refused_at_call_time(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_line_bytes"):
        rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, max_line_bytes=bad)


def test_stream_chat_and_chat_completions_pass_the_limit_on() -> None:
    limit = MiB
    response, _ = long_line_response(2 * MiB)
    expected = chunks_before_an_error()
    with FakeGemini(response) as fake, httpx.Client() as client:
        chunks, error = collect_sync(
            rxgem.stream_chat(
                REQUEST,
                model=MODEL,
                api_key=KEY,
                base_url=fake.base_url,
                client=client,
                max_line_bytes=limit,
                id_factory=counter_ids(),
                clock=lambda: 1.0,
            )
        )
        assert too_long(error, limit)
        assert [c.to_dict() for c in chunks] == expected
        body = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "stream": True}
        chunks, error = collect_sync(
            rxgem.chat_completions(
                body, api_key=KEY, base_url=fake.base_url, client=client, max_line_bytes=limit
            )
        )
        assert too_long(error, limit)
        assert len(chunks) == len(expected)


@pytest.mark.parametrize("mode", MODES)
def test_the_default_lets_a_40mb_event_through(mode: str) -> None:
    assert 64 * MiB == DEFAULT_MAX_LINE_BYTES
    response, body = long_line_response(40 * 1000 * 1000, b"\r\n\r\n")
    with FakeGemini(response) as fake:
        pieces, error = collect_body(mode, fake.base_url)
    assert error is None
    assert sum(map(len, pieces)) == len(body)


# -- a 100 MB line, from FakeGemini in a child process -----------------------------------------

_SERVE = """
import sys
from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse

head = samples.read("text")
body = head + b"data: " + b"x" * int(sys.argv[1])  # and no newline, ever
response = FakeResponse(body=body, split_at=[len(head)], chunk_size=64 * 1024)
with FakeGemini(response) as fake:
    print(fake.base_url, flush=True)
    sys.stdin.read()  # serve until the test closes stdin
"""


@pytest.fixture(scope="module")
def endless_line() -> Iterator[str]:
    """The base URL of a FakeGemini answering every request with HEAD and a 100 MB line."""
    child = subprocess.Popen(
        [sys.executable, "-c", _SERVE, str(100 * 1000 * 1000)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        yield child.stdout.readline().strip()
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(30)


def peak_while(work: Callable[[], tuple[list[Any], Any]]) -> tuple[list[Any], Any, int]:
    """``work()`` and the peak of memory Python allocated meanwhile, above what was in use."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        chunks, error = work()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return chunks, error, peak


@pytest.mark.timeout(120)
@pytest.mark.parametrize("mode", MODES)
def test_a_100mb_line_is_stopped_at_the_limit_in_bounded_memory(
    mode: str, endless_line: str
) -> None:
    limit = MiB
    expected = chunks_before_an_error()

    def make(client: httpx.Client | httpx.AsyncClient) -> reactivex.Observable[Any]:
        return rxgem.stream_chat(
            REQUEST,
            model=MODEL,
            api_key=KEY,
            base_url=endless_line,
            client=client,
            max_line_bytes=limit,
            id_factory=counter_ids(),
            clock=lambda: 1.0,
        )

    collect(mode, make)  # warm up: what a first run imports and caches is not the stream's
    chunks, error, peak = peak_while(lambda: collect(mode, make))
    assert too_long(error, limit)
    assert [c.to_dict() for c in chunks] == expected
    assert peak < 2 * limit, f"peak {peak / MiB:.1f} MiB with max_line_bytes of 1 MiB"


@pytest.mark.timeout(120)
def test_a_100mb_line_is_stopped_at_the_default_limit(endless_line: str) -> None:
    def work() -> tuple[list[Any], Any]:
        with httpx.Client() as client:
            return collect_sync(
                rxgem.stream_chat(
                    REQUEST, model=MODEL, api_key=KEY, base_url=endless_line, client=client
                )
            )

    chunks, error, peak = peak_while(work)
    assert too_long(error, DEFAULT_MAX_LINE_BYTES)
    assert len(chunks) == len(chunks_before_an_error())
    limit = DEFAULT_MAX_LINE_BYTES
    assert peak < 2 * limit, f"peak {peak / MiB:.0f} MiB with the default 64 MiB limit"
