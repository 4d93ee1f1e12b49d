"""rxgem.viz: taps that change nothing, recordings in virtual and wall time, the diagrams."""

from __future__ import annotations

import asyncio
import json
import threading
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import reactivex
from reactivex import operators as ops
from reactivex.scheduler import ThreadPoolScheduler
from reactivex.testing import TestScheduler

import rxgem
from rxgem import samples, viz
from rxgem.testing import (
    FakeGemini,
    FakeResponse,
    assert_openai_stream,
    call,
    event,
    finish,
    run_marbles,
    text,
    thought,
    usage,
)
from rxgem.viz._describe import category, describe, jsonable, label

ROOT = Path(__file__).resolve().parents[2]
SVG = "{http://www.w3.org/2000/svg}"
STAGES = ["decode_sse", "parse", "group_by_slot", "latest_args", "flush_on_finish", "to_openai"]


def fixed(**options: Any) -> list[viz.Stage]:
    return viz.pipeline_stages(id_factory=lambda: "x", clock=lambda: 0, **options)


def pieces(name: str, size: int = 97) -> list[bytes]:
    data = samples.read(name)
    return [data[i : i + size] for i in range(0, len(data), size)]


# -- recording ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", samples.names())
def test_taps_change_nothing(name: str) -> None:
    def run(stream: Any) -> tuple[list[bytes], str | None]:
        out: list[bytes] = []
        errors: list[Exception] = []
        stream.subscribe(lambda c: out.append(c.to_json()), errors.append)
        return out, type(errors[0]).__name__ if errors else None

    plain = run(
        reactivex.from_iterable(pieces(name)).pipe(
            rxgem.gemini_to_openai(id_factory=lambda: "x", clock=lambda: 0)
        )
    )
    recorder = viz.Recorder()
    tapped: Any = reactivex.from_iterable(pieces(name)).pipe(recorder.tap("bytes"))
    for stage, operator in fixed():
        tapped = tapped.pipe(operator, recorder.tap(stage))
    assert run(tapped) == plain
    assert recorder.stages == ["bytes", *STAGES]
    assert [c.to_json() for c in recorder.values("to_openai")] == plain[0]


def test_virtual_time_kinds_and_links() -> None:
    scheduler = TestScheduler()
    source = scheduler.create_cold_observable(
        [
            reactivex.testing.ReactiveTest.on_next(10, event(thought("hmm"))),
            reactivex.testing.ReactiveTest.on_next(20, event(text("Hi"), finish("STOP"))),
            reactivex.testing.ReactiveTest.on_completed(30),
        ]
    )
    recorder = viz.trace(source, fixed(), scheduler=scheduler, source_name="bytes")
    assert recorder.virtual
    emissions = recorder.emissions
    assert [e.seq for e in emissions] == list(range(len(emissions)))
    by_stage = {stage: [e for e in emissions if e.stage == stage] for stage in recorder.stages}
    assert [(e.time, e.kind) for e in by_stage["bytes"]] == [
        (10, "next"),
        (20, "next"),
        (30, "completed"),
    ]
    # the finish and usage come out of flush_on_finish at the completion, at tick 30
    assert [(e.time, e.kind) for e in by_stage["to_openai"]] == [
        (10, "next"),
        (20, "next"),
        (30, "next"),
        (30, "completed"),
    ]
    for emission in emissions:
        lane = recorder.stages.index(emission.stage)
        if lane == 0:
            assert emission.cause is None
            continue
        cause = emissions[emission.cause]  # type: ignore[index]
        assert cause.stage == recorder.stages[lane - 1]
        assert cause.seq < emission.seq
        assert cause.time <= emission.time
    final = by_stage["to_openai"][2]  # made from the batch flush_on_finish emits at the end
    batch = emissions[final.cause]  # type: ignore[index]
    assert batch.stage == "flush_on_finish"
    assert emissions[batch.cause].kind == "completed"  # type: ignore[index]


def test_errors_are_recorded_not_raised() -> None:
    recorder = viz.trace(reactivex.from_iterable(pieces("error_event.sse")), fixed())
    error = recorder.error()
    assert isinstance(error, rxgem.GeminiAPIError)
    assert recorder.error("parse") is error
    assert recorder.error("source") is None
    kinds = [e.kind for e in recorder.emissions if e.stage == "to_openai"]
    assert kinds[-1] == "error"


def test_wall_time_is_relative_to_the_first_emission() -> None:
    recorder = viz.trace(reactivex.from_iterable(pieces("text.sse")), fixed())
    times = [e.time for e in recorder.emissions]
    assert times[0] == 0.0
    assert times == sorted(times)
    assert not recorder.virtual
    assert recorder.diagram().x == "order"  # a fast synchronous replay: x by order


def test_a_threaded_source_is_waited_for() -> None:
    source = reactivex.from_iterable(pieces("text.sse")).pipe(
        ops.observe_on(ThreadPoolScheduler(1))
    )
    recorder = viz.trace(source, fixed())
    assert recorder.emissions[-1].kind == "completed"


def test_a_custom_clock_and_scheduler_now() -> None:
    ticks = iter(range(1000))
    recorder = viz.Recorder(lambda: float(next(ticks)))
    reactivex.of(1, 2).pipe(recorder.tap("a"), ops.map(lambda v: v * 10), recorder.tap("b")).run()
    assert [(e.stage, e.time, e.value) for e in recorder.emissions] == [
        ("a", 0, 1),
        ("b", 1, 10),
        ("a", 2, 2),
        ("b", 3, 20),
        ("a", 4, None),
        ("b", 5, None),
    ]
    with_scheduler = viz.Recorder(reactivex.scheduler.ImmediateScheduler())
    reactivex.of(1).pipe(with_scheduler.tap("a")).run()
    assert with_scheduler.emissions[0].time == 0.0


def test_atrace_records_a_live_stream_on_the_event_loop() -> None:
    body = samples.read("thinking_tools")

    async def main() -> viz.Recorder:
        async with (
            FakeGemini(FakeResponse(body=body, chunk_size=900, pause=0.02)) as fake,
            httpx.AsyncClient() as client,
        ):
            source = rxgem.from_gemini(
                {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
                model="gemini-2.5-flash",
                api_key="test",
                base_url=fake.base_url,
                client=client,
            )
            return await viz.atrace(source, fixed(), source_name="http")

    recorder = asyncio.run(main())
    assert len(recorder.values("http")) > 3
    assert recorder.emissions[-1].kind == "completed"
    assert recorder.diagram().x == "time"  # ~0.1 s of wall time: x by time
    chunks = recorder.values("to_openai")
    result = assert_openai_stream(chunks, tools=["read_file", "search"])
    assert len(result["choices"][0]["message"]["tool_calls"]) == 4


def test_trace_refuses_to_block_a_running_loop() -> None:
    async def main() -> None:
        loop_source = reactivex.timer(
            0.01,
            scheduler=reactivex.scheduler.eventloop.AsyncIOScheduler(asyncio.get_running_loop()),
        )
        with pytest.raises(RuntimeError, match="atrace"):
            viz.trace(loop_source, [])

    asyncio.run(main())


def test_trace_times_out() -> None:
    with pytest.raises(TimeoutError):
        viz.trace(reactivex.never(), [], timeout=0.05)


def test_recorder_is_thread_safe() -> None:
    recorder = viz.Recorder()
    tap = recorder.tap("x")

    def work() -> None:
        reactivex.from_iterable(range(500)).pipe(tap).run()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(e.seq for e in recorder.emissions) == list(range(4 * 501))


# -- the diagrams -------------------------------------------------------------------------


def parse_svg(text: str) -> ET.Element:
    return ET.fromstring(text)


@pytest.mark.parametrize("x", ["order", "time"])
@pytest.mark.parametrize("name", samples.names())
def test_svg_is_well_formed_with_one_marble_per_emission(name: str, x: str) -> None:
    recorder = viz.trace_sample(name, piece_size=300)
    diagram = recorder.diagram(x=x)  # type: ignore[arg-type]
    root = parse_svg(diagram.to_svg())
    marbles = root.findall(f"{SVG}g")
    assert len(marbles) == len(recorder.emissions) == len(diagram)
    for marble, emission in zip(marbles, recorder.emissions, strict=True):
        title = marble.find(f"{SVG}title")
        assert title is not None
        assert title.text is not None
        assert title.text.startswith(f"{emission.stage} ")
        assert emission.kind in title.text
        if emission.kind == "next":
            hover = title.text.split("\n", 2)[2]
            if not hover.endswith("…"):  # cut at 4000 characters
                json.loads(hover)
    lane_names = [t.text for t in root.findall(f"{SVG}text")]
    for stage in recorder.stages:
        assert stage in lane_names


def test_hover_text_is_the_full_json_of_the_emission() -> None:
    recorder = viz.trace_sample("text", piece_size=10_000)
    root = parse_svg(recorder.diagram().to_svg())
    titles = [g.find(f"{SVG}title").text for g in root.findall(f"{SVG}g")]  # type: ignore[union-attr]
    parse_title = next(t for t in titles if t and t.startswith("parse 1 "))
    payload = json.loads(parse_title.split("\n", 2)[2])
    assert payload["candidates"][0]["content"]["parts"][0]["text"].startswith("Here is")
    first_chunk = next(t for t in titles if t and t.startswith("to_openai 1 "))
    assert json.loads(first_chunk.split("\n", 2)[2])["choices"][0]["delta"]["role"] == "assistant"


def test_error_and_completion_marks() -> None:
    diagram = viz.trace_sample("error_mid_stream", piece_size=200).diagram(x="order")
    svg = diagram.to_svg()
    assert svg.count(">GeminiAPIError</text>") == 5  # parse … to_openai end with the error
    assert 'stroke="#dc2626"' in svg
    text_ = diagram.to_text()
    lanes = {line.split()[0]: line for line in text_.splitlines()[2:9]}
    assert lanes["to_openai"].rstrip().endswith("X")
    assert lanes["parse"].rstrip().endswith("X")
    assert "X  GeminiAPIError: Gemini API error 499 CANCELLED" in text_
    done = viz.trace_sample("text").diagram()
    assert all(line.rstrip().endswith("|") for line in done.to_text().splitlines()[2:9])


def test_text_diagram_lanes_and_legend() -> None:
    text_ = str(viz.trace_sample("thinking_tools"))
    lines = text_.splitlines()
    assert lines[0] == "thinking_tools: 5587 bytes in 3 pieces"
    assert "(x: time)" in lines[1]
    for stage, line in zip(["bytes", *STAGES], lines[2:9], strict=True):
        assert line.startswith(stage)
        assert set(line[len(stage) :].strip()) <= set("─|X•123456789abcdefghijklmnopq")
    assert "group_by_slot:" in lines
    assert any("CallPart(c0 slot 3: search" in line and "← parse" in line for line in lines)


def test_stages_subset_follows_links_through_hidden_lanes() -> None:
    recorder = viz.trace_sample("thinking_tools")
    diagram = recorder.diagram(stages=["bytes", "latest_args", "to_openai"], x="order")
    text_ = diagram.to_text()
    assert "← bytes 1" in text_
    assert "← latest_args" in text_
    assert "parse:" not in text_
    with pytest.raises(ValueError, match="no lane named 'nope'"):
        recorder.diagram(stages=["nope"])
    without = recorder.diagram(links=False).to_text()
    assert "←" not in without


def test_html_embeds_the_svg_and_the_legend() -> None:
    recorder = viz.trace_sample("text")
    html = recorder._repr_html_()
    assert html.startswith('<div style="overflow-x:auto')
    assert "<svg" in html
    assert "<title>" in html
    assert "<details>" in html
    assert recorder._repr_svg_().startswith("<svg")
    both = viz.side_by_side({"a": recorder, "b": recorder.diagram(x="order")})
    assert both._repr_html_().count("<svg") == 2
    assert str(both).startswith("== a\n")


def test_save(tmp_path: Path) -> None:
    recorder = viz.trace_sample("no_args_call")
    svg = recorder.save(tmp_path / "d.svg", x="order")
    html = recorder.save(tmp_path / "d.html")
    txt = recorder.save(tmp_path / "d.txt")
    assert svg.read_text(encoding="utf-8") == recorder.diagram(x="order").to_svg()
    assert "<!doctype html>" in html.read_text(encoding="utf-8")
    assert txt.read_text(encoding="utf-8") == str(recorder)


def test_labels_and_descriptions_of_every_kind_of_value() -> None:
    recorder = viz.trace_sample("multi_candidate")
    for emission in recorder.emissions:
        if emission.kind == "next":
            assert 0 < len(label(emission.value)) <= 18
            assert describe(emission.value)
            json.dumps(jsonable(emission.value))
    assert label(b"abc") == "3B"
    assert label([]) == "[]"
    assert label("x" * 40).endswith("…")
    assert category(ValueError("x")) == "error"
    assert category(object()) == "other"
    assert jsonable(b"\xff") == "\ufffd"
    batches = recorder.values("flush_on_finish")
    assert label(batches[-1]).startswith("end:STOP")
    tools = viz.trace_sample("thinking_tools").values("flush_on_finish")[-1]
    assert label(tools) == "tool#0-3 end:STOP"


def test_custom_labels() -> None:
    recorder = viz.Recorder(title="numbers")
    reactivex.of(1, 2, 3).pipe(recorder.tap("n")).run()
    text_ = recorder.diagram(label=lambda v: f"n={v}").to_text()
    assert text_.startswith("numbers\n")
    svg = recorder.diagram(label=lambda v: f"n={v}").to_svg()
    assert ">n=2</text>" in svg


def test_run_marbles_recording_draws_every_lane() -> None:
    output = run_marbles(
        viz.pipeline_stages(clock=lambda: 0),
        "-a-b-|",
        {"a": event(call("f", x=1)), "b": event(finish("STOP"), usage(3, 1))},
    )
    diagram = output.diagram()
    assert diagram.x == "time"
    assert diagram.stages == ["source", *STAGES]
    parse_svg(diagram.to_svg())


def test_time_axis_ticks() -> None:
    svg = viz.trace_sample("thinking_tools").diagram(x="time").to_svg()
    assert ">10</text>" in svg
    assert ">40</text>" in svg


# -- the README's diagram -----------------------------------------------------------------


def test_committed_tour_svg_is_what_the_code_draws_now() -> None:
    committed = (ROOT / "docs" / "tour.svg").read_text(encoding="utf-8")
    assert committed == viz.tour().to_svg(), (
        "regenerate: .venv/bin/python -m rxgem.viz docs/tour.svg"
    )


def test_readme_shows_the_tour() -> None:
    assert "![tour](docs/tour.svg)" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_tour_is_deterministic_and_main_writes_it(tmp_path: Path, capsys: Any) -> None:
    assert viz.tour().to_svg() == viz.tour().to_svg()
    assert viz.main([str(tmp_path / "t.svg")]) == 0
    assert (tmp_path / "t.svg").read_text(encoding="utf-8") == viz.tour().to_svg()
    assert viz.main(["--sample", "text", "--x", "time"]) == 0
    assert capsys.readouterr().out.startswith("text: ")


def test_the_viz_api_is_exactly_this() -> None:
    assert set(viz.__all__) == {
        *("Recorder", "atrace", "pipeline_stages", "side_by_side", "tour", "trace"),
        *("trace_bytes", "trace_sample", "short", "fixed_stages", "Labeller", "label"),
    }
    for name in viz.__all__:
        value = getattr(viz, name)
        if isinstance(value, type) or (callable(value) and name[0].islower()):
            assert value.__doc__, name


# -- any pipeline: your own stages, labels and widths --------------------------------------


def shout() -> Any:
    """Upper-cases the content of every chunk: an operator of the user's own."""

    def upper(chunk: rxgem.ChatCompletionChunk) -> rxgem.ChatCompletionChunk:
        for choice in chunk.choices:
            if choice.delta.content:
                choice.delta.content = choice.delta.content.upper()
        return chunk

    return ops.map(upper)


@pytest.mark.parametrize("replay", ["trace_bytes", "trace_sample"])
def test_your_own_stages_are_lanes_between_the_stock_ones(replay: str) -> None:
    stages = viz.fixed_stages()
    stages.insert(4, ("only_calls", ops.map(lambda batch: batch)))
    stages.append(("shout", shout()))
    if replay == "trace_bytes":
        recorder = viz.trace_bytes(pieces("text", 300), stages=stages)
    else:
        recorder = viz.trace_sample("text", piece_size=300, stages=stages)
    assert recorder.stages == ["bytes", *STAGES[:4], "only_calls", *STAGES[4:], "shout"]
    shouted = rxgem.assemble(recorder.values("shout"))["choices"][0]["message"]["content"]
    assert shouted == samples.expected()["text.sse"]["choices"][0]["content"].upper()
    assert recorder.values("only_calls") == recorder.values("latest_args")
    again = viz.trace_sample("text", piece_size=300, stages=viz.fixed_stages())
    assert str(again) == str(viz.trace_sample("text", piece_size=300))  # fixed ids: same run


def test_stages_and_pipeline_options_are_not_mixed() -> None:
    with pytest.raises(TypeError, match=r"\(model\) go to pipeline_stages"):
        viz.trace_sample("text", stages=viz.fixed_stages(), model="m")
    interactions = viz.trace_bytes(
        [b""], stages=viz.fixed_stages(upstream="interactions"), title="empty"
    )
    assert interactions.stages == [
        "bytes",
        "decode_sse",
        "parse_interactions",
        "read_steps",
        "to_openai",
    ]


@dataclass(frozen=True)
class Redacted:
    """An item of the user's own, in the batches between the stock stages."""

    slot: int
    count: int


def redact() -> Any:
    def mark(batch: list[Any]) -> list[Any]:
        return [*batch, Redacted(len(batch), 2)] if batch else batch

    return ops.map(mark)


def test_a_labeller_extended_with_your_item_type_labels_colours_and_describes_it() -> None:
    stages = viz.fixed_stages()
    stages.insert(4, ("redact", redact()))
    recorder = viz.trace_sample("thinking_tools", stages=stages)
    labeller = viz.label.extend(
        Redacted,
        lambda item: f"red#{item.slot}",
        describe=lambda item: f"Redacted({item.count} addresses)",
        category="usage",
    )
    batch = recorder.values("redact")[-1]
    assert labeller(batch) == f"STOP red#{len(batch) - 1}"  # beside rxgem's own items
    assert viz.label(batch) == label(batch)  # the stock labeller knows nothing of it
    assert labeller(Redacted(1, 2)) == "red#1"
    assert labeller.category(Redacted(1, 2)) == "usage"
    assert "Redacted(2 addresses)" in labeller.describe(batch)
    diagram = recorder.diagram(label=labeller, x="order")
    assert "Redacted(2 addresses)" in diagram.to_text()
    svg = diagram.to_svg()
    assert ">red#1</text>" in svg
    assert 'fill="#fef08a"' in svg  # the usage colour
    with pytest.raises(ValueError, match="no category 'blue'"):
        viz.label.extend(Redacted, str, category="blue")
    assert "Redacted" not in repr(viz.label)  # extend made a new labeller


def test_long_labels_are_cut_to_fit_whole_in_the_hover_text() -> None:
    recorder = viz.Recorder(title="reprs")
    wide = "日本語のラベルはとても長いです"
    reactivex.of({"key": "x" * 200}, wide).pipe(recorder.tap("values")).run()
    root = parse_svg(recorder.diagram(label=viz.short, x="order").to_svg())
    marbles = root.findall(f"{SVG}g")[:2]
    shown = [m.find(f"{SVG}text").text for m in marbles]  # type: ignore[union-attr]
    assert shown[0] == "{'key': 'xxxxxxxxxxxxxx…"
    assert shown[1] == "日本語のラベルはとても…"  # wide characters count two: 23 cells
    for marble, full in zip(marbles, [viz.short({"key": "x" * 200}), wide], strict=True):
        title = marble.find(f"{SVG}title").text  # type: ignore[union-attr]
        assert full in title.splitlines()[0]  # type: ignore[union-attr]
        pill = marble.find(f"{SVG}rect")
        assert pill is not None
        assert float(pill.get("width", 0)) < 24 * 6.6 + 15  # the marble stays small
    wider = recorder.diagram(label=viz.short, label_width=40).to_svg()
    assert ":&#x27;" not in wider
    assert "&#x27;" + "x" * 30 + "…</text>" in wider
