"""Performance regression guard: the pipeline's per-event cost against the ``json.loads`` floor.

Nothing here is compared with a wall-clock limit. In one process and one run, the
test times the whole pipeline (``from_iterable(one SSE event per piece)`` →
``gemini_to_openai()`` → the chunks collected) and the floor (``json.loads`` of each
event's ``data:`` payload, already split) on two generated captures, interleaving
the two round by round (garbage collector off while timing, as ``timeit`` does), and
fails if the pipeline costs ``MAX_RATIO`` times the floor per Gemini event or more.

The ratio asserted is the median over the rounds of (pipeline ÷ floor) within each
round: a burst of load from elsewhere on the machine then hits both sides of a
ratio alike, and the median drops the rounds it hit unevenly. A slower machine
slows both alike too, so the limit holds wherever the suite runs. The message also
gives the two medians and the best-of-rounds ratio. The full harness, with the
tables and the other measurements, is ``python -m benchmarks``.
"""

from __future__ import annotations

import importlib
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MAX_RATIO = 2.0
ROUNDS = 11  # interleaved rounds; each times both functions for at least MIN_TIME s
MIN_TIME = 0.03
# A regression is slow every time; a burst of load from elsewhere on a shared machine is not.
ATTEMPTS = 3


def _benchmarks(name: str) -> ModuleType:
    """``benchmarks.<name>`` from the repository root, also when pytest did not put the
    root on ``sys.path`` (``python -m pytest`` does, the ``pytest`` script does not)."""
    try:
        return importlib.import_module(f"benchmarks.{name}")
    except ImportError:
        if str(ROOT) in sys.path:
            raise
        sys.path.insert(0, str(ROOT))
        return importlib.import_module(f"benchmarks.{name}")


def test_pipeline_per_event_cost_is_below_twice_the_json_loads_floor() -> None:
    captures = _benchmarks("captures")
    measure = _benchmarks("measure")
    cases: dict[str, Callable[[], Any]] = {
        "text, 1000 events": lambda: captures.text_answer(1000),
        "thinking-tools (200 thoughts, 2 calls re-sent 200x)": captures.thinking_tools,
    }
    report: list[str] = []
    worst = 0.0
    for attempt in range(ATTEMPTS):
        report, worst = _measure(cases, measure)
        if worst < MAX_RATIO:
            break
        report.append(f"(attempt {attempt + 1} of {ATTEMPTS})")
    assert worst < MAX_RATIO, (
        f"the pipeline costs {worst:.2f}× the json.loads floor per event"
        f" (limit {MAX_RATIO:g}×):\n" + "\n".join(report)
    )


def _measure(cases: dict[str, Callable[[], Any]], measure: ModuleType) -> tuple[list[str], float]:
    report = []
    worst = 0.0
    for label, make in cases.items():
        capture = make()
        events = capture.event_count
        stats = measure.time_interleaved(
            {
                "pipeline": (measure.pipeline_runner(capture.pieces()), events),
                "floor": (measure.floor_runner(capture.payloads), events),
            },
            ROUNDS,
            MIN_TIME,
            gc_on=False,
        )
        pipeline, floor = stats["pipeline"], stats["floor"]
        pairs = zip(pipeline.samples, floor.samples, strict=True)
        ratio = statistics.median(p / f for p, f in pairs)
        worst = max(worst, ratio)
        report.append(
            f"{label}: ratio {ratio:.2f} (pipeline {pipeline.median:.1f} µs/event,"
            f" json.loads floor {floor.median:.1f} µs/event, medians of {ROUNDS} rounds;"
            f" best-of-rounds ratio {pipeline.min / floor.min:.2f})"
        )
    return report, worst
