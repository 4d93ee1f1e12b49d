"""The SSE decoder's work is linear in its input, whatever its shape and however it is cut.

Each shape is decoded at N and at 4N bytes (in the same pieces): linear work grows about 4
times, quadratic about 16. A size is timed in CPU time of the thread, the best of several
rounds that time both in turn, so that a busy machine does not fail it (a quadratic step
fails every round). One plain bound stands beside it: 16 MB of blanks at a line start, the
shape an outside probe found taking 2.7 s of CPU (and 21 s at 48 MB).
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import time
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxgem import MalformedStreamError
from rxgem.core import SSEDecoder, SSEEvent

LIMIT = 9.0
"""Largest accepted time(4N) / time(N): linear is about 4, quadratic about 16."""


def decode(stream: bytes, piece: int) -> list[SSEEvent]:
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    for start in range(0, len(stream), piece):
        out += decoder.feed(stream[start : start + piece])
    with contextlib.suppress(MalformedStreamError):
        out += decoder.close()
    return out


def _cpu(run: Callable[[], object]) -> float:
    start = time.thread_time()
    run()
    return time.thread_time() - start


def assert_linear(shape: Callable[[int], bytes], n: int, piece: int) -> None:
    """time(4N) / time(N) under :data:`LIMIT`: CPU time of this thread, the best of up
    to 7 rounds that time both sizes in turn (stopping once the ratio is met after 2)."""
    small, large = shape(n), shape(4 * n)
    t_small = t_large = float("inf")
    gc.collect()
    gc.disable()
    try:
        for round_ in range(7):
            t_small = min(t_small, _cpu(lambda: decode(small, piece)))
            t_large = min(t_large, _cpu(lambda: decode(large, piece)))
            if round_ >= 1 and t_large < LIMIT * t_small:
                return
    finally:
        gc.enable()
    pytest.fail(
        f"time(4N)/time(N) for N={n} was {t_large / t_small:.1f}"
        f" ({t_small * 1e3:.1f} ms → {t_large * 1e3:.1f} ms); linear is about 4"
    )


SHAPES: dict[str, tuple[Callable[[int], bytes], int, int]] = {
    # name: (the stream of about n bytes, n, the size of the pieces it is fed in)
    "blanks at a line start": (lambda n: b" " * n, 1 << 20, 1024),
    "blanks after an event": (lambda n: b"data: 1\n\n" + b" \t" * (n // 2), 1 << 20, 1024),
    "blanks, then an object": (lambda n: b"\t" * n + b'{"a": 1}\n', 1 << 20, 1024),
    "a BOM, then blanks": (lambda n: b"\xef\xbb\xbf" + b" " * n, 1 << 20, 1024),
    "blanks, then an array": (lambda n: b" " * n + b"[1]", 1 << 20, 1024),
    "blanks in single bytes": (lambda n: b" " * n, 1 << 14, 1),
    "arrays one a line, in one piece": (lambda n: b"[1]\n" * (n // 4), 1 << 12, 1 << 30),
    "arrays back to back, in one piece": (lambda n: b"[1]" * (n // 3), 1 << 12, 1 << 30),
    "arrays after blank lines, in one piece": (
        lambda n: b" \r\n [] \n" * (n // 8),
        1 << 13,
        1 << 30,
    ),
    "a pretty array in a raw block, in one piece": (
        lambda n: b"{\n" + b"[\n" * (n // 4) + b"]\n" * (n // 4) + b"}\n",
        1 << 14,
        1 << 30,
    ),
    "lone CRs": (lambda n: b"\r" * n, 1 << 16, 1024),
    "a long comment in small pieces": (lambda n: b":" + b"x" * n, 1 << 18, 64),
    "a long data line in small pieces": (lambda n: b"data: " + b"x" * n, 1 << 18, 64),
    "lines of blanks": (lambda n: b" \n" * (n // 2), 1 << 14, 1024),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_the_work_grows_linearly(name: str) -> None:
    shape, n, piece = SHAPES[name]
    assert_linear(shape, n, piece)


def test_16_mb_of_blanks_at_a_line_start_decode_in_well_under_a_second_of_cpu() -> None:
    stream = b" " * (16 << 20) + b"\n"
    start = time.process_time()
    events = decode(stream, 64 * 1024)
    elapsed = time.process_time() - start
    assert events == []
    assert elapsed < 2.0, f"{elapsed:.2f} s of CPU for 16 MB of blanks"


def test_arrays_and_blanks_read_as_before() -> None:
    """The same events, whatever the pieces, for the shapes above (a small size)."""
    for name, (shape, _, _) in SHAPES.items():
        stream = shape(64)
        whole = decode(stream, len(stream) or 1)
        for piece in (1, 2, 3, 7):
            assert decode(stream, piece) == whole, (name, piece)


_TOKENS = [b"[", b"]", b" ", b"\t", b"\r", b"\n", b"{", b"}", b"data: ", b"x", b'"', b",", b":"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_TOKENS), max_size=60),
    st.lists(st.integers(min_value=0, max_value=1000), max_size=8),
)
def test_arrays_blanks_and_lines_read_the_same_however_cut(
    tokens: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(tokens)
    points = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    pieces = [stream[a:b] for a, b in itertools.pairwise(points)]
    whole = decode(stream, len(stream) or 1)
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    for piece in pieces:
        out += decoder.feed(piece)
    with contextlib.suppress(MalformedStreamError):
        out += decoder.close()
    assert out == whole
