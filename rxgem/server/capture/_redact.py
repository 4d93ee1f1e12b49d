"""The inspector's redaction: every secret the server knows, out of what it keeps; sans-IO.

A secret is looked for in the bytes joined, never piece by piece (a key split across two
network pieces is found whole), and where kept bytes end before the data does, a start
of a secret there is hidden too.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Final

from ...transport import REDACTED

__all__ = ["redact_pieces"]

_MIN_TAIL: Final = 4
"""The shortest start of a secret hidden where kept bytes end before the data does."""


def redact_pieces(
    pieces: Sequence[bytes], secrets: Sequence[bytes], *, cut: bool = False
) -> list[bytes]:
    """``pieces`` joined, each secret replaced by ``[redacted]``, and cut again where they
    were: a secret split across pieces is found whole, and a cut inside one moves to the
    end of its ``[redacted]`` (the piece after it may be left empty).

    ``cut``: the bytes end before the data does (kept bytes of a longer or unfinished
    stream), so a start of a secret at their end (4 bytes or more) is hidden too.
    """
    joined = b"".join(pieces)
    if not secrets:
        return list(pieces)
    ordered = sorted(secrets, key=len, reverse=True)  # the longest where two start alike
    pattern = re.compile(b"|".join(re.escape(secret) for secret in ordered))
    spans = [match.span() for match in pattern.finditer(joined)]
    if cut:
        tail = _secret_start(joined, spans[-1][1] if spans else 0, ordered)
        if tail < len(joined):
            spans.append((tail, len(joined)))
    redacted: list[bytes] = []
    done = 0
    index = 0
    for end in itertools.accumulate(len(piece) for piece in pieces):
        piece = bytearray()
        while index < len(spans) and spans[index][0] < end:
            start, stop = spans[index]
            piece += joined[done:start] + REDACTED
            done = stop
            index += 1
        if done < end:
            piece += joined[done:end]
            done = end
        redacted.append(bytes(piece))
    return redacted


def _secret_start(data: bytes, after: int, secrets: Sequence[bytes]) -> int:
    """Where the longest end of ``data`` (past ``after``) that begins a secret starts,
    else ``len(data)``."""
    found = len(data)
    for secret in secrets:
        first = max(after, len(data) - len(secret) + 1)
        for start in range(first, len(data) - _MIN_TAIL + 1):
            if start < found and secret.startswith(data[start:]):
                found = start
                break
    return found
