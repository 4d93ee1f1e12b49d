"""The four ways of running the pipeline agree, chunk for chunk and on how the stream ends.

(a) ``rxgem.Converter`` fed the bytes (``pipeline_harness.run_converter``);
(b) ``gemini_to_openai()``, one Rx hop over a Converter (``pipeline_harness.run``);
(c) the six operators of ``pipeline_stages()`` with an Rx ``map`` between each two
    (``pipeline_harness.run_stages``);
(d) the reference below: the six cores composed by hand, following the core protocol of
    ``rxgem.core._protocol`` and nothing else.

"Agree" is the same chunks (deterministic ids and clock) and the same terminal outcome
(completed, or the same error class and message). The inputs: every shipped sample, every
bad-input corpus file, generated valid streams and damaged bodies, whole and in 7-byte pieces,
with the byte source failing part-way, and the early ends: ``data: [DONE]``, a stream error
with tool calls pending, truncation, and disposal. The reference itself is checked against the
Rx operator runtime with small synthetic cores that fail, end early or close with an error.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import reactivex
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_harness import (
    Outcome,
    counter_ids,
    run,
    run_converter,
    run_rx,
    run_stages,
    stages_apart,
)
from reactivex import operators as ops
from reactivex.testing import ReactiveTest, TestScheduler
from strategies import (
    PROPERTIES,
    Framing,
    GeminiStream,
    blocked_streams,
    encode,
    examples,
    framings,
    gemini_streams,
)

import rxgem
from rxgem import samples
from rxgem.operators import core_operator, pipeline_stages

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CORPUS_NAMES = sorted(path.stem for path in CORPUS.glob("*.bin"))
CLOCK = 1_700_000_000.0

# -- (d) the reference: cores composed by hand -------------------------------------------------


class _Failed(Exception):
    """Core ``stage`` failed with ``error`` (or reported it after its outputs)."""

    def __init__(self, stage: int, error: Exception) -> None:
        self.stage, self.error = stage, error


class _Ended(Exception):
    """Core ``stage`` saw the end of its input in the middle of it (``data: [DONE]``)."""

    def __init__(self, stage: int) -> None:
        self.stage = stage


def drive(
    cores: Sequence[Any],
    batched: Sequence[bool],
    pieces: Sequence[Any],
    fail: Exception | None = None,
) -> tuple[list[Any], Exception | None]:
    """Push ``pieces`` through ``cores``; then the end of input, or ``fail``.

    A value fed to a core gives outputs (one batch, if ``batched``, handed on unless empty)
    that are fed to the next core. A core that raises, or reports ``error`` after its outputs,
    stops the input: that core on (after it, for a reported error) is closed with the error,
    each close's outputs handed on, and a later core that fails on them takes over with its own
    error. At the end of input every core is closed in order, each close's outputs handed on;
    a core's ``error`` after its close, or a close that raises, becomes the error the later
    cores close with. A core whose ``done`` turns true (only the first one's, here) ends the
    input there.
    """
    out: list[Any] = []

    def values(stage: int, result: Any) -> list[Any]:
        if batched[stage]:
            return [result] if result else []
        return list(result)

    def push(stage: int, value: Any) -> None:
        if stage == len(cores):
            out.append(value)
            return
        core = cores[stage]
        try:
            result = core.feed(value)
        except Exception as error:
            raise _Failed(stage, error) from None
        for output in values(stage, result):
            push(stage + 1, output)
        if core.error is not None:
            raise _Failed(stage + 1, core.error)
        if getattr(core, "done", False):
            raise _Ended(stage)

    def end(stage: int, error: Exception | None) -> Exception | None:
        while stage < len(cores):
            core = cores[stage]
            try:
                result = core.close(error)
            except Exception as raised:
                stage, error = stage + 1, raised
                continue
            try:
                for output in values(stage, result):
                    push(stage + 1, output)
            except _Failed as failed:
                stage, error = failed.stage, failed.error
                continue
            if error is None:
                error = core.error
            stage += 1
        return error

    try:
        for piece in pieces:
            push(0, piece)
    except _Failed as failed:
        return out, end(failed.stage, failed.error)
    except _Ended as ended:
        return out, end(ended.stage, None)
    return out, end(0, fail)


PIPELINE_BATCHED = (False, False, True, True, True, False)


def six_cores(
    *,
    slot_policy: Any = "latest",
    announce: Any = "first",
    allow_truncated: bool = False,
    api: Any = "gemini",
    **builder: Any,
) -> list[Any]:
    """The six cores of one stream, made here from their own constructors."""
    builder.setdefault("id_factory", counter_ids())
    builder.setdefault("clock", lambda: CLOCK)
    return [
        rxgem.core.SSEDecoder(),
        rxgem.core.ResponseParser(api=api),
        rxgem.core.SlotTable(slot_policy),
        rxgem.core.ArgsTable(),
        rxgem.core.FinishBuffer(announce=announce, allow_truncated=allow_truncated),
        rxgem.core.ChunkBuilder(**builder),
    ]


def run_reference(
    data: bytes | Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> Outcome:
    pieces = [data] if isinstance(data, bytes) else list(data)
    return drive(six_cores(**options), PIPELINE_BATCHED, pieces, fail)


# -- the oracle --------------------------------------------------------------------------------


def fingerprint(outcome: Outcome) -> tuple[list[dict[str, Any]], tuple[str, str] | None]:
    chunks, error = outcome
    return [chunk.to_dict() for chunk in chunks], (
        None if error is None else (type(error).__name__, str(error))
    )


def outcomes(
    pieces: Sequence[bytes], *, fail: Exception | None = None, **options: Any
) -> dict[str, Outcome]:
    """The outcome of each of the four ways (fresh ids and clock for each)."""
    options.setdefault("clock", lambda: CLOCK)
    return {
        "converter": run_converter(pieces, fail=fail, **options),
        "gemini_to_openai": run(pieces, fail=fail, **options),
        "pipeline_stages": run_stages(pieces, fail=fail, **options),
        "reference": run_reference(pieces, fail=fail, **options),
    }


def agreed(pieces: Sequence[bytes], *, fail: Exception | None = None, **options: Any) -> Outcome:
    """The one outcome the four ways share (the test fails, naming them, if they differ).

    When the reference ends with the source's error ``fail``, each way passes on that very
    object."""
    results = outcomes(pieces, fail=fail, **options)
    reference = results["reference"]
    want = fingerprint(reference)
    for name, outcome in results.items():
        assert fingerprint(outcome) == want, f"{name} disagrees with the reference"
        if fail is not None and reference[1] is fail:
            assert outcome[1] is fail, f"{name} passes on another error object"
    return reference


def in_pieces(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def sse(*payloads: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(p).encode() + b"\r\n\r\n" for p in payloads)


def candidate(*parts: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}}
    if finish:
        body["finishReason"] = finish
    return {"candidates": [body]}


TEXT = candidate({"text": "Let me look."})
CALL = candidate({"functionCall": {"name": "search", "args": {"q": "rx"}}})
STOP = candidate({"text": "Done."}, finish="STOP")
QUOTA = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}


def call_names(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[str]:
    choices = rxgem.assemble(list(chunks))["choices"]
    if not choices:
        return []
    message = choices[0]["message"]
    return [call["function"]["name"] for call in message.get("tool_calls") or ()]


def finishes(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[str | None]:
    return [c.finish_reason for chunk in chunks for c in chunk.choices if c.finish_reason]


# -- the shipped samples and the bad-input corpus -----------------------------------------------


@pytest.mark.parametrize("piece", [None, 7], ids=["whole", "7-byte pieces"])
@pytest.mark.parametrize("name", samples.names())
def test_every_sample_gives_the_same_outcome_four_ways(name: str, piece: int | None) -> None:
    body = samples.read(name)
    chunks, _error = agreed([body] if piece is None else in_pieces(body, piece))
    assert chunks, "every sample gives chunks"


@pytest.mark.parametrize("options", [{"announce": "none"}, {"allow_truncated": True}])
@pytest.mark.parametrize("name", samples.names())
def test_every_sample_gives_the_same_outcome_four_ways_with_options(
    name: str, options: dict[str, Any]
) -> None:
    agreed(in_pieces(samples.read(name), 7), **options)


@pytest.mark.parametrize("piece", [None, 7], ids=["whole", "7-byte pieces"])
@pytest.mark.parametrize("name", CORPUS_NAMES)
def test_every_corpus_file_gives_the_same_error_four_ways(name: str, piece: int | None) -> None:
    body = (CORPUS / f"{name}.bin").read_bytes()
    _chunks, error = agreed([body] if piece is None else in_pieces(body, piece))
    assert isinstance(error, rxgem.RxGemError)


@pytest.mark.parametrize("name", samples.names())
def test_a_source_failing_half_way_through_a_sample_ends_the_same_four_ways(name: str) -> None:
    body = samples.read(name)
    fail = OSError("connection reset")
    _chunks, error = agreed(in_pieces(body[: len(body) // 2], 7), fail=fail)
    assert error is fail


@pytest.mark.parametrize(("cut", "calls"), [(10, 0), (600, 0), (2700, 1), (3450, 3), (3900, 4)])
def test_a_source_failing_mid_stream_flushes_the_calls_seen_then_passes_its_error_on(
    cut: int, calls: int
) -> None:
    body = samples.read("thinking_tools")
    fail = OSError("connection reset")
    chunks, error = agreed(in_pieces(body[:cut], 7), fail=fail)
    assert error is fail
    assert finishes(chunks) == [], "a failed stream gets no finish"
    whole, _ = agreed([body])
    assert call_names(chunks) == call_names(whole)[:calls]


def test_a_source_failing_in_a_badly_addressed_string_ends_the_same_four_ways() -> None:
    bad = {"jsonPath": "no-dollar", "stringValue": "x", "willContinue": True}
    body = sse(
        TEXT,
        candidate({"functionCall": {"name": "f", "willContinue": True}}),
        candidate({"functionCall": {"partialArgs": [bad], "willContinue": True}}),
    )
    agreed([body], fail=OSError("connection reset"))


# -- generated streams and damaged bodies -------------------------------------------------------

pipeline_options = st.fixed_dictionaries(
    {},
    optional={
        "announce": st.sampled_from(["first", "none"]),
        "allow_truncated": st.booleans(),
        "include_usage": st.booleans(),
        "reasoning_field": st.sampled_from(["reasoning_content", "reasoning", None]),
        "render_code": st.booleans(),
        "api": st.sampled_from(["gemini", "vertex"]),
        "slot_policy": st.sampled_from(["latest", "positional", "every_part"]),
        "model": st.just("my-model"),
    },
)


@settings(PROPERTIES, max_examples=examples(150))
@given(
    st.one_of(gemini_streams(truncated=None), blocked_streams()),
    framings,
    pipeline_options,
    st.data(),
)
def test_generated_streams_give_the_same_outcome_four_ways(
    stream: GeminiStream, framing: Framing, options: dict[str, Any], data: st.DataObject
) -> None:
    body = encode(stream.events, framing)
    whole = agreed([body], **options)
    assert fingerprint(agreed(in_pieces(body, 7), **options)) == fingerprint(whole)
    cut = data.draw(st.integers(0, len(body)), label="source fails at byte")
    agreed(in_pieces(body[:cut], 7), fail=ConnectionResetError("gone"), **options)


_BODIES = [samples.read(name) for name in samples.names()] + [
    (CORPUS / f"{name}.bin").read_bytes() for name in CORPUS_NAMES
]
_TOKENS = [b"\n", b"\r\n\r\n", b"data: ", b"{", b"}", b'"', b"[DONE]", b"\xc3", b"\xff", b","]


@st.composite
def damaged_bodies(draw: Any) -> bytes:
    """A sample or corpus body with a few bytes deleted, replaced, inserted or cut off."""
    data = bytearray(draw(st.sampled_from(_BODIES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["delete", "insert", "flip", "cut"]))
        if edit == "delete":
            del data[at : at + draw(st.integers(1, 40))]
        elif edit == "insert":
            data[at:at] = draw(st.sampled_from(_TOKENS))
        elif edit == "flip" and at < len(data):
            data[at] = draw(st.integers(0, 255))
        elif edit == "cut":
            del data[at:]
    return bytes(data)


@settings(PROPERTIES, max_examples=examples(1000))
@given(damaged_bodies(), st.sampled_from([None, 7]))
def test_damaged_bodies_give_the_same_outcome_four_ways(body: bytes, piece: int | None) -> None:
    agreed([body] if piece is None else in_pieces(body, piece))


@settings(PROPERTIES, max_examples=examples(1000))
@given(damaged_bodies(), st.data())
def test_damaged_bodies_cut_off_by_a_failing_source_end_the_same_four_ways(
    body: bytes, data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(body)), label="source fails at byte")
    agreed(in_pieces(body[:cut], 7), fail=ConnectionResetError("gone"))


# -- Converter.iterate and aiterate -------------------------------------------------------------


def _body(pieces: Sequence[bytes], fail: Exception | None) -> Iterator[bytes]:
    yield from pieces
    if fail is not None:
        raise fail


def run_iterate(pieces: Sequence[bytes], *, fail: Exception | None = None) -> Outcome:
    converter = rxgem.Converter(id_factory=counter_ids(), clock=lambda: CLOCK)
    chunks: list[rxgem.ChatCompletionChunk] = []
    try:
        chunks.extend(converter.iterate(_body(pieces, fail)))  # extend keeps what came first
    except Exception as error:
        return chunks, error
    return chunks, None


def run_aiterate(pieces: Sequence[bytes], *, fail: Exception | None = None) -> Outcome:
    async def body() -> AsyncIterator[bytes]:
        for piece in _body(pieces, fail):
            yield piece

    async def main() -> Outcome:
        converter = rxgem.Converter(id_factory=counter_ids(), clock=lambda: CLOCK)
        chunks: list[rxgem.ChatCompletionChunk] = []
        try:
            async for chunk in converter.aiterate(body()):
                chunks.append(chunk)
        except Exception as error:
            return chunks, error
        return chunks, None

    return asyncio.run(main())


ITERATORS = pytest.mark.parametrize("way", [run_iterate, run_aiterate], ids=["iterate", "aiterate"])


@ITERATORS
@pytest.mark.parametrize("body", _BODIES, ids=[*samples.names(), *CORPUS_NAMES])
def test_iterate_and_aiterate_give_the_reference_outcome(
    way: Callable[..., Outcome], body: bytes
) -> None:
    pieces = in_pieces(body, 7)
    assert fingerprint(way(pieces)) == fingerprint(run_reference(pieces))


@ITERATORS
def test_iterate_and_aiterate_flush_the_calls_seen_when_the_body_fails(
    way: Callable[..., Outcome],
) -> None:
    pieces = [samples.read("thinking_tools")[:3900]]
    fail = OSError("connection reset")
    chunks, error = way(pieces, fail=fail)
    assert error is fail
    assert fingerprint((chunks, error)) == fingerprint(run_reference(pieces, fail=fail))


# -- the early ends -----------------------------------------------------------------------------


RX_WAYS = pytest.mark.parametrize(
    "operator", [rxgem.gemini_to_openai, stages_apart], ids=["gemini_to_openai", "stages"]
)


def test_done_before_the_end_completes_the_same_four_ways_ignoring_the_rest() -> None:
    head = sse(TEXT, CALL, STOP)
    pieces = [head[:30], head[30:] + b"data: [DONE]\r\n\r\n" + sse(TEXT), sse(QUOTA)]
    chunks, error = agreed(pieces)
    assert error is None
    assert fingerprint((chunks, error)) == fingerprint(agreed([head]))


@RX_WAYS
def test_done_stops_pulling_from_the_byte_source(operator: Callable[..., Any]) -> None:
    pulled: list[int] = []

    def body() -> Iterator[bytes]:
        for number, piece in enumerate([sse(TEXT, STOP), b"data: [DONE]\n\n", sse(TEXT)] * 3):
            pulled.append(number)
            yield piece

    completed: list[bool] = []
    reactivex.from_iterable(body()).pipe(operator()).subscribe(
        on_completed=lambda: completed.append(True)
    )
    assert completed == [True]
    assert pulled == [0, 1], "the source is disposed at [DONE]"


@pytest.mark.parametrize("announce", ["first", "none"])
def test_a_stream_error_after_a_call_flushes_the_call_first_the_same_four_ways(
    announce: str,
) -> None:
    body = sse(TEXT, CALL, QUOTA, TEXT)
    for pieces in ([body], in_pieces(body, 7)):
        chunks, error = agreed(pieces, announce=announce)
        assert isinstance(error, rxgem.GeminiAPIError)
        assert error.code == 429
        assert call_names(chunks) == ["search"]
        assert finishes(chunks) == []


def test_a_malformed_event_after_a_call_flushes_the_call_first_the_same_four_ways() -> None:
    body = sse(TEXT, CALL) + b"data: {not json}\r\n\r\n" + sse(STOP)
    chunks, error = agreed(in_pieces(body, 7))
    assert isinstance(error, rxgem.MalformedStreamError)
    assert call_names(chunks) == ["search"]


def test_truncation_ends_with_the_error_after_the_flushed_calls_the_same_four_ways() -> None:
    chunks, error = agreed(in_pieces(sse(TEXT, CALL), 7))
    assert isinstance(error, rxgem.TruncatedStreamError)
    assert call_names(chunks) == ["search"]
    assert finishes(chunks) == []


def test_an_empty_body_is_truncated_the_same_four_ways() -> None:
    chunks, error = agreed([])
    assert chunks == []
    assert isinstance(error, rxgem.TruncatedStreamError)


on_next = ReactiveTest.on_next
on_completed = ReactiveTest.on_completed
subscribe = ReactiveTest.subscribe


def _timed(operator: Callable[..., Any], take: int | None = None, disposed: int = 1000) -> Any:
    """The sample thinking_tools in 100-byte pieces, one every 10 ticks, through ``operator``."""
    body = samples.read("thinking_tools")
    scheduler = TestScheduler()
    pieces = in_pieces(body, 100)
    xs = scheduler.create_cold_observable(
        *[on_next(10 * (i + 1), piece) for i, piece in enumerate(pieces)],
        on_completed(10 * (len(pieces) + 1)),
    )
    steps = [operator(id_factory=counter_ids(), clock=lambda: CLOCK)]
    steps += [ops.take(take)] if take is not None else []
    observer = scheduler.start(lambda: xs.pipe(*steps), disposed=disposed)
    messages: list[tuple[int, str, Any]] = []
    for message in observer.messages:
        note: Any = message.value
        messages.append(
            (message.time, note.kind, note.value.to_dict() if note.kind == "N" else None)
        )
    return messages, xs.subscriptions


@RX_WAYS
@pytest.mark.parametrize("take", [1, 4, 7])  # of the 8 chunks
def test_take_n_gives_the_first_n_chunks_and_disposes_of_the_source(
    operator: Callable[..., Any], take: int
) -> None:
    full, _ = _timed(operator)
    reference, _error = run_reference(in_pieces(samples.read("thinking_tools"), 100))
    assert [value for _, kind, value in full if kind == "N"] == [c.to_dict() for c in reference]
    taken, subscriptions = _timed(operator, take)
    nth = full[take - 1][0]
    assert taken == [*full[:take], (nth, "C", None)]
    assert subscriptions == [subscribe(200, nth)]


@RX_WAYS
def test_disposing_from_outside_stops_the_source(operator: Callable[..., Any]) -> None:
    full, _ = _timed(operator)
    cut, subscriptions = _timed(operator, disposed=400)
    assert cut == [message for message in full if message[0] < 400]
    assert cut, "some chunks came before the disposal"
    assert subscriptions == [subscribe(200, 400)]


# -- each subscription is a pipeline of its own ---------------------------------------------------


@RX_WAYS
def test_the_source_is_subscribed_once_per_subscription(operator: Callable[..., Any]) -> None:
    subscriptions = 0

    def body(observer: Any, scheduler: Any = None) -> Any:
        nonlocal subscriptions
        subscriptions += 1
        observer.on_next(samples.read("text"))
        observer.on_completed()
        return reactivex.disposable.Disposable()

    completed: list[bool] = []
    reactivex.create(body).pipe(operator()).subscribe(on_completed=lambda: completed.append(True))
    assert subscriptions == 1
    assert completed == [True]


@RX_WAYS
def test_every_subscription_starts_from_fresh_cores(operator: Callable[..., Any]) -> None:
    piped = reactivex.from_iterable(in_pieces(samples.read("thinking_tools"), 50)).pipe(
        operator(id_factory=lambda: "same", clock=lambda: CLOCK)
    )
    runs = []
    for _ in range(2):
        chunks: list[rxgem.ChatCompletionChunk] = []
        piped.subscribe(chunks.append)
        runs.append([chunk.to_dict() for chunk in chunks])
    assert runs[0] == runs[1]
    assert runs[0]


def test_an_intermediate_observable_stays_a_working_pipeline_of_its_own() -> None:
    source = reactivex.from_iterable([samples.read("text")])
    [decode, parse, *_] = [operator for _, operator in pipeline_stages()]
    events = source.pipe(decode)
    parsed = events.pipe(parse)
    event_values: list[Any] = []
    parsed_values: list[Any] = []
    events.subscribe(event_values.append)
    parsed.subscribe(parsed_values.append)
    assert all(isinstance(value, rxgem.core.SSEEvent) for value in event_values)
    assert all(isinstance(value, rxgem.core.GenerateContentResponse) for value in parsed_values)
    assert len(event_values) == len(parsed_values) > 1


def test_the_stages_name_the_operators_in_pipeline_order() -> None:
    assert [name for name, _ in pipeline_stages()] == [
        "decode_sse",
        "parse",
        "group_by_slot",
        "latest_args",
        "flush_on_finish",
        "to_openai",
    ]


# -- the reference against the Rx operator runtime, with synthetic cores --------------------------


class Tag:
    """A synthetic core: tags each value with its name; records its closes in ``log``."""

    def __init__(
        self,
        log: list[str],
        name: str,
        *,
        fail_on: Any = None,
        done_on: Any = None,
        close_error: Exception | None = None,
        close_raises: bool = False,
        batched: bool = False,
    ) -> None:
        self.log, self.name, self.batched = log, name, batched
        self.fail_on, self.done_on = fail_on, done_on
        self.close_error, self.close_raises = close_error, close_raises
        self.error: Exception | None = None
        self.done = False
        self.closed = False

    def feed(self, value: Any) -> list[Any]:
        if value == self.fail_on or (isinstance(value, list) and self.fail_on in value):
            raise ValueError(f"{self.name} failed on {value!r}")
        if value == self.done_on:
            self.done = True
        tagged: Any = [*value, self.name] if isinstance(value, list) else f"{value}>{self.name}"
        return tagged if self.batched else [tagged]

    def close(self, error: Exception | None = None) -> list[Any]:
        if self.closed:
            return []
        self.closed = True
        self.log.append(f"close {self.name}" + (f": {error}" if error else ""))
        if self.close_raises:
            raise RuntimeError(f"{self.name} close raised")
        if error is not None:
            return [f"owed-{self.name}"]
        self.error = self.close_error
        return [f"end-{self.name}"]


Build = Callable[[list[str]], list[Tag]]


def notes(outputs: list[Any], error: Exception | None) -> list[Any]:
    end = ("completed",) if error is None else ("error", type(error).__name__, str(error))
    return [*outputs, end]


def both(build: Build, values: list[Any], fail: Exception | None = None) -> tuple[list[Any], Any]:
    """The chain of ``build``'s cores run by the Rx operators and by :func:`drive`: the same
    values, terminal event and closes, returned once."""
    results = []
    for way in ("rx", "reference"):
        log: list[str] = []
        cores = iter(build(log))
        if way == "reference":
            made = list(cores)
            result = notes(*drive(made, [c.batched for c in made], values, fail))
        else:
            steps: list[Any] = []
            for core in cores:
                made_core = core  # one subscription: the factory hands out this core

                def factory(core: Tag = made_core) -> Tag:
                    return core

                steps += [
                    core_operator(
                        factory, batched=core.batched, ends_early=core.done_on is not None
                    )(),
                    ops.map(lambda value: value),
                ]
            result = notes(*run_rx(reactivex.compose(*steps), values, fail=fail))
        results.append((result, log))
    assert results[0] == results[1], "the Rx operators and the reference disagree"
    return results[0]


def test_a_chain_completes_closing_every_core_in_order() -> None:
    out, log = both(lambda log: [Tag(log, "a"), Tag(log, "b"), Tag(log, "c")], [1, 2])
    assert out == ["1>a>b>c", "2>a>b>c", "end-a>b>c", "end-b>c", "end-c", ("completed",)]
    assert log == ["close a", "close b", "close c"]


def test_a_failing_middle_core_closes_itself_and_the_later_ones_with_the_error() -> None:
    out, log = both(
        lambda log: [Tag(log, "a"), Tag(log, "b", fail_on="2>a"), Tag(log, "c")], [1, 2, 3]
    )
    assert out == [
        "1>a>b>c",
        "owed-b>c",
        "owed-c",
        ("error", "ValueError", "b failed on '2>a'"),
    ]
    assert log == ["close b: b failed on '2>a'", "close c: b failed on '2>a'"]


def test_an_error_reported_after_close_becomes_the_error_of_the_later_cores() -> None:
    out, log = both(lambda log: [Tag(log, "a", close_error=KeyError("late")), Tag(log, "b")], [1])
    assert out == ["1>a>b", "end-a>b", "owed-b", ("error", "KeyError", "'late'")]
    assert log == ["close a", "close b: 'late'"]


def test_a_close_that_raises_ends_the_chain_with_that_error() -> None:
    out, log = both(lambda log: [Tag(log, "a", close_raises=True), Tag(log, "b")], [1])
    assert out == ["1>a>b", "owed-b", ("error", "RuntimeError", "a close raised")]
    assert log == ["close a", "close b: a close raised"]


def test_a_later_core_failing_on_a_close_output_takes_over() -> None:
    out, log = both(lambda log: [Tag(log, "a"), Tag(log, "b", fail_on="end-a"), Tag(log, "c")], [1])
    assert out == ["1>a>b>c", "owed-b>c", "owed-c", ("error", "ValueError", "b failed on 'end-a'")]
    assert log == ["close a", "close b: b failed on 'end-a'", "close c: b failed on 'end-a'"]


def test_an_upstream_error_closes_every_core_with_it() -> None:
    out, log = both(lambda log: [Tag(log, "a"), Tag(log, "b")], [1], fail=OSError("gone"))
    assert out == ["1>a>b", "owed-a>b", "owed-b", ("error", "OSError", "gone")]
    assert log == ["close a: gone", "close b: gone"]


def test_a_core_that_ends_early_completes_the_chain_without_the_rest() -> None:
    out, log = both(lambda log: [Tag(log, "a", done_on=2), Tag(log, "b")], [1, 2, 3])
    assert out == ["1>a>b", "2>a>b", "end-a>b", "end-b", ("completed",)]
    assert log == ["close a", "close b"]


def test_empty_batches_are_not_handed_on() -> None:
    class KeepOdd(Tag):
        def feed(self, value: Any) -> list[Any]:
            return [v for v in value if v % 2]

    def build(log: list[str]) -> list[Tag]:
        return [KeepOdd(log, "odd", batched=True), Tag(log, "b", batched=True)]

    out, _log = both(build, [[2], [1, 2, 3], [4, 6]])
    assert out == [[1, 3, "b"], ["end-odd", "b"], ["end-b"], ("completed",)]
