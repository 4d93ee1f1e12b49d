"""Drawing a recording: :class:`Diagram` (text, SVG, HTML) and :class:`SideBySide`."""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ._describe import short, to_json
from ._labeller import Labeller, default_labeller
from ._layout import Mark, axis_ticks, mark_emissions, place_marks

if TYPE_CHECKING:  # annotations only: _record imports the renderer, not the other way
    from ._record import Emission, Recorder

__all__ = ["Diagram", "SideBySide", "side_by_side"]

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


def _columns(text: str) -> int:
    """How many monospace cells ``text`` takes: wide (CJK) characters two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells, ending in ``…`` when cut."""
    if _columns(text) <= width:
        return text
    kept, used = [], 1
    for char in text:
        used += _columns(char)
        if used > width:
            break
        kept.append(char)
    return "".join(kept) + "…"


def _fmt_time(value: float, unit: str) -> str:
    if unit == "ticks":
        return f"{value:g}"
    if abs(value) < 1:
        return f"{_n(value * 1000)} ms"
    return f"{value:.3f} s"


class Diagram:
    """A marble diagram of recorded emissions: SVG, HTML (inline SVG) or text.

    Made by :meth:`Recorder.diagram`. ``str()`` is the text diagram with a legend,
    ``repr()`` its lanes alone (what ``assert ..., diagram`` shows under pytest);
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
        label_width: int = 24,
    ) -> None:
        self.stages = list(stages)
        self.x = x
        self.unit = unit
        self.title = title
        self.links = links
        self.label_width = label_width
        self._labeller = label if isinstance(label, Labeller) else default_labeller
        self._marks = mark_emissions(emissions, self.stages, label)

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
        centres = place_marks(
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
                    what = short(self._labeller.describe(emission.value), 200)
                origin = ""
                if self.links and mark.cause is not None and mark.cause in by_seq:
                    cause = by_seq[mark.cause]
                    origin = f"  ← {cause.emission.stage} {cause.key}"
                lines.append(f"  {mark.key:>3}  {when}{what}{origin}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        # an assert message shows the repr (pytest's, cut at 240 characters): the lanes,
        # without the legend that str() adds
        lanes = self.to_text().split("\n\n", 1)[0]
        return f"<Diagram\n{lanes}\n>"

    # -- SVG

    def _shown(self, mark: Mark) -> str:
        return _fit(mark.text, self.label_width)

    def _mark_width(self, mark: Mark) -> float:
        if mark.emission.kind == "completed":
            return 10.0
        if mark.emission.kind == "error":
            return 20.0 + _columns(self._shown(mark)) * _CHAR
        return max(24.0, _columns(self._shown(mark)) * _CHAR + 14.0)

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
        centres = place_marks(
            marks, widths, x=self.x, gap=10.0, scale=scale, lanes=len(self.stages)
        )
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

    def _hover(self, mark: Mark) -> str:
        emission = mark.emission
        when = _fmt_time(emission.time, self.unit)
        head = f"{emission.stage} {mark.key} · {emission.kind} · t={when}"
        if self._shown(mark) != mark.text:
            head += f" · {mark.text}"  # the whole label, cut in the marble
        if emission.kind == "completed":
            return head
        described = self._labeller.describe(emission.value)
        return f"{head}\n{described}\n{to_json(emission.value)}"

    def _svg_mark(self, mark: Mark, x: float, y: float, width: float) -> str:
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
                f' fill="#dc2626">{_esc(self._shown(mark))}</text></g>'
            )
        fill = _FILL[self._labeller.category(mark.emission.value)]
        return (
            f'<g class="m">{title}<rect x="{_n(x - width / 2)}" y="{_n(y - _PILL_H / 2)}"'
            f' width="{_n(width)}" height="{_PILL_H}" rx="10" fill="{fill}" stroke="#4b5563"'
            f' stroke-width="1"/><text x="{_n(x)}" y="{_n(y + 4)}" font-size="11"'
            f' text-anchor="middle" fill="#111827">{_esc(self._shown(mark))}</text></g>'
        )

    def _svg_axis(
        self, marks: Sequence[Mark], left: float, scale: float, y: float
    ) -> Iterator[str]:
        times = [m.emission.time for m in marks]
        origin, last = min(times), max(times)
        yield (
            f'<line x1="{_n(left)}" y1="{_n(y)}" x2="{_n(left + (last - origin) * scale)}"'
            f' y2="{_n(y)}" stroke="#6b7280" stroke-width="1"/>'
        )
        for tick in axis_ticks(origin, last):
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
