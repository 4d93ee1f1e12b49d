"""The Interactions reader does not depend on how the bytes arrive: a recorded stream cut
anywhere (in a frame, a JSON string, a UTF-8 character) gives the same items."""

from __future__ import annotations

import warnings

from hypothesis import given, settings
from hypothesis import strategies as st
from interactions_harness import FAILING, OLD, STREAMS, name, read, sse

SAMPLES = [sse(path) for path in STREAMS if name(path) not in OLD | FAILING]


def _read(pieces: list[bytes]) -> list[object]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batches, error = read(pieces)
    assert error is None
    return [item for batch in batches for item in batch]


WHOLE = [_read([data]) for data in SAMPLES]


@settings(max_examples=150, derandomize=True, deadline=None)
@given(data=st.data(), which=st.integers(0, len(SAMPLES) - 1))
def test_slicing_the_bytes_anywhere_gives_the_same_items(data: st.DataObject, which: int) -> None:
    body = SAMPLES[which]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts"))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert _read(pieces) == WHOLE[which]


def test_byte_by_byte_gives_the_same_items() -> None:
    for body, whole in zip(SAMPLES, WHOLE, strict=True):
        if len(body) < 5000:
            assert _read([body[i : i + 1] for i in range(len(body))]) == whole
