"""Marble diagrams of what every stage of a pipeline emits.

A :class:`Recorder` hands out ``tap(stage)`` operators that record each
notification passing through them (the value, an error, the completion) with its
time, and pass it on unchanged. The recording draws itself as a marble diagram:
one lane per stage, one marble per emission, ``|`` for completion, ``X`` for an
error, and thin lines from each emission to the input that caused it.

.. code::

    rec = rxgem.viz.Recorder()
    chunks = source.pipe(
        rec.tap("bytes"), decode_sse(), rec.tap("decode_sse"), parse(), rec.tap("parse"), ...
    )
    rec                 # in Jupyter: an SVG diagram (hover a marble for its JSON)
    print(rec)          # elsewhere: a text diagram and a legend
    rec.save("x.svg")   # or .html, .txt

:func:`trace` builds such a chain from ``(name, operator)`` pairs, runs it and
returns the recorder (:func:`atrace` inside an event loop, e.g. Jupyter);
:func:`pipeline_stages` gives the six named stages of ``gemini_to_openai``;
:func:`trace_bytes` and :func:`trace_sample` replay Gemini bytes through them.

Time is virtual time when the recorder's clock is a ``TestScheduler`` (or any
``VirtualTimeScheduler``), else wall time in seconds since the first emission.
With ``x="time"``, a marble sits at its time unless that would overlap the marble
before it in its lane or put it left of its cause: then it moves right (the axis
shows where each time begins, the hover text the exact time). ``x="order"`` lays
marbles out by the order of emissions instead (compact and deterministic).
``x="auto"`` (the default) picks time for virtual time and for recordings that
took 50 ms or more (a live stream), order otherwise.

Links are inferred, not observed: an emission is linked to the latest emission
(of any kind) recorded before it in the lane above. That is exact for the rxgem
pipeline, whose stages react synchronously to their input, and a best guess for
operators that buffer, delay or reorder.

``python -m rxgem.viz docs/tour.svg`` writes the README's diagram (:func:`tour`).
"""

from __future__ import annotations

import argparse
import asyncio
import html
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from reactivex import Observable, abc
from reactivex.disposable import CompositeDisposable
from reactivex.scheduler import VirtualTimeScheduler
from reactivex.scheduler.eventloop import AsyncIOScheduler
from reactivex.testing import TestScheduler

from .. import samples
from ..operators import NamedOperator as Stage
from ..operators import pipeline_stages
from ._describe import category, describe, short, to_json
from ._describe import label as default_label

__all__ = [
    "Diagram",
    "Emission",
    "Kind",
    "Recorder",
    "SideBySide",
    "Stage",
    "XMode",
    "atrace",
    "main",
    "pipeline_stages",
    "side_by_side",
    "tour",
    "trace",
    "trace_bytes",
    "trace_sample",
]

T = TypeVar("T")

Kind: TypeAlias = Literal["next", "error", "completed"]
XMode: TypeAlias = Literal["auto", "order", "time"]
"""A named operator: ``("parse", rxgem.operators.parse())``."""

_AUTO_TIME_SPAN = 0.05  # seconds of wall time from which x="auto" means time


@dataclass(frozen=True)
class Emission:
    """One recorded notification.

    Attributes:
        seq: its position among all the recorder's emissions (0, 1, 2…).
        stage: the lane (the name given to ``tap``).
        kind: ``"next"``, ``"error"`` or ``"completed"``.
        time: virtual time (ticks), or seconds since the recorder's first emission.
        value: the value (``next``), the exception (``error``), ``None`` (``completed``).
        cause: the ``seq`` of the emission it is linked to in the lane above (the
            latest one recorded before it), ``None`` for the first lane.
    """

    seq: int
    stage: str
    kind: Kind
    time: float
    value: Any
    cause: int | None


class Recorder:
    """Records what taps see; shows itself as a marble diagram.

    Args:
        clock: a ``VirtualTimeScheduler`` such as ``TestScheduler`` (virtual time,
            in ticks), another scheduler (its ``now``, in seconds since the first
            emission), a function returning seconds, or ``None`` for
            ``time.perf_counter`` (seconds since the first emission).
        title: the diagram's title.

    Lanes are ordered by the first ``tap(stage)`` call for each name. The recorder
    is thread-safe; several subscriptions may share it (their emissions interleave
    in the same lanes).
    """

    def __init__(
        self,
        clock: abc.SchedulerBase | Callable[[], float] | None = None,
        *,
        title: str | None = None,
    ) -> None:
        self.title = title
        self._lock = threading.Lock()
        self._stages: list[str] = []
        self._emissions: list[Emission] = []
        self._last: dict[str, int] = {}
        self._origin: float | None = None
        self._virtual = isinstance(clock, VirtualTimeScheduler)
        self._now: Callable[[], float]
        if isinstance(clock, VirtualTimeScheduler):
            self._now = _virtual_clock(clock)
            self._relative = False
        elif isinstance(clock, abc.SchedulerBase):
            scheduler = clock
            self._now = lambda: scheduler.now.timestamp()
            self._relative = True
        elif clock is None:
            self._now = time.perf_counter
            self._relative = True
        else:
            self._now = clock
            self._relative = False

    # -- recording

    def tap(self, stage: str) -> Callable[[Observable[T]], Observable[T]]:
        """An operator that records every notification under ``stage`` and passes it on.

        .. code::

            ---a---b---|
            [ tap("x") ]
            ---a---b---|     (and lane "x" of the recorder gets a, b and |)
        """
        with self._lock:
            if stage not in self._stages:
                self._stages.append(stage)

        def operator(source: Observable[T]) -> Observable[T]:
            def subscribe(
                observer: abc.ObserverBase[T], scheduler: abc.SchedulerBase | None = None
            ) -> abc.DisposableBase:
                def on_next(value: T) -> None:
                    self._record(stage, "next", value)
                    observer.on_next(value)

                def on_error(error: Exception) -> None:
                    self._record(stage, "error", error)
                    observer.on_error(error)

                def on_completed() -> None:
                    self._record(stage, "completed", None)
                    observer.on_completed()

                return source.subscribe(on_next, on_error, on_completed, scheduler=scheduler)

            return Observable(subscribe)

        return operator

    def _record(self, stage: str, kind: Kind, value: Any) -> None:
        with self._lock:
            now = self._now()
            if self._relative:
                if self._origin is None:
                    self._origin = now
                now -= self._origin
            lane = self._stages.index(stage)
            cause = self._last.get(self._stages[lane - 1]) if lane else None
            seq = len(self._emissions)
            self._emissions.append(Emission(seq, stage, kind, now, value, cause))
            self._last[stage] = seq

    # -- reading

    @property
    def stages(self) -> list[str]:
        """The lanes, in order."""
        with self._lock:
            return list(self._stages)

    @property
    def emissions(self) -> list[Emission]:
        """Every recorded notification, in the order they happened."""
        with self._lock:
            return list(self._emissions)

    @property
    def virtual(self) -> bool:
        """Whether times are virtual ticks (else seconds)."""
        return self._virtual

    def values(self, stage: str) -> list[Any]:
        """The values ``stage`` emitted, in order."""
        return [e.value for e in self.emissions if e.stage == stage and e.kind == "next"]

    def error(self, stage: str | None = None) -> BaseException | None:
        """The error ``stage`` (or, by default, the last lane) ended with, if any."""
        emissions = self.emissions
        lanes = self.stages
        wanted = stage if stage is not None else (lanes[-1] if lanes else None)
        for emission in emissions:
            if emission.stage == wanted and emission.kind == "error":
                error: BaseException = emission.value
                return error
        return None

    def diagram(
        self,
        *,
        x: XMode = "auto",
        stages: Sequence[str] | None = None,
        title: str | None = None,
        links: bool = True,
        label: Callable[[Any], str] | None = None,
    ) -> Diagram:
        """A snapshot of the recording as a :class:`Diagram`.

        Args:
            x: ``"time"``, ``"order"`` or ``"auto"`` (see the module docs).
            stages: the lanes to show, in this order (default: all). A link to a
                hidden lane follows that lane's own link upwards.
            title: default: the recorder's title.
            links: draw the lines from inputs to the outputs they caused.
            label: the short text of a marble (default: a few words per value).
        """
        with self._lock:
            emissions = list(self._emissions)
            lanes = list(self._stages)
        if stages is not None:
            unknown = [s for s in stages if s not in lanes]
            if unknown:
                raise ValueError(f"no lane named {unknown[0]!r}; lanes: {', '.join(lanes)}")
            lanes = list(stages)
        if x == "auto":
            times = [e.time for e in emissions]
            span = max(times) - min(times) if times else 0.0
            timed = span > 0 if self._virtual else span >= _AUTO_TIME_SPAN
            x = "time" if timed else "order"
        return Diagram(
            emissions,
            lanes,
            x=x,
            unit="ticks" if self._virtual else "s",
            title=self.title if title is None else title,
            links=links,
            label=label or default_label,
        )

    def __str__(self) -> str:
        return self.diagram().to_text()

    def __repr__(self) -> str:
        return f"<Recorder lanes={self.stages} emissions={len(self.emissions)}>"

    def _repr_svg_(self) -> str:
        return self.diagram().to_svg()

    def _repr_html_(self) -> str:
        return self.diagram().to_html()

    def save(self, path: str | Path, **options: Any) -> Path:
        """``self.diagram(**options).save(path)``."""
        return self.diagram(**options).save(path)


def _virtual_clock(scheduler: VirtualTimeScheduler) -> Callable[[], float]:
    def now() -> float:
        clock = scheduler.clock
        return clock.timestamp() if hasattr(clock, "timestamp") else float(clock)

    return now


# -- layout -----------------------------------------------------------------------------

_KEYS = "123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _key(index: int) -> str:
    return _KEYS[index] if index < len(_KEYS) else f"#{index + 1}"


@dataclass(frozen=True)
class _Mark:
    emission: Emission
    lane: int
    key: str
    text: str
    cause: int | None  # seq of the linked visible emission


def _marks(
    emissions: Sequence[Emission], lanes: Sequence[str], label: Callable[[Any], str]
) -> list[_Mark]:
    by_seq = {e.seq: e for e in emissions}
    visible = set(lanes)
    counts: dict[str, int] = {}
    marks: list[_Mark] = []
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
        marks.append(_Mark(emission, lanes.index(emission.stage), key, text, cause))
    return marks


def _place(
    marks: Sequence[_Mark],
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


def _ticks(first: float, last: float) -> list[float]:
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


def _fmt_time(value: float, unit: str) -> str:
    if unit == "ticks":
        return f"{value:g}"
    if abs(value) < 1:
        return f"{_n(value * 1000)} ms"
    return f"{value:.3f} s"


# -- SVG --------------------------------------------------------------------------------

_FILL = {
    "text": "#bbf7d0",
    "thought": "#e9d5ff",
    "call": "#fed7aa",
    "finish": "#bfdbfe",
    "usage": "#fef08a",
    "raw": "#e5e7eb",
    "error": "#fecaca",
    "other": "#f3f4f6",
}
_CHAR = 6.6  # width of one character of the 11 px monospace marble labels
_PILL_H = 20
_LANE_GAP = 58
_FONT = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace"


def _n(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


class Diagram:
    """A marble diagram of recorded emissions: SVG, HTML (inline SVG) or text.

    Made by :meth:`Recorder.diagram`. ``str()`` is the text diagram with a legend;
    in Jupyter it shows as SVG (``_repr_svg_``) or HTML (``_repr_html_``, with each
    emission's JSON as hover text); :meth:`save` writes ``.svg``, ``.html`` or ``.txt``.
    """

    def __init__(
        self,
        emissions: Sequence[Emission],
        stages: Sequence[str],
        *,
        x: Literal["order", "time"],
        unit: str,
        title: str | None,
        links: bool,
        label: Callable[[Any], str],
    ) -> None:
        self.stages = list(stages)
        self.x = x
        self.unit = unit
        self.title = title
        self.links = links
        self._marks = _marks(emissions, self.stages, label)

    def __len__(self) -> int:
        return len(self._marks)

    # -- text

    def to_text(self) -> str:
        """One line per lane (``─1──2──|``), then a legend of every marble."""
        marks = self._marks
        place = self.x
        scale = 0.0
        if place == "time":
            distinct = len({m.emission.time for m in marks})
            target = min(100.0, max(30.0, 4.0 * distinct))
            times = [m.emission.time for m in marks]
            span = max(times) - min(times) if times else 0.0
            scale = target / span if span > 0 else 0.0
        centres = _place(
            marks, [1.0] * len(marks), x=place, gap=2.0, scale=scale, lanes=len(self.stages)
        )
        width = int(max(centres, default=0.0)) + 3
        rows = [["─"] * width for _ in self.stages]
        for mark, centre in zip(marks, centres, strict=True):
            symbol = mark.key if len(mark.key) == 1 else "•"
            column = math.floor(centre) + 1
            rows[mark.lane][column] = symbol
            if mark.emission.kind != "next":  # the lane ends here
                rows[mark.lane][column + 1 :] = [" "] * (width - column - 1)
        name_width = max((len(s) for s in self.stages), default=0) + 2
        lines: list[str] = []
        if self.title:
            lines.append(self.title)
        lines.append(f"{'':{name_width}}(x: {'event order' if place == 'order' else 'time'})")
        for stage, row in zip(self.stages, rows, strict=True):
            lines.append(f"{stage:{name_width}}{''.join(row)}".rstrip())
        by_seq = {m.emission.seq: m for m in marks}
        for lane, stage in enumerate(self.stages):
            lines.append("")
            lines.append(f"{stage}:")
            for mark in marks:
                if mark.lane != lane:
                    continue
                emission = mark.emission
                when = f"t={_fmt_time(emission.time, self.unit)}  " if place == "time" else ""
                if emission.kind == "completed":
                    what = "completed"
                else:
                    what = short(describe(emission.value), 200)
                origin = ""
                if self.links and mark.cause is not None and mark.cause in by_seq:
                    cause = by_seq[mark.cause]
                    origin = f"  ← {cause.emission.stage} {cause.key}"
                lines.append(f"  {mark.key:>3}  {when}{what}{origin}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        return f"<Diagram lanes={self.stages} marks={len(self._marks)} x={self.x!r}>"

    # -- SVG

    def _mark_width(self, mark: _Mark) -> float:
        if mark.emission.kind == "completed":
            return 10.0
        if mark.emission.kind == "error":
            return 20.0 + len(mark.text) * _CHAR
        return max(24.0, len(mark.text) * _CHAR + 14.0)

    def to_svg(self) -> str:
        """The diagram as a standalone SVG document (hover a marble for its JSON)."""
        marks = self._marks
        widths = [self._mark_width(m) for m in marks]
        scale = 0.0
        if self.x == "time":
            distinct = len({m.emission.time for m in marks})
            target = min(1600.0, max(480.0, 90.0 * (distinct - 1)))
            times = [m.emission.time for m in marks]
            span = max(times) - min(times) if times else 0.0
            scale = target / span if span > 0 else 0.0
        centres = _place(marks, widths, x=self.x, gap=10.0, scale=scale, lanes=len(self.stages))
        left = 24.0 + max((len(s) for s in self.stages), default=0) * 7.3 + 14.0
        top = 44.0 if self.title else 20.0
        lane_y = [top + 14.0 + i * _LANE_GAP for i in range(len(self.stages))]
        content = max((c + w / 2 for c, w in zip(centres, widths, strict=True)), default=0.0)
        right = left + content + 24.0
        bottom = (lane_y[-1] if lane_y else top) + 30.0
        axis = self.x == "time" and scale > 0
        if axis:
            bottom += 26.0
        key_y = bottom + 8.0
        height = key_y + 22.0
        width = max(right, left + 420.0)

        out: list[str] = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}" height="{_n(height)}"'
            f' viewBox="0 0 {_n(width)} {_n(height)}" font-family="{_esc(_FONT)}">',
            "<style>.m:hover rect{stroke-width:2.5}.m{cursor:default}</style>",
            f'<rect x="0" y="0" width="{_n(width)}" height="{_n(height)}" fill="#ffffff"/>',
        ]
        if self.title:
            out.append(
                f'<text x="16" y="26" font-size="14" font-weight="bold" fill="#111827">'
                f"{_esc(self.title)}</text>"
            )
        xs = {m.emission.seq: left + c for m, c in zip(marks, centres, strict=True)}
        # where lines meet a mark: its centre, or the X of an error
        anchor = {
            m.emission.seq: xs[m.emission.seq] - w / 2 + 7
            if m.emission.kind == "error"
            else xs[m.emission.seq]
            for m, w in zip(marks, widths, strict=True)
        }
        lane_of = {m.emission.seq: m.lane for m in marks}
        ends = {m.lane: anchor[m.emission.seq] for m in marks if m.emission.kind != "next"}
        for lane, (stage, y) in enumerate(zip(self.stages, lane_y, strict=True)):
            out.append(
                f'<text x="16" y="{_n(y + 4)}" font-size="12" fill="#111827">{_esc(stage)}</text>'
            )
            out.append(  # a lane's line stops at its completion or error
                f'<line x1="{_n(left - 8)}" y1="{_n(y)}" x2="{_n(ends.get(lane, right - 8))}"'
                f' y2="{_n(y)}" stroke="#9ca3af" stroke-width="1"/>'
            )
        for mark in marks if self.links else ():
            if mark.cause is None or mark.cause not in anchor:
                continue
            y1 = lane_y[lane_of[mark.cause]] + _PILL_H / 2
            y2 = lane_y[mark.lane] - _PILL_H / 2
            if y2 > y1:
                out.append(
                    f'<line x1="{_n(anchor[mark.cause])}" y1="{_n(y1)}"'
                    f' x2="{_n(anchor[mark.emission.seq])}" y2="{_n(y2)}"'
                    ' stroke="#cbd5e1" stroke-width="1"/>'
                )
        for mark, width_ in zip(marks, widths, strict=True):
            out.append(self._svg_mark(mark, xs[mark.emission.seq], lane_y[mark.lane], width_))
        if axis:
            out.extend(self._svg_axis(marks, left, scale, bottom - 22.0))
        x = 16.0
        for name, fill in _FILL.items():
            out.append(
                f'<rect x="{_n(x)}" y="{_n(key_y)}" width="12" height="12" rx="3" fill="{fill}"'
                ' stroke="#6b7280" stroke-width="0.8"/>'
            )
            out.append(
                f'<text x="{_n(x + 16)}" y="{_n(key_y + 10)}" font-size="10" fill="#374151">'
                f"{name}</text>"
            )
            x += 22.0 + len(name) * 6.2 + 12.0
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def _hover(self, mark: _Mark) -> str:
        emission = mark.emission
        when = _fmt_time(emission.time, self.unit)
        head = f"{emission.stage} {mark.key} · {emission.kind} · t={when}"
        if emission.kind == "completed":
            return head
        return f"{head}\n{describe(emission.value)}\n{to_json(emission.value)}"

    def _svg_mark(self, mark: _Mark, x: float, y: float, width: float) -> str:
        title = f"<title>{_esc(self._hover(mark))}</title>"
        kind = mark.emission.kind
        if kind == "completed":
            return (
                f'<g class="m">{title}<line x1="{_n(x)}" y1="{_n(y - 11)}" x2="{_n(x)}"'
                f' y2="{_n(y + 11)}" stroke="#111827" stroke-width="2.5"/></g>'
            )
        if kind == "error":
            cx = x - width / 2 + 7
            return (
                f'<g class="m">{title}<path d="M{_n(cx - 6)} {_n(y - 6)}L{_n(cx + 6)} {_n(y + 6)}'
                f'M{_n(cx + 6)} {_n(y - 6)}L{_n(cx - 6)} {_n(y + 6)}" stroke="#dc2626"'
                f' stroke-width="2.5"/><text x="{_n(cx + 11)}" y="{_n(y + 4)}" font-size="11"'
                f' fill="#dc2626">{_esc(mark.text)}</text></g>'
            )
        fill = _FILL[category(mark.emission.value)]
        return (
            f'<g class="m">{title}<rect x="{_n(x - width / 2)}" y="{_n(y - _PILL_H / 2)}"'
            f' width="{_n(width)}" height="{_PILL_H}" rx="10" fill="{fill}" stroke="#4b5563"'
            f' stroke-width="1"/><text x="{_n(x)}" y="{_n(y + 4)}" font-size="11"'
            f' text-anchor="middle" fill="#111827">{_esc(mark.text)}</text></g>'
        )

    def _svg_axis(
        self, marks: Sequence[_Mark], left: float, scale: float, y: float
    ) -> Iterator[str]:
        times = [m.emission.time for m in marks]
        origin, last = min(times), max(times)
        yield (
            f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(left + (last - origin) * scale)}"'
            f' y2="{_n(y)}" stroke="#6b7280" stroke-width="1"/>'
        )
        for tick in _ticks(origin, last):
            x = left + (tick - origin) * scale
            yield (
                f'<line x1="{_n(x)}" y1="{_n(y - 3)}" x2="{_n(x)}" y2="{_n(y + 3)}"'
                ' stroke="#6b7280" stroke-width="1"/>'
            )
            yield (
                f'<text x="{_n(x)}" y="{_n(y + 15)}" font-size="10" text-anchor="middle"'
                f' fill="#374151">{_esc(_fmt_time(tick, self.unit))}</text>'
            )

    def _repr_svg_(self) -> str:
        return self.to_svg()

    # -- HTML

    def to_html(self) -> str:
        """The SVG inline in a scrolling ``<div>`` (so hover text works), plus the legend."""
        return (
            '<div style="overflow-x:auto;max-width:100%">'
            + self.to_svg()
            + "</div><details><summary>legend</summary><pre>"
            + _esc(self.to_text())
            + "</pre></details>"
        )

    def _repr_html_(self) -> str:
        return self.to_html()

    def save(self, path: str | Path) -> Path:
        """Write the diagram: SVG for ``.svg``, HTML for ``.html``/``.htm``, else text."""
        target = Path(path)
        suffix = target.suffix.lower()
        if suffix == ".svg":
            text = self.to_svg()
        elif suffix in (".html", ".htm"):
            text = "<!doctype html>\n<meta charset=utf-8>\n" + self.to_html()
        else:
            text = self.to_text()
        target.write_text(text, encoding="utf-8")
        return target


class SideBySide:
    """Several diagrams next to each other (wrapping), each under a heading."""

    def __init__(self, diagrams: Mapping[str, Diagram | Recorder]) -> None:
        self.diagrams = {
            name: d if isinstance(d, Diagram) else d.diagram() for name, d in diagrams.items()
        }

    def _repr_html_(self) -> str:
        cells = "".join(
            f'<div style="flex:0 1 auto;min-width:0"><h4>{_esc(name)}</h4>{d.to_html()}</div>'
            for name, d in self.diagrams.items()
        )
        style = "display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start"
        return f'<div style="{style}">{cells}</div>'

    def __str__(self) -> str:
        return "\n".join(f"== {name}\n{d.to_text()}" for name, d in self.diagrams.items())


def side_by_side(diagrams: Mapping[str, Diagram | Recorder]) -> SideBySide:
    """Show several diagrams next to each other in Jupyter (one after the other as text)."""
    return SideBySide(diagrams)


# -- running ----------------------------------------------------------------------------


def _chain(
    recorder: Recorder, source: Observable[Any], stages: Sequence[Stage], source_name: str | None
) -> Observable[Any]:
    stream = source.pipe(recorder.tap(source_name)) if source_name is not None else source
    for name, operator in stages:
        stream = stream.pipe(operator, recorder.tap(name))
    return stream


def trace(
    source: Observable[Any],
    stages: Sequence[Stage],
    *,
    scheduler: abc.SchedulerBase | None = None,
    source_name: str | None = "source",
    title: str | None = None,
    timeout: float | None = 60.0,
) -> Recorder:
    """Run ``source`` through ``stages`` with a tap after each, and return the recording.

    .. code::

        rec = trace(reactivex.from_iterable(pieces), pipeline_stages(), source_name="bytes")

    With a ``VirtualTimeScheduler`` (e.g. ``TestScheduler``), the chain is subscribed
    on it and the scheduler is run until it has nothing left to do; times are
    virtual. Otherwise the chain is subscribed on the calling thread and this waits
    (up to ``timeout`` seconds) for it to end. Errors are recorded, not raised.
    Inside a running event loop (Jupyter), use ``await atrace(...)`` for a source
    that emits on the loop.
    """
    recorder = Recorder(scheduler, title=title)
    stream = _chain(recorder, source, stages, source_name)
    ended = threading.Event()

    def on_error(_: Exception) -> None:
        ended.set()

    subscription = stream.subscribe(on_error=on_error, on_completed=ended.set, scheduler=scheduler)
    if isinstance(scheduler, VirtualTimeScheduler):
        VirtualTimeScheduler.start(scheduler)
    if ended.is_set():
        return recorder
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        subscription.dispose()
        raise RuntimeError(
            "the source did not end synchronously inside a running event loop:"
            " use `await rxgem.viz.atrace(...)`"
        )
    if not ended.wait(timeout):
        subscription.dispose()
        raise TimeoutError(f"the traced stream did not end within {timeout} s")
    return recorder


async def atrace(
    source: Observable[Any],
    stages: Sequence[Stage],
    *,
    source_name: str | None = "source",
    title: str | None = None,
) -> Recorder:
    """:func:`trace` for ``async`` code and Jupyter: subscribes on the running loop.

    .. code::

        rec = await atrace(rxgem.from_gemini(request, model=m, client=aclient), pipeline_stages())

    Times are wall time. Cancelling the call disposes of the subscription.
    """
    loop = asyncio.get_running_loop()
    recorder = Recorder(title=title)
    stream = _chain(recorder, source, stages, source_name)
    ended: asyncio.Future[None] = loop.create_future()

    def end() -> None:
        def settle() -> None:
            if not ended.done():
                ended.set_result(None)

        try:
            on_loop = asyncio.get_running_loop() is loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            settle()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(settle)

    def on_error(_: Exception) -> None:
        end()

    subscription = stream.subscribe(
        on_error=on_error, on_completed=end, scheduler=AsyncIOScheduler(loop)
    )
    try:
        await ended
    finally:
        subscription.dispose()
    return recorder


def _counter_ids() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"{next(numbers):024d}"


def trace_bytes(
    pieces: Sequence[bytes],
    *,
    interval: int = 10,
    title: str | None = None,
    **options: Any,
) -> Recorder:
    """Replay Gemini body bytes through :func:`pipeline_stages` on virtual time.

    Piece ``i`` arrives at tick ``(i + 1) * interval`` of a fresh ``TestScheduler``,
    and the body ends ``interval`` ticks after the last one. ``options`` go to
    :func:`pipeline_stages`; by default ids are counters (``000…001``) and
    ``created`` is 0, so the recording is the same on every run.
    """
    options.setdefault("id_factory", _counter_ids())
    options.setdefault("clock", lambda: 0.0)
    scheduler = TestScheduler()
    end = (len(pieces) + 1) * interval

    def subscribe(
        observer: abc.ObserverBase[bytes], _: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        def emit(piece: bytes) -> Callable[[abc.SchedulerBase, Any], None]:
            return lambda _scheduler, _state: observer.on_next(piece)

        handles = [
            scheduler.schedule_absolute((i + 1) * interval, emit(piece))
            for i, piece in enumerate(pieces)
        ]
        handles.append(
            scheduler.schedule_absolute(end, lambda _scheduler, _state: observer.on_completed())
        )
        return CompositeDisposable(handles)

    source: Observable[bytes] = Observable(subscribe)
    return trace(
        source,
        pipeline_stages(**options),
        scheduler=scheduler,
        source_name="bytes",
        title=title,
    )


def trace_sample(
    name: str = "thinking_tools",
    *,
    piece_size: int = 2048,
    interval: int = 10,
    title: str | None = None,
    **options: Any,
) -> Recorder:
    """Replay a shipped sample (``rxgem.samples``) cut into ``piece_size`` pieces.

    See :func:`trace_bytes`; the default title names the sample and its pieces.
    """
    data = samples.read(name)
    pieces = [data[i : i + piece_size] for i in range(0, len(data), piece_size)]
    if title is None:
        title = f"{name.removesuffix('.sse')}: {len(data)} bytes in {len(pieces)} pieces"
    return trace_bytes(pieces, interval=interval, title=title, **options)


def tour(*, x: XMode = "order") -> Diagram:
    """The README's diagram: the main sample through every stage (``docs/tour.svg``)."""
    recorder = trace_sample("thinking_tools", model="gemini-2.5-flash")
    return recorder.diagram(x=x)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rxgem.viz [OUT] [--sample NAME] [--x order|time]``: draw a sample.

    Without ``--sample``, writes the README's tour diagram. ``OUT`` ending in
    ``.svg``, ``.html`` or anything else (text); without ``OUT``, prints the text.
    """
    parser = argparse.ArgumentParser(prog="python -m rxgem.viz", description=main.__doc__)
    parser.add_argument("out", nargs="?", help="file to write (.svg, .html or text)")
    parser.add_argument("--sample", help="a sample name (default: the tour)")
    parser.add_argument("--x", choices=("order", "time"), default="order")
    parser.add_argument("--piece-size", type=int, default=2048)
    args = parser.parse_args(argv)
    if args.sample is None and args.piece_size == 2048:
        diagram = tour(x=args.x)
    else:
        recorder = trace_sample(args.sample or "thinking_tools", piece_size=args.piece_size)
        diagram = recorder.diagram(x=args.x)
    if args.out is None:
        print(diagram.to_text(), end="")
    else:
        diagram.save(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
