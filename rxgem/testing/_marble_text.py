"""Marbles back to text: a failed comparison shown as two marble strings and a legend.

``assert output == expect_marbles("-a-b-|", lookup)`` fails with the expected and the
actual marbles written as the test writes them, each value by its letter in the
lookup; a value that is in none gets a capital letter of its own and a line in the
legend, and an error its class and arguments. The strings read back to the same ticks
(``-`` per tick, ``(a,b)`` for a group, whose length is ticks too), so they line up
as far as the two agree. rxgem's pytest plugin (``rxgem._pytest_plugin``) shows it.

A marble here is anything with ``time``, ``kind`` and ``value`` (a :class:`Marble`).
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["explain_marbles"]

_WIDTH = 100  # characters of a value's repr in the legend


class _Letters:
    """Who's who: the lookup's letters, then a fresh capital letter per unknown value."""

    def __init__(self, lookup: Mapping[str | float, Any] | None) -> None:
        self.known: list[tuple[str, Any]] = [(str(k), v) for k, v in (lookup or {}).items()]
        taken = {k for k, _ in self.known}
        pool = itertools.chain(string.ascii_uppercase, (f"v{n}" for n in itertools.count(1)))
        self.fresh = (name for name in pool if name not in taken)
        self.legend: list[str] = []

    def of(self, value: Any) -> str:
        for name, known in self.known:
            try:
                if known is value or bool(known == value):
                    return name
            except Exception:  # a value whose == raises is just not this one
                continue
        name = next(self.fresh)
        self.known.append((name, value))
        self.legend.append(f"  {name} = {_short(value)}")
        return name


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def _token(marble: Any, letters: _Letters) -> str:
    if marble.kind == "completed":
        return "|"
    if marble.kind == "error":
        return "#"
    return letters.of(marble.value)


def marble_string(records: Sequence[Any], letters: _Letters) -> str:
    """``records`` as a marble string from tick 0 (one that reads back to their ticks)."""
    out: list[str] = []
    cursor = 0.0
    for time, group in itertools.groupby(records, key=lambda r: r.time):
        tokens = [_token(r, letters) for r in group]
        out.append("-" * max(0, int(time - cursor)))
        text = tokens[0] if len(tokens) == 1 else f"({','.join(tokens)})"
        out.append(text)
        cursor = max(cursor, time) + len(text)
    return "".join(out)


def explain_marbles(
    actual: Sequence[Any], expected: Sequence[Any], lookup: Mapping[str | float, Any] | None
) -> list[str]:
    """The lines that show ``actual`` against ``expected`` as marble strings, each value
    by its letter in ``lookup``."""
    letters = _Letters(lookup)
    want = marble_string(expected, letters)
    got = marble_string(actual, letters)
    lines = [
        "the marbles differ:",
        f"expected: {want}",
        f"actual:   {got}",
    ]
    errors = [r for r in (*expected, *actual) if r.kind == "error"]
    if letters.legend:
        lines += ["where (not in the lookup):", *letters.legend]
    for record in errors:
        what = record.value.__name__ if isinstance(record.value, type) else repr(record.value)
        side = "expected" if any(record is e for e in expected) else "actual"
        lines.append(f"  # ({side}, tick {record.time:g}) = {what[:_WIDTH]}")
    return lines
