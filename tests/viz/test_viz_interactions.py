"""rxgem.viz on the Interactions stages: ``pipeline_stages(upstream="interactions")``
traced lane by lane, its typed events and new items described, labelled and coloured."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import rxgem
from rxgem import viz
from rxgem.viz._describe import category, describe, label

DATA = Path(__file__).resolve().parents[1] / "data" / "interactions"
SVG = "{http://www.w3.org/2000/svg}"
STAGES = ["decode_sse", "parse_interactions", "read_steps", "to_openai"]
CALL = DATA / "vercel" / "tool-call-step1.chunks.txt"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="no recorded Interactions data")


def lines(path: Path) -> list[bytes]:
    return [line + b"\n" for line in path.read_bytes().splitlines() if line]


def test_the_interactions_stages_are_traced_lane_by_lane() -> None:
    pieces = lines(CALL)
    recorder = viz.trace_bytes(pieces, upstream="interactions")
    assert recorder.stages == ["bytes", *STAGES]
    assert len(recorder.values("parse_interactions")) == len(pieces)
    assert recorder.error() is None
    chunks = recorder.values("to_openai")
    converted = list(
        rxgem.Converter(upstream="interactions", id_factory=lambda: "x", clock=lambda: 0.0).iterate(
            pieces
        )
    )
    assert [c.to_dict() for c in chunks] == [c.to_dict() for c in converted]


def test_typed_events_and_new_items_say_what_they_are() -> None:
    recorder = viz.trace_bytes(lines(CALL), upstream="interactions")
    events = recorder.values("parse_interactions")
    assert [label(e) for e in events] == [
        "created",
        "in_progress",
        "thought#0",
        "signature#0",
        "stop#0",
        "function_call#1",
        "args#1",
        "stop#1",
        "requires_action",
    ]
    assert describe(events[5]) == "step.start #1 function_call getWeather"
    assert describe(events[6]).startswith('step.delta #1 arguments_delta \'{"location"')
    assert [category(e) for e in events] == [
        "raw",
        "raw",
        "thought",
        "thought",
        "other",
        "call",
        "call",
        "other",
        "finish",
    ]
    batches = recorder.values("read_steps")
    args = next(b for b in batches if type(b[0]).__name__ == "ArgsDelta")
    assert label(args) == "args#0"
    assert category(args) == "call"
    assert describe(args).startswith("[ArgsDelta(c0 slot 0: ")


def test_the_svg_has_one_marble_per_emission_with_its_json() -> None:
    recorder = viz.trace_bytes(lines(CALL), upstream="interactions")
    root = ET.fromstring(recorder.diagram(x="order").to_svg())
    marbles = root.findall(f"{SVG}g")
    assert len(marbles) == len(recorder.emissions)
    for marble, emission in zip(marbles, recorder.emissions, strict=True):
        title = marble.find(f"{SVG}title")
        assert title is not None
        assert title.text is not None
        assert title.text.startswith(f"{emission.stage} ")
        if emission.kind == "next":
            json.loads(title.text.split("\n", 2)[2])
