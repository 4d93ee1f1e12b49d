"""Malformed inputs of ``rxgem convert`` and ``--fake-scenario``: a one-line error, never a
traceback.

An outside probe found ``convert`` ending in a traceback on a cassette nested deeper than
the JSON decoder goes, on one whose ``body_base64`` is not base64, and on a deeply nested
Interaction object; and ``--fake-scenario`` on a deeply nested JSON script. The CLI's
conventions (docs/cli.md) stand: a file that cannot be read (a cassette's envelope, a
scenario file) is a usage error, exit 2, naming the file and where; a Gemini stream that
cannot be read is a stream error, exit 1, its error frame written and the same line on
stderr. Each probe is kept here, then seeded mutations of good inputs (a bounded number)
check that nothing ends otherwise.
"""

from __future__ import annotations

import base64
import json
import random
from pathlib import Path

import httpx
import pytest

from rxgem import samples
from rxgem.cli import main
from rxgem.testing import FakeGemini
from rxgem.transport import cassette_json

DATA = Path(__file__).resolve().parents[1] / "data" / "interactions"
DEEP = 100_000


def deep_array(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


def one_error_line(err: bytes) -> str:
    """stderr, checked to be one line ``rxgem: error: …`` and no traceback."""
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    lines = text.splitlines()
    assert len(lines) == 1, text
    assert lines[0].startswith("rxgem: error: "), text
    return lines[0]


def convert(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> tuple[int, str]:
    code = main(["convert", str(path)])
    captured = capsysbinary.readouterr()
    return code, one_error_line(captured.err) if code else ""


def a_cassette(**response: object) -> bytes:
    cassette = cassette_json(
        upstream="generate-content",
        method="POST",
        url="https://example.invalid/v1beta/models/m:streamGenerateContent?alt=sse",
        request_body={"contents": []},
        status=200,
        content_type="text/event-stream",
        response=samples.read("text"),
    )
    cassette["response"].update(response)
    return json.dumps(cassette).encode()


# -- the probe's inputs ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (
            b'{"format": "rxgem-cassette/1", "x": ' + deep_array().encode() + b"}",
            "JSON nested too deeply",
        ),
        (a_cassette(body_text=None, body_base64="!!not base64!!"), "body_base64 is not base64"),
        (a_cassette(body_text=None, body_base64="abc"), "body_base64 is not base64"),
        (a_cassette(body_text="\ud800"), "body_text is not text"),
        (b'{"format": "rxgem-cassette/1", "request": {}, "response": {', "not JSON"),
    ],
)
def test_a_malformed_cassette_is_a_usage_error_naming_the_file(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], content: bytes, where: str
) -> None:
    path = tmp_path / "probe.cassette.json"
    path.write_bytes(content)
    code, line = convert(path, capsysbinary)
    assert code == 2
    assert "probe.cassette.json" in line
    assert where in line


@pytest.mark.parametrize(
    ("content", "name", "where"),
    [
        ('{"object": "interaction", "steps": ' + deep_array() + "}", "o.json", "at `$.steps[0]`"),
        ('{"object": "interaction", "x": ' + deep_array() + "}", "x.json", "nested too deeply"),
        ('data: {"candidates": ' + deep_array() + "}\n\n", "deep.sse", "nested too deeply"),
        (
            'event: step.delta\ndata: {"index": 0, "delta": ' + deep_array() + "}\n\n",
            "i.sse",
            "nested too deeply",
        ),
    ],
)
def test_deeply_nested_gemini_json_is_a_stream_error(
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
    content: str,
    name: str,
    where: str,
) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, line = convert(path, capsysbinary)
    assert code == 1
    assert line.startswith("rxgem: error: malformed Gemini stream")
    assert where in line


def test_fake_scenario_files_that_cannot_be_read_name_the_file_and_line(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    good = json.dumps({"candidates": [{"content": {"parts": [{"text": "hi"}]}}]})
    cases = {
        "deep.json": (deep_array(), "JSON nested too deeply"),
        "deep.jsonl": (f'{good}\n{good}\n{{"a": {deep_array()}}}\n', "nested too deeply"),
        "bad.jsonl": (f"{good}\n{{oops\n", "line 2, column 2"),
        "numbers.json": ("[1, 2]", "GenerateContentResponse objects"),
    }
    for name, (content, where) in cases.items():
        path = tmp_path / name
        path.write_text(content)
        for command in (["chat", "--fake", "--fake-scenario", str(path), "hi"],):
            code = main(command)
            line = one_error_line(capsysbinary.readouterr().err)
            assert code == 2, (name, line)
            assert name in line, line
            assert where in line, line


def test_a_scenario_capture_that_is_no_one_response_is_googles_500_not_a_crash(
    tmp_path: Path,
) -> None:
    """An SSE capture is served as it is, and merged for a request that does not stream:
    one that cannot be merged is answered with Google's error body."""
    path = tmp_path / "deep.sse"
    path.write_text('data: {"candidates": ' + deep_array() + "}\n\n")
    with FakeGemini(scenario=str(path)) as fake:
        answer = httpx.post(
            f"{fake.base_url}/models/gemini-2.5-flash:generateContent",
            json={"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
            headers={"x-goog-api-key": "k"},
            timeout=10,
        )
    assert answer.status_code == 500
    assert answer.json()["error"]["code"] == 500


# -- seeded mutations ------------------------------------------------------------------


def _mutations(rng: random.Random, good: bytes, count: int) -> list[bytes]:
    """``count`` mutants of ``good``: cut, nested deep, bytes changed, or a part repeated."""
    out = []
    for _ in range(count):
        at = rng.randrange(len(good) + 1)
        kind = rng.randrange(5)
        if kind == 0:
            out.append(good[:at])
        elif kind == 1:
            depth = rng.choice([50, 5_000, 60_000])
            out.append(good[:at] + rng.choice([b"[", b'{"a":']) * depth + good[at:])
        elif kind == 2:
            mutant = bytearray(good)
            for _ in range(rng.randint(1, 8)):
                if mutant:
                    mutant[rng.randrange(len(mutant))] = rng.randrange(256)
            out.append(bytes(mutant))
        elif kind == 3:
            other = rng.randrange(len(good) + 1)
            out.append(good[:at] + good[min(at, other) : max(at, other)] + good[at:])
        else:
            junk = rng.choice([b"\x00", b"\xff\xfe", b'"', b"\\", b"]", b"}", b"\r", b"null"])
            out.append(good[:at] + junk + good[at:])
    return out


def _goods() -> dict[str, bytes]:
    interaction = (DATA / "vercel" / "basic.json").read_bytes()
    stream = (DATA / "own" / "text-in-start.chunks.txt").read_bytes()
    return {
        "capture.sse": samples.read("thinking_tools")[:6000],
        "cassette.json": a_cassette(),
        "b64.cassette.json": a_cassette(
            body_text=None, body_base64=base64.b64encode(samples.read("text")).decode()
        ),
        "interaction.json": interaction,
        "interactions.jsonl": stream,
    }


@pytest.mark.filterwarnings("ignore::UserWarning")  # an unknown type a mutant made
@pytest.mark.parametrize("name", list(_goods()))
def test_convert_on_mutants_ends_in_one_line_or_none(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], name: str
) -> None:
    rng = random.Random(f"convert:{name}")
    path = tmp_path / name
    for mutant in _mutations(rng, _goods()[name], 40):
        path.write_bytes(mutant)
        code, _ = convert(path, capsysbinary)  # checks the one line
        assert code in (0, 1, 2)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_fake_scenario_on_mutant_scripts_ends_in_one_line_or_none(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    rng = random.Random("fake-scenario")
    script = json.dumps(
        [
            {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hi "}]}}]},
            {"candidates": [{"content": {"parts": [{"text": "there."}]}, "finishReason": "STOP"}]},
        ]
    ).encode()
    path = tmp_path / "script.json"
    for mutant in _mutations(rng, script, 25):
        path.write_bytes(mutant)
        code = main(["chat", "--fake", "--fake-scenario", str(path), "hi"])
        err = capsysbinary.readouterr().err
        if code:
            one_error_line(err)
        assert code in (0, 1, 2)
