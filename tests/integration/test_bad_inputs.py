"""Bad input ends with the documented error, after everything valid before it was delivered.

Each ``tests/corpus/<case>.bin`` is a response body; ``tests/corpus/cases.json`` gives, per case,
the error type, a fragment of its message, the content that must have been delivered before the
error (``null``: none) and, optionally, the tool calls flushed before it. Every case is run whole,
one byte at a time and in random pieces (the outcome must not change), judged by the openai SDK,
and through ``rxgem convert``. The 100 MB events are generated here, not committed.
"""

from __future__ import annotations

import json
import random
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import reactivex
from pipeline_harness import check_protocol, run, sdk_validate

import rxgem
from rxgem import cli
from rxgem.core.openai._error import openai_error

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
CASES: dict[str, dict[str, Any]] = json.loads((CORPUS / "cases.json").read_text("utf-8"))
MB = 1 << 20


def corpus_params() -> Iterator[Any]:
    for name, case in sorted(CASES.items()):
        marks = [pytest.mark.xfail(strict=True, reason=case["xfail"])] if "xfail" in case else []
        yield pytest.param(name, case, id=name, marks=marks)


def splits(body: bytes) -> Iterator[list[bytes]]:
    yield [body]
    if len(body) <= 20_000:
        yield [body[i : i + 1] for i in range(len(body))]
    rng = random.Random(len(body))
    for _ in range(3):
        cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, 8))) if body else []
        yield [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


def delivered(chunks: list[rxgem.ChatCompletionChunk]) -> tuple[str | None, list[list[Any]]]:
    """Choice 0's content and tool calls ``[name, args]``, as an OpenAI client assembles them."""
    choices = rxgem.assemble(chunks)["choices"]
    if not choices:
        return None, []
    message = choices[0]["message"]
    calls = [
        [call["function"]["name"], json.loads(call["function"]["arguments"])]
        for call in message.get("tool_calls") or ()
    ]
    return message.get("content"), calls


def test_every_corpus_file_has_a_case_and_every_case_a_file() -> None:
    files = {path.stem for path in CORPUS.glob("*.bin")}
    assert files == set(CASES)
    assert len(CASES) >= 40
    for case in CASES.values():
        assert case["error"] in ("MalformedStreamError", "GeminiAPIError", "TruncatedStreamError")
        assert isinstance(case["message"], str)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("name", "case"), list(corpus_params()))
def test_corpus_case_ends_with_the_documented_error(name: str, case: dict[str, Any]) -> None:
    body = (CORPUS / f"{name}.bin").read_bytes()
    outcomes = set()
    for pieces in splits(body):
        chunks, error = run(pieces)
        assert isinstance(error, rxgem.RxGemError), f"{name}: {error!r} is not an RxGemError"
        assert type(error).__name__ == case["error"], repr(error)
        assert case["message"] in str(error), str(error)
        assert len(str(error)) < 1000, "error messages quote a short snippet only"
        sdk_validate(chunks)
        if chunks:
            check_protocol(chunks)
        content, calls = delivered(chunks)
        assert content == case["delivered_content"]
        assert calls == case.get("delivered_calls", [])
        outcomes.add((json.dumps([c.to_dict() for c in chunks]), repr(error)))
    assert len(outcomes) == 1, "the outcome depends on how the bytes were split"


@pytest.mark.parametrize(("name", "case"), list(corpus_params()))
def test_corpus_case_through_the_cli(
    name: str, case: dict[str, Any], capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code = cli.main(["convert", str(CORPUS / f"{name}.bin")])
    out, err = capsysbinary.readouterr()
    if name == "openai_stream_fed_back":  # a usage error: the file is already OpenAI output
        assert (code, out) == (2, b"")
        assert b"already OpenAI output" in err
        return
    assert code == 1
    assert err.startswith(b"rxgem: error: ")
    assert err.count(b"\n") == 1
    frames = [frame for frame in out.split(b"\n\n") if frame]
    assert b"[DONE]" not in out
    payload = json.loads(frames[-1].removeprefix(b"data: "))
    _, error = run((CORPUS / f"{name}.bin").read_bytes())
    assert type(error).__name__ == case["error"]
    said = openai_error(error)  # the one vocabulary every output speaks
    assert (payload["error"]["type"], payload["error"]["code"]) == (said.type, said.code)
    for frame in frames[:-1]:
        json.loads(frame.removeprefix(b"data: "))


# -- 100 MB events -----------------------------------------------------------------------------

_BEFORE = b'data: {"candidates": [{"content": {"parts": [{"text": "before "}]}}]}\r\n\r\n'


def _huge_event(size_mb: int, *, framed: bool, complete: bool) -> Iterator[bytes]:
    """A text event of ``size_mb`` MB, produced in 1 MB pieces (never held whole)."""
    head = b'{"candidates": [{"content": {"parts": [{"text": "'
    yield _BEFORE + (b"data: " if framed else b"") + head
    filler = b"abcdefgh" * (MB // 8)
    for _ in range(size_mb):
        yield filler
    if complete:
        yield b'"}],"role": "model"},"finishReason": "STOP"}]}\r\n\r\n'


def _convert_streaming(pieces: Iterator[bytes]) -> tuple[list[Any], list[Exception], float, int]:
    chunks: list[Any] = []
    errors: list[Exception] = []
    tracemalloc.start()
    try:
        start = time.perf_counter()
        reactivex.from_iterable(pieces).pipe(rxgem.gemini_to_openai()).subscribe(
            chunks.append, errors.append
        )
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return chunks, errors, elapsed, peak


@pytest.mark.timeout(120)
@pytest.mark.parametrize("framed", [True, False], ids=["data-line", "raw-json-line"])
def test_a_100mb_event_converts_cleanly_in_bounded_time_and_memory(framed: bool) -> None:
    """No size limit is documented (or in the code), so a 100 MB event is a clean conversion."""
    chunks, errors, elapsed, peak = _convert_streaming(
        _huge_event(100, framed=framed, complete=True)
    )
    assert errors == []
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(text) == len("before ") + 100 * MB
    assert text.startswith("before abcdefgh")
    assert text.endswith("abcdefgh")
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert elapsed < 30, f"{elapsed:.1f} s"
    assert peak < 450 * MB, f"peak {peak / MB:.0f} MB for a 100 MB event"


@pytest.mark.timeout(120)
def test_a_truncated_100mb_event_is_malformed_with_a_short_message() -> None:
    chunks, errors, elapsed, peak = _convert_streaming(
        _huge_event(100, framed=True, complete=False)
    )
    [error] = errors
    assert isinstance(error, rxgem.MalformedStreamError)
    assert "at event 2: invalid JSON" in str(error)
    assert len(str(error)) < 300
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "before "
    assert elapsed < 30, f"{elapsed:.1f} s"
    assert peak < 450 * MB, f"peak {peak / MB:.0f} MB for a 100 MB event"


# -- found by probing: nesting ---------------------------------------------------------------


def _nested_args(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def _resent_nested(depth: int, grown: bool = False) -> bytes:
    """A call with args nested ``depth`` levels deep, re-sent (identical or grown) once."""

    def event(leaf: str, finish: str) -> str:
        part = '{"functionCall":{"name":"f","args":' + _nested_args(depth, leaf) + "}}"
        return 'data: {"candidates":[{"content":{"parts":[' + part + "]}" + finish + "}]}\n\n"

    return (event('"x"', "") + event('"xy"' if grown else '"x"', ',"finishReason":"STOP"')).encode()


@pytest.mark.parametrize("grown", [False, True], ids=["identical", "grown"])
@pytest.mark.parametrize("depth", [100, 300, 600])
def test_nested_args_resent_stay_one_call(depth: int, grown: bool) -> None:
    chunks, error = run(_resent_nested(depth, grown))
    assert error is None
    [call] = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert call["function"]["arguments"] == _nested_args(depth, '"xy"' if grown else '"x"')


def test_nesting_near_the_recursion_limit_never_crashes() -> None:
    for depth in range(900, 1100, 2):
        for grown in (False, True):
            _chunks, error = run(_resent_nested(depth, grown))
            assert error is None or isinstance(error, rxgem.RxGemError), (depth, repr(error))
