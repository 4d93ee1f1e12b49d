"""Where the marbles go: one mark per visible emission, placed by order or by time.

Shared by the text and SVG drawings of :mod:`rxgem.viz._render`, in their own units
(characters or pixels).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # annotations only: _record imports the renderer, not the other way
    from ._record import Emission

__all__ = ["Mark", "axis_ticks", "mark_emissions", "place_marks"]

_KEYS = "123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _key(index: int) -> str:
    return _KEYS[index] if index < len(_KEYS) else f"#{index + 1}"


@dataclass(frozen=True)
class Mark:
    """An emission as drawn: its key (``1``, ``2``… per lane, ``X``, ``|``), its label,
    and the link to its nearest visible cause."""

    emission: Emission
    lane: int
    key: str
    text: str
    cause: int | None  # seq of the linked visible emission


def mark_emissions(
    emissions: Sequence[Emission], lanes: Sequence[str], label: Callable[[Any], str]
) -> list[Mark]:
    """The marks of the emissions in ``lanes``; a link to a hidden lane follows that
    lane's own link upwards."""
    by_seq = {e.seq: e for e in emissions}
    visible = set(lanes)
    counts: dict[str, int] = {}
    marks: list[Mark] = []
    for emission in emissions:
        if emission.stage not in visible:
            continue
        cause = emission.cause
        while cause is not None and by_seq[cause].stage not in visible:
            cause = by_seq[cause].cause
        if emission.kind == "next":
            number = counts.get(emission.stage, 0)
            counts[emission.stage] = number + 1
            key, text = _key(number), label(emission.value)
        elif emission.kind == "error":
            key, text = "X", type(emission.value).__name__
        else:
            key, text = "|", ""
        marks.append(Mark(emission, lanes.index(emission.stage), key, text, cause))
    return marks


def place_marks(
    marks: Sequence[Mark],
    widths: Sequence[float],
    *,
    x: Literal["order", "time"],
    gap: float,
    scale: float,
    lanes: int,
) -> list[float]:
    """Centres of the marks, from 0: by column (order) or by time, never overlapping."""
    centres: list[float] = []
    if x == "order":
        columns: list[int] = []
        lane_last = [-1] * lanes
        current = 0
        for mark in marks:
            current = max(current, lane_last[mark.lane] + 1)
            lane_last[mark.lane] = current
            columns.append(current)
        column_width = [0.0] * (max(columns) + 1 if columns else 0)
        for column, width in zip(columns, widths, strict=True):
            column_width[column] = max(column_width[column], width)
        starts = list(itertools.accumulate((w + gap for w in column_width), initial=0.0))
        return [starts[c] + column_width[c] / 2 for c in columns]
    origin = min((m.emission.time for m in marks), default=0.0)
    # one offset for all, so that marks of the same time line up across lanes
    offset = (
        max(
            (w for m, w in zip(marks, widths, strict=True) if m.emission.time == origin),
            default=0.0,
        )
        / 2
    )
    right = [-math.inf] * lanes
    placed: dict[int, float] = {}
    for mark, width in zip(marks, widths, strict=True):
        centre = max(
            (mark.emission.time - origin) * scale + offset,
            right[mark.lane] + gap + width / 2,
            placed.get(mark.cause, -math.inf) if mark.cause is not None else -math.inf,
        )  # at its time, clear of its lane's previous mark, never left of its cause
        right[mark.lane] = centre + width / 2
        placed[mark.emission.seq] = centre
        centres.append(centre)
    return centres


def axis_ticks(first: float, last: float) -> list[float]:
    """Round values from ``first`` to ``last``, about five of them."""
    span = last - first
    if span <= 0:
        return [first]
    raw = span / 4
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    start = math.ceil(first / step) * step
    count = math.floor((last - start) / step + 1e-9) + 1
    return [round(start + i * step, 12) for i in range(count)]
