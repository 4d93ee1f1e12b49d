"""A seeded, example-bounded, Hypothesis-driven byte fuzzer for the whole pipeline.

Inputs: random bytes, mutations of the shipped samples and the bad-input corpus,
Gemini-shaped JSON with wrong types, wrong keys and odd framing, and the valid streams of
``strategies.gemini_streams`` (code, media, grounding, logprobs, integer enums, JSON-array
bodies...), whole or damaged. Each input goes through the SSE
decoder, whole and split at random points, and through the pipeline run three ways
(``rxgem.Converter``, ``gemini_to_openai()`` and the six ``pipeline_stages()`` operators), whole
and split. The oracle:

- only ``rxgem.RxGemError`` subclasses escape (or nothing);
- no input takes more than a few CPU seconds (a hang fails the example);
- the decoded events and the pipeline's output do not depend on how the bytes were split;
- the three ways give the same chunks and end the same way;
- every chunk produced is valid for the openai SDK and encodes to JSON.

Every run tries the same examples: a fixed seed (``RXGEM_FUZZ_SEED``) and a fixed number of
examples per test (``RXGEM_FUZZ_EXAMPLES`` raises it for a long local run, e.g. 20000). A failure
names the seed and count that replay it, and Hypothesis prints the failing input with a
``@reproduce_failure`` blob. The atheris entry point for coverage-guided runs is
``fuzz/fuzz_sse.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from pipeline_harness import Outcome, run, run_converter, run_stages, sdk_validate
from strategies import encode, framings, gemini_streams, json_values

import rxgem
from rxgem import samples

SEED = int(os.environ.get("RXGEM_FUZZ_SEED", "20250101"))
EXAMPLES = os.environ.get("RXGEM_FUZZ_EXAMPLES")
CPU_LIMIT = 5.0  # seconds of CPU per input before it counts as a hang

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
_CASES = json.loads((CORPUS / "cases.json").read_text("utf-8"))


def examples(default: int) -> int:
    """The examples a fuzz test tries: ``default``, or ``RXGEM_FUZZ_EXAMPLES`` when set."""
    return int(EXAMPLES) if EXAMPLES else default


FUZZ_TIMEOUT = pytest.mark.timeout(0 if EXAMPLES else 300)
"""pytest-timeout's limit for a fuzz test: none when the count was raised by hand."""


class Hang(Exception):
    pass


@contextlib.contextmanager
def bounded(cpu_seconds: float = CPU_LIMIT) -> Iterator[None]:
    """Fail with :class:`Hang` after ``cpu_seconds`` of CPU; cap the address space meanwhile.

    Uses ``ITIMER_VIRTUAL``/``SIGVTALRM``, so pytest-timeout's ``SIGALRM`` is left alone.
    """

    def on_timer(signum: int, frame: Any) -> None:
        raise Hang(f"more than {cpu_seconds} s of CPU for one input")

    previous = signal.signal(signal.SIGVTALRM, on_timer)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    capped = False
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/statm") as statm:
            size = int(statm.read().split()[0]) * resource.getpagesize()
        limit = size + (3 << 30)
        if soft == resource.RLIM_INFINITY or limit < soft:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
            capped = True
    signal.setitimer(signal.ITIMER_VIRTUAL, cpu_seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.signal(signal.SIGVTALRM, previous)
        if capped:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def acceptable(error: BaseException | None) -> bool:
    return error is None or isinstance(error, rxgem.RxGemError)


# -- the harness ------------------------------------------------------------------------------


def decode(pieces: list[bytes]) -> tuple[list[rxgem.core.SSEEvent], bool, BaseException | None]:
    """The events, the [DONE] flag, and the error ``close()`` ends with (not an SSE body)."""
    decoder = rxgem.core.SSEDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    try:
        events += decoder.close()
    except rxgem.MalformedStreamError as exc:
        return events, decoder.done, exc
    return events, decoder.done, None


def fingerprint(outcome: Outcome) -> tuple[list[dict[str, Any]], str | None]:
    chunks, error = outcome
    return [chunk.to_dict() for chunk in chunks], None if error is None else repr(error)


def check(body: bytes, cuts: list[int]) -> None:
    """The fuzz oracle for one input split at ``cuts``."""
    cuts = sorted({c for c in cuts if 0 < c < len(body)})
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    with bounded():
        whole, done, not_sse = decode([body])
        split, split_done, split_not_sse = decode(pieces)
        assert split == whole, "the decoded events depend on the split"
        assert split_done == done
        assert repr(split_not_sse) == repr(not_sse)
        for event in whole:
            assert isinstance(event.data, str)
        chunks, error = outcome = run_converter(body)
        assert acceptable(error), f"{type(error).__name__}: {error}"
        want = fingerprint(outcome)
        assert fingerprint(run_converter(pieces)) == want, "the outcome depends on the split"
        assert fingerprint(run(body)) == want, "gemini_to_openai() disagrees with Converter"
        assert fingerprint(run(pieces)) == want, "gemini_to_openai() depends on the split"
        assert fingerprint(run_stages(pieces)) == want, "pipeline_stages() disagree"
        sdk_validate(chunks)
        for chunk in chunks:
            json.loads(chunk.to_json())


def fuzz(strategy: st.SearchStrategy[bytes], count: int) -> None:
    """Run ``count`` Hypothesis examples of ``strategy`` (split at random points) from the seed."""

    @seed(SEED)
    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )
    @given(strategy, st.lists(st.integers(0, 1 << 16), max_size=12))
    def examples_of(body: bytes, cuts: list[int]) -> None:
        check(body, cuts)

    try:
        examples_of()
    except BaseException as exc:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        exc.add_note(f"replay: RXGEM_FUZZ_SEED={SEED} RXGEM_FUZZ_EXAMPLES={count} pytest '{test}'")
        raise


# -- inputs -----------------------------------------------------------------------------------


def _seeds() -> list[bytes]:
    out = [samples.read(name) for name in samples.names()]
    for name, case in sorted(_CASES.items()):
        if "xfail" not in case:  # the known-bug triggers would only re-find known bugs
            out.append((CORPUS / f"{name}.bin").read_bytes())
    return out


SEEDS = _seeds()
TOKENS = [
    b"\r",
    b"\n",
    b"\r\n",
    b"\n\n",
    b"\r\n\r\n",
    b"data:",
    b"data: ",
    b"event: raw\n",
    b"id: \x00\n",
    b"retry: 10\n",
    b": c\n",
    b"\xef\xbb\xbf",
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b"\\",
    b'\\"',
    b":",
    b",",
    b"null",
    b"true",
    b"-1",
    b"1e9",
    b"0.5",
    b"[DONE]",
    b"\xc3",
    b"\xe2\x80\xa8",
    b"\xf0\x9f\x98",
    b"\xff",
    b'"functionCall":{}',
    b'"willContinue":true',
    b'"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}]',
    b'"jsonPath":"$.b[1]"',
    b'"name":"f"',
    b'"id":"x1"',
    b'"args":{}',
    b'"index":1',
    b'"finishReason":"STOP"',
    b'"error":{"code":500}',
    b'"promptFeedback":{"blockReason":"SAFETY"}',
    b'"usageMetadata":{"totalTokenCount":1}',
    b'"thought":true',
    b'"thoughtSignature":"S"',
    b'"finishReason":1',
    b'"executableCode":{"code":"```"}',
    b'"inlineData":{"mimeType":"audio/wav","data":"AAEC"}',
    b'"inlineData":{"mimeType":"image/png","data":"iVBO"}',
    b'"fileData":{"fileUri":"gs://b/x"}',
    b'"groundingMetadata":{}',
    b'"groundingSupports":[{"segment":{"partIndex":1,"endIndex":3},"groundingChunkIndices":[0]}]',
    b'"logprobsResult":{"chosenCandidates":[{"token":"a","logProbability":-1}]}',
    b'[{"candidates":[]}\r\n,\r\n',
]


@st.composite
def mutated(draw: Any) -> bytes:
    """A seed (or two spliced) with a few random mutations."""
    data = bytearray(draw(st.sampled_from(SEEDS)))
    if draw(st.integers(0, 4)) == 0:
        other = draw(st.sampled_from(SEEDS))
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + other[draw(st.integers(0, len(other))) :]
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.integers(0, 5))
        at = draw(st.integers(0, len(data)))
        if kind == 0 and data:  # flip a byte
            at = min(at, len(data) - 1)
            data[at] = draw(st.integers(0, 255))
        elif kind == 1:  # insert a token
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == 2:  # delete a range
            del data[at : at + draw(st.integers(1, 64))]
        elif kind == 3:  # duplicate a range
            data[at:at] = data[at : at + draw(st.integers(1, 256))]
        elif kind == 4:  # truncate
            del data[at:]
        else:  # insert random bytes
            data[at:at] = draw(st.binary(max_size=16))
    return bytes(data)


_FIELDS = [
    "candidates",
    "content",
    "parts",
    "text",
    "thought",
    "thoughtSignature",
    "functionCall",
    "name",
    "args",
    "id",
    "partialArgs",
    "jsonPath",
    "stringValue",
    "numberValue",
    "boolValue",
    "nullValue",
    "willContinue",
    "index",
    "finishReason",
    "finishMessage",
    "usageMetadata",
    "promptTokenCount",
    "totalTokenCount",
    "promptFeedback",
    "blockReason",
    "modelVersion",
    "responseId",
    "error",
    "code",
    "message",
    "status",
    "role",
    # the other parts and candidate fields
    "executableCode",
    "language",
    "codeExecutionResult",
    "outcome",
    "output",
    "inlineData",
    "fileData",
    "mimeType",
    "data",
    "fileUri",
    "toolCall",
    "toolResponse",
    "functionResponse",
    "groundingMetadata",
    "groundingChunks",
    "groundingSupports",
    "groundingChunkIndices",
    "segment",
    "partIndex",
    "startIndex",
    "endIndex",
    "web",
    "uri",
    "title",
    "citationMetadata",
    "citationSources",
    "logprobsResult",
    "chosenCandidates",
    "topCandidates",
    "token",
    "logProbability",
    "safetyRatings",
    "avgLogprobs",
]
_PATHS = ["$.a", "$.a.b", "$.l[0]", "$.l[2]", "$['x.y']", "$", "$.a[*]", "a", "$.", "$[0]"]


@st.composite
def gemini_shaped(draw: Any, depth: int = 0) -> Any:
    """JSON built from Gemini's field names with values of the right or the wrong type."""
    if depth > 4 or draw(st.integers(0, 3)) == 0:
        return draw(
            st.one_of(
                json_values,
                st.sampled_from(_PATHS),
                st.sampled_from(["STOP", "MAX_TOKENS", "SAFETY", "X", "model"]),
                st.sampled_from(["audio/wav", "image/png", "AAEC", "A", "PYTHON", "OUTCOME_OK"]),
                st.integers(-2, 3),
            )
        )
    if draw(st.integers(0, 4)) == 0:
        return draw(st.lists(gemini_shaped(depth + 1), max_size=3))
    keys = draw(st.lists(st.sampled_from(_FIELDS), max_size=4, unique=True))
    return {key: draw(gemini_shaped(depth + 1)) for key in keys}


@st.composite
def gemini_shaped_bodies(draw: Any) -> bytes:
    events = draw(st.lists(gemini_shaped(), min_size=1, max_size=6))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    raw = draw(st.booleans())
    out = []
    for event in events:
        text = json.dumps(event, ensure_ascii=draw(st.booleans()))
        out.append(f"{'' if raw else 'data: '}{text}{eol}{eol}")
    return "".join(out).encode("utf-8", "surrogatepass")


@st.composite
def damaged_streams(draw: Any) -> bytes:
    """A generated valid stream in a generated framing, maybe with a few bytes damaged."""
    body = bytearray(encode(draw(gemini_streams(truncated=None)).events, draw(framings)))
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(body)))
        kind = draw(st.integers(0, 3))
        if kind == 0 and body:  # flip a byte
            body[min(at, len(body) - 1)] = draw(st.integers(0, 255))
        elif kind == 1:  # insert a token
            body[at:at] = draw(st.sampled_from(TOKENS))
        elif kind == 2:  # delete a range
            del body[at : at + draw(st.integers(1, 32))]
        else:  # cut off
            del body[at:]
    return bytes(body)


# -- the fuzz tests ---------------------------------------------------------------------------
# The default counts take about 3-4 s each on a 2-core machine.
RANDOM_BYTES = 2000
MUTATED = 1500
GEMINI_SHAPED = 175
SSE_LINES = 1500
GENERATED = 100


@FUZZ_TIMEOUT
def test_fuzz_random_bytes() -> None:
    fuzz(st.binary(max_size=2048), examples(RANDOM_BYTES))


@FUZZ_TIMEOUT
def test_fuzz_mutated_samples_and_corpus() -> None:
    fuzz(mutated(), examples(MUTATED))


@FUZZ_TIMEOUT
def test_fuzz_gemini_shaped_json() -> None:
    fuzz(gemini_shaped_bodies(), examples(GEMINI_SHAPED))


@FUZZ_TIMEOUT
def test_fuzz_generated_streams_whole_or_damaged() -> None:
    fuzz(damaged_streams(), examples(GENERATED))


@FUZZ_TIMEOUT
def test_fuzz_sse_lines() -> None:
    line = st.one_of(
        st.sampled_from(TOKENS),
        st.builds(lambda v: b"data: " + v, st.binary(max_size=40)),
        st.builds(lambda v: b"data: " + v.encode(), st.sampled_from(SEEDS_JSON)),
        st.binary(max_size=20),
    )
    bodies = st.lists(
        st.tuples(line, st.sampled_from([b"\n", b"\r", b"\r\n", b""])), max_size=20
    ).map(lambda lines: b"".join(a + b for a, b in lines))
    fuzz(bodies, examples(SSE_LINES))


SEEDS_JSON = [
    '{"candidates":[{"content":{"parts":[{"text":"hi"}]},"finishReason":"STOP"}]}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","willContinue":true}}]}}]}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{"partialArgs":'
    '[{"jsonPath":"$.a","stringValue":"x"}],"willContinue":true}}]}}]}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{}}]},"finishReason":"STOP"}]}',
    '{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{"q":"A"}}}]}}]}',
    '{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED"}}',
    '{"promptFeedback":{"blockReason":"SAFETY"}}',
    '[{"candidates":[]}]',
]


def test_the_oracle_rejects_a_foreign_exception() -> None:
    """The harness itself: a non-RxGemError must fail the check (known bugs aside)."""
    assert acceptable(None)
    assert acceptable(rxgem.MalformedStreamError("x"))
    assert not acceptable(TypeError("x"))
    assert not acceptable(ValueError("x"))
    with pytest.raises(Hang), bounded(0.2):
        _spin()


def _spin() -> None:
    while True:
        pass
