"""The Interactions reader beside the ``generateContent`` reader (``--only interactions``).

The same kind of text answer from each upstream: ``text-2000`` (``generateContent``, usage
on every event) and ``interactions-text-2000`` (:func:`~benchmarks.captures.interactions_text`:
``step.*`` events, usage once at the end). For each, timed interleaved in one set of
rounds, per event of its own stream:

- **reader**: its cores up to the items, fed one event per piece in plain calls (SSE
  decoding, parsing, and for ``generateContent`` the slot table, the args table and the
  finish buffer; for Interactions the step reader): what an output stage is given;
- **pipeline**: ``from_body(pieces) | gemini_to_openai(upstream=…)``, to chat chunks;
- **floor**: ``json.loads`` of every event's JSON, already split out (the JSON work alone).

The ratios ÷ floor are each upstream's own: an Interactions text delta carries a few words
and no usage, so its floor is a fraction of a ``generateContent`` event's, and what every
event costs beyond its JSON weighs more in the ratio.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rxgem.core import (
    ArgsTable,
    FinishBuffer,
    InteractionsParser,
    ResponseParser,
    SlotTable,
    SSEDecoder,
    StepReader,
)

from . import captures
from .measure import Stats, floor_runner, paired_ratio, pipeline_runner, time_interleaved

__all__ = ["InteractionsResult", "measure_interactions", "render"]

TARGET = 1.2
"""The Interactions reader's per-event cost ÷ its ``json.loads`` floor, compiled (issue 27:
"the Interactions reader per event within 1.2× the floor on a text stream")."""


def interactions_reader(pieces: Sequence[bytes]) -> Callable[[], list[Any]]:
    """The Interactions reader's cores over ``pieces``: the batches they give."""

    def run() -> list[Any]:
        sse, parser, steps = SSEDecoder(), InteractionsParser(), StepReader()
        out: list[Any] = []
        for piece in pieces:
            for event in sse.feed(piece):
                for typed in parser.feed(event):
                    batch = steps.feed(typed)
                    if batch:
                        out.append(batch)
        out.append(steps.close())
        return out

    return run


def generate_reader(pieces: Sequence[bytes]) -> Callable[[], list[Any]]:
    """The ``generateContent`` reader's cores over ``pieces``: the batches they give."""

    def run() -> list[Any]:
        sse, parser = SSEDecoder(), ResponseParser()
        slots, args, finish = SlotTable(), ArgsTable(), FinishBuffer()
        out: list[Any] = []
        for piece in pieces:
            for event in sse.feed(piece):
                for response in parser.feed(event):
                    batch = slots.feed(response)
                    if batch:
                        batch = args.feed(batch)
                        if batch:
                            batch = finish.feed(batch)
                            if batch:
                                out.append(batch)
        out.append(finish.close())
        return out

    return run


@dataclass
class InteractionsResult:
    """Per event of each upstream's text answer: its reader, its pipeline, its floor."""

    events: dict[str, int]
    stats: dict[str, Stats]

    def ratio(self, upstream: str, what: str) -> float:
        return self.stats[f"{upstream}_{what}"].median / self.stats[f"{upstream}_floor"].median

    def paired(self, upstream: str, what: str) -> float:
        return paired_ratio(self.stats[f"{upstream}_{what}"], self.stats[f"{upstream}_floor"])

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"events": self.events}
        for name, stats in self.stats.items():
            out[f"{name}_us"] = stats.median
            out[f"{name}_samples_us"] = stats.samples
        out["interactions_per_generate_pipeline"] = paired_ratio(
            self.stats["interactions_pipeline"], self.stats["generate_pipeline"]
        )
        for upstream in self.events:
            for what in ("reader", "pipeline"):
                out[f"{upstream}_{what}_ratio_floor"] = self.ratio(upstream, what)
                out[f"{upstream}_{what}_paired_ratio_floor"] = self.paired(upstream, what)
        return out


def measure_interactions(
    *, deltas: int = 2000, repeat: int = 7, min_time: float = 0.2
) -> InteractionsResult:
    """Time both readers, both pipelines and both floors interleaved (see the module)."""
    generate = captures.text_answer(deltas, name=f"text-{deltas}")
    interactions = captures.interactions_text(deltas)
    sources = {"generate": generate, "interactions": interactions}
    upstreams = {"generate": "generate-content", "interactions": "interactions"}
    readers = {"generate": generate_reader, "interactions": interactions_reader}
    runs: dict[str, tuple[Callable[[], object], int]] = {}
    events: dict[str, int] = {}
    for key, capture in sources.items():
        pieces = capture.pieces()
        count = len(capture.payloads)
        events[key] = count
        pipeline = pipeline_runner(pieces, upstream=upstreams[key])
        pipeline()  # proves the capture converts without an error
        runs[f"{key}_reader"] = (readers[key](pieces), count)
        runs[f"{key}_pipeline"] = (pipeline, count)
        runs[f"{key}_floor"] = (floor_runner(capture.payloads), count)
    return InteractionsResult(events, time_interleaved(runs, repeat, min_time))


def render(result: InteractionsResult) -> str:
    """Section 2c of the report: the table and the target line."""
    names = {"generate": "text-2000 (generateContent)", "interactions": "interactions-text-2000"}
    lines = [
        "2c. The Interactions reader beside the generateContent reader (text answers, per"
        " event of each stream; timed interleaved)",
        "",
        f"{'stream':30} {'events':>6} {'json.loads µs/ev':>16} {'reader µs/ev':>12}"
        f" {'reader÷floor':>12} {'per round':>9} {'pipeline µs/ev':>14} {'pipeline÷floor':>14}"
        f" {'per round':>9}",
    ]
    for key, name in names.items():
        stats = result.stats
        lines.append(
            f"{name:30} {result.events[key]:>6} {stats[f'{key}_floor'].median:>16.2f}"
            f" {stats[f'{key}_reader'].median:>12.2f} {result.ratio(key, 'reader'):>11.2f}×"
            f" {result.paired(key, 'reader'):>8.2f}×"
            f" {stats[f'{key}_pipeline'].median:>14.2f} {result.ratio(key, 'pipeline'):>13.2f}×"
            f" {result.paired(key, 'pipeline'):>8.2f}×"
        )
    reader = result.paired("interactions", "reader")
    pipeline = result.paired("interactions", "pipeline")
    met = "met" if reader <= TARGET else "NOT met"
    beside = paired_ratio(result.stats["interactions_pipeline"], result.stats["generate_pipeline"])
    lines += [
        "   reader = the cores up to the items (no output stage); pipeline = to chat chunks;"
        " per round = the median of the ratio ÷ floor within each round",
        f"   Interactions pipeline ÷ generateContent pipeline, per event: {beside:.2f}× (per"
        f" round); Interactions pipeline ÷ its floor: {pipeline:.2f}× per round",
        f"[{met}] Interactions reader ≤ {TARGET:g}× its json.loads floor (text, compiled):"
        f" {reader:.2f}× per round",
        "",
    ]
    return "\n".join(lines)
