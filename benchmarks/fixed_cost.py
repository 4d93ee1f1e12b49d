"""The fixed cost per stream: what a subscription costs beyond the sans-IO cores.

On a stream of one event (and of two), µs per stream of:

- ``cores``: ``rxgem.Converter()`` fed the pieces, then closed (no Rx at all);
- ``from_iterable``: ``reactivex.from_iterable(pieces).pipe(rxgem.gemini_to_openai())``
  subscribed, the chunks kept;
- ``from_body``: the same on ``rxgem.operators.from_body(pieces)``, rxgem's light source.

The operator is built once and subscribed per run, as in section 1 of the report. The
three are timed interleaved (:func:`benchmarks.measure.time_interleaved`: each round
times each of them once, GC on), and the cost beyond the cores is the median over the
rounds of ``pipeline − cores`` from the same round. The target: under 20 µs
beyond the cores.

Standalone: ``python -m benchmarks.fixed_cost [--quick] [--repeat N] [--min-time S]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import reactivex

import rxgem
from rxgem.operators import from_body

from .captures import text_answer
from .measure import Stats, subscribe_runner, time_interleaved

__all__ = [
    "RUNNERS",
    "TARGET_US",
    "FixedCost",
    "fixed_cost",
    "fixed_cost_runners",
    "fixed_cost_table",
    "main",
]

TARGET_US = 20.0
"""Issue 14's target: the fixed cost per stream beyond the cores, in µs."""

RUNNERS = ("cores", "from_iterable", "from_body")
"""What is timed, in the order of the table."""


def fixed_cost_runners(pieces: Sequence[bytes]) -> dict[str, Callable[[], list[Any]]]:
    """One run of a whole stream of ``pieces`` per call, for each of :data:`RUNNERS`.

    Each returns the chunks (and raises the stream's error), so that they can be
    checked to agree before timing.
    """
    operator = rxgem.gemini_to_openai()
    through_iterable = reactivex.from_iterable(pieces).pipe(operator)
    through_body = from_body(pieces).pipe(operator)

    def cores() -> list[Any]:
        converter = rxgem.Converter()
        chunks: list[Any] = []
        for piece in pieces:
            chunks += converter.feed(piece)
        chunks += converter.close()
        return chunks

    return {
        "cores": cores,
        "from_iterable": subscribe_runner(through_iterable),
        "from_body": subscribe_runner(through_body),
    }


@dataclass
class FixedCost:
    """µs per stream of each of :data:`RUNNERS` on a stream of ``events`` events."""

    events: int
    chunks: int
    stats: dict[str, Stats]

    def beyond_cores(self, name: str) -> float:
        """The median over the rounds of ``name − cores`` (µs per stream)."""
        pairs = zip(self.stats[name].samples, self.stats["cores"].samples, strict=True)
        return statistics.median(x - y for x, y in pairs)

    def beyond_cores_min(self, name: str) -> float:
        """``min(name) − min(cores)`` over the rounds: less sensitive to load elsewhere."""
        return self.stats[name].min - self.stats["cores"].min

    def to_json(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "chunks": self.chunks,
            "us_per_stream": {name: s.median for name, s in self.stats.items()},
            "beyond_cores": {name: self.beyond_cores(name) for name in RUNNERS[1:]},
            "beyond_cores_min": {name: self.beyond_cores_min(name) for name in RUNNERS[1:]},
            "samples": {name: s.samples for name, s in self.stats.items()},
            "number": {name: s.number for name, s in self.stats.items()},
        }


def fixed_cost(
    events: Iterable[int] = (1, 2), repeat: int = 7, min_time: float = 0.2
) -> list[FixedCost]:
    """Measure the fixed cost per stream on text streams of each number of ``events``.

    One SSE event per piece (``benchmarks.captures.text_answer``: usage on every
    event, ``STOP`` on the last). The runners are checked to give the same chunks
    first.
    """
    results = []
    for count in events:
        pieces = text_answer(count, name=f"fixed-{count}").pieces()
        runners = fixed_cost_runners(pieces)
        outputs = [[_comparable(c) for c in run()] for run in runners.values()]
        if any(output != outputs[0] for output in outputs):
            raise AssertionError(f"the runners disagree on the {count}-event stream")
        stats = time_interleaved(
            {name: (run, 1) for name, run in runners.items()}, repeat, min_time
        )
        results.append(FixedCost(count, len(outputs[0]), stats))
    return results


def _comparable(chunk: Any) -> Any:
    """A chunk without what differs from run to run (its random id, the clock)."""
    data = dict(chunk.to_dict())
    data.pop("id", None)
    data.pop("created", None)
    return data


def _us(value: float) -> str:
    return f"{value:.1f}"


def _beyond(result: FixedCost, name: str) -> str:
    return f"{_us(result.beyond_cores(name))} ({_us(result.beyond_cores_min(name))})"


def fixed_cost_table(results: Sequence[FixedCost], number: str = "") -> str:
    """The results as a small table, with a title (``number`` prefixes it, e.g. ``"7. "``)."""
    headers = [
        "events",
        "chunks",
        "runs",
        "cores µs",
        "from_iterable µs",
        "beyond cores",
        "from_body µs",
        "beyond cores",
        f"< {TARGET_US:g} µs",
    ]
    rows = []
    for r in results:
        s = r.stats
        light = r.beyond_cores("from_body")
        rows.append(
            [
                str(r.events),
                str(r.chunks),
                f"{len(s['cores'].samples)}×{s['cores'].number}",
                _us(s["cores"].median),
                _us(s["from_iterable"].median),
                _beyond(r, "from_iterable"),
                _us(s["from_body"].median),
                _beyond(r, "from_body"),
                "yes" if light < TARGET_US else "NO",
            ]
        )
    title = (
        f"{number}Fixed cost per stream: µs per whole stream of a text answer of 1–2 events\n"
        "   (cores = Converter().feed(each piece) + close(); from_iterable / from_body ="
        " source.pipe(gemini_to_openai())\n   subscribed, chunks kept; beyond cores ="
        " median over interleaved rounds of pipeline − cores, (min − min);\n   the verdict"
        " is on the median)\n"
    )
    return title + _table(headers, rows)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, rows)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.fixed_cost", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--quick", action="store_true", help="3 rounds of at least 0.05 s")
    parser.add_argument("--repeat", type=int, default=None, help="rounds (default 7; quick 3)")
    parser.add_argument("--min-time", type=float, default=None, help="s per timing (0.2)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (3 if args.quick else 7)
    min_time = args.min_time or (0.05 if args.quick else 0.2)
    print(fixed_cost_table(fixed_cost(repeat=repeat, min_time=min_time)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
