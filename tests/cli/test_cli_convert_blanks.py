"""``rxgem convert`` on a long run of blanks: what it reads is not copied again and again.

An outside probe (issue 32, finding 9) found ``convert`` quadratic on a capture of blanks
(32 MB: 46 s). The SSE decoder was made linear, but telling the capture's kind from its
first bytes still joined every piece read so far to the next while it saw only blanks:
a copy of everything read per piece (64 MB: 42 s of CPU, 8 GB of pages touched). The
bytes it looks at are now at most ``LOOK`` past the leading blanks: reading N bytes of
blanks allocates a few pieces' worth beside the pieces it keeps, not 2N.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator

import pytest

from rxgem.cli._upstream_of import upstream_of
from rxgem.cli.convert import _head

PIECE = 64 * 1024


def _pieces(shape: bytes, size: int, tail: bytes = b"") -> Iterator[bytes]:
    whole = shape * (size // len(shape)) + tail
    for start in range(0, len(whole), PIECE):
        yield whole[start : start + PIECE]


@pytest.mark.parametrize(
    "shape", [b" ", b"\r\n", b"\xef\xbb\xbf "], ids=["spaces", "line ends", "BOMs and blanks"]
)
def test_reading_blanks_copies_none_of_them_whole(shape: bytes) -> None:
    size = 8 << 20
    pieces = list(_pieces(shape, size))  # made before: only what reading them takes counts
    tracemalloc.start()
    try:
        read, found = _head(iter(pieces))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert read == pieces
    assert found.source == "generate-content"
    assert peak < size / 4, f"{peak / size:.2f} times the {size} bytes read, allocated anew"


@pytest.mark.parametrize(
    ("shape", "tail"),
    [
        (b" ", b'data: {"candidates": []}\n\n'),
        (b"\r\n", b'event: interaction.created\ndata: {"event_type": "x"}\n\n'),
        (b"\xef\xbb\xbf \n", b'{"steps": [], "object": "interaction"}'),
        (b"\t", b'data: {"object": "chat.completion.chunk"}\n\n'),
        (b" ", b""),
        (b"\xef", b"\xbb\xbf {}"),  # a BOM cut where the pieces meet, then JSON
    ],
)
def test_the_kind_is_told_as_from_the_whole_head(shape: bytes, tail: bytes) -> None:
    """Blanks within LOOK: the same answer as :func:`upstream_of` on the whole input."""
    for size in (0, 1, 1000, PIECE - 300):
        whole = b"".join(_pieces(shape, size, tail))
        read, found = _head(_pieces(shape, size, tail))
        assert b"".join(read) == whole[: len(b"".join(read))]
        assert found == upstream_of(whole, ended=True), (shape, size, tail)


@pytest.mark.parametrize(
    "pieces",
    [
        [b"  \xef", b"\xbb\xbf {}"],  # a BOM cut where two pieces meet
        [b" \xef\xbb", b"\xbf", b"\t\r\n", b'data: {"event_type": "x"}\n\n'],
        [b"\xef\xef\xbb\xbf\xbb\xbf", b" {}"],  # no BOM whole at the start: not skipped
        [b" \xbb ", b"{}"],
    ],
)
def test_blanks_and_boms_cut_anywhere_are_skipped_as_from_the_whole(pieces: list[bytes]) -> None:
    read, found = _head(iter(pieces))
    assert read == pieces[: len(read)]
    assert found == upstream_of(b"".join(pieces), ended=True)
