"""``rxgem convert`` on Interactions captures: ``--from interactions|generate-content``, and
the upstream told from the content when ``--from`` is not given. Every recorded stream and
object converts, to chat chunks and to Responses events, as the operators (or the object
translation) give them; a ``--from`` the content contradicts, and a flag the Interactions
pipeline has no use for, are usage errors that name the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import reactivex
from pipeline_harness import normalised_frames

from rxgem import samples
from rxgem.cli import main
from rxgem.cli._upstream_of import LOOK, upstream_of
from rxgem.converter import interaction_chunks, interaction_events
from rxgem.operators import gemini_to_openai, gemini_to_responses, responses_sse_encode, sse_encode

DATA = Path(__file__).resolve().parents[1] / "data" / "interactions"
CAPTURES = sorted(p for p in DATA.rglob("*") if p.suffix in (".txt", ".json", ".sse"))
OUTPUTS = ("chat", "responses")

pytestmark = [
    pytest.mark.skipif(not DATA.is_dir(), reason="no recorded Interactions data"),
    pytest.mark.filterwarnings("ignore:rxgem does not know the Interactions type"),
]


def _name(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _expected(path: Path, output: str) -> list[Any]:
    """What the library gives for the capture: the operators over a stream, the object
    translation over an object; an error ends it with the output's error frame."""
    body = path.read_bytes()
    whole = upstream_of(body[:LOOK], ended=True)
    assert whole is not None
    if whole.source == "interaction-object":
        translate = interaction_events if output == "responses" else interaction_chunks
        source = reactivex.defer(lambda _: reactivex.from_iterable(translate(body)))
    else:
        operator = gemini_to_responses if output == "responses" else gemini_to_openai
        source = reactivex.of(body).pipe(operator(upstream="interactions"))
    frames: list[bytes] = []
    encode = responses_sse_encode() if output == "responses" else sse_encode()
    source.pipe(encode).subscribe(frames.append, lambda _: None)
    return normalised_frames(b"".join(frames))


def _fails(path: Path) -> bool:
    text = path.read_text("utf-8")
    return any(
        word in text
        for word in ('"event_type":"error"', '"status":"failed"', '"status":"cancelled"')
    ) or ("interaction.start" in text or '"outputs"' in text)


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("path", CAPTURES, ids=_name)
def test_every_recorded_capture_converts_told_from_its_content(
    path: Path, output: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    code = main(["convert", str(path), "--to", output])
    captured = capsysbinary.readouterr()
    assert code == (1 if _fails(path) else 0), captured.err
    assert normalised_frames(captured.out) == _expected(path, output)
    assert main(["convert", str(path), "--to", output, "--from", "interactions"]) == code
    assert normalised_frames(capsysbinary.readouterr().out) == normalised_frames(captured.out)


def test_an_interactions_stream_on_stdin_as_sse_frames(
    capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (DATA / "vercel" / "basic.chunks.txt").read_text("utf-8").splitlines()
    sse = "".join(
        f"event: {json.loads(line)['event_type']}\ndata: {line}\n\n" for line in lines if line
    )
    path = DATA / "vercel" / "basic.chunks.txt"
    monkeypatch.setattr("sys.stdin", _Stdin(sse.encode() + b"data: [DONE]\n\n"))
    assert main(["convert", "-"]) == 0
    assert normalised_frames(capsysbinary.readouterr().out) == _expected(path, "chat")


class _Stdin:
    """A non-terminal stdin whose ``buffer`` gives ``data`` a few bytes at a time."""

    def __init__(self, data: bytes) -> None:
        self.buffer = self
        self.data = data

    def isatty(self) -> bool:
        return False

    def read(self, size: int = -1) -> bytes:
        piece, self.data = self.data[:5], self.data[5:]
        return piece


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--from", "interactions", "SAMPLE:text.sse"],
            "--from interactions was given, but this is a generateContent stream",
        ),
        (
            ["--from", "generate-content", "DATA:vercel/basic.chunks.txt"],
            "--from generate-content was given, but this is an Interactions stream",
        ),
        (
            ["--from", "generate-content", "DATA:vercel/basic.json"],
            "--from generate-content was given, but this is an Interaction object",
        ),
    ],
)
def test_a_from_the_content_contradicts_is_a_usage_error_naming_the_fix(
    argv: list[str], said: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    where, _, name = argv[-1].partition(":")
    if where == "SAMPLE":
        path = tmp_path / name
        path.write_bytes(samples.read(name))
    else:
        path = DATA / name
    assert main(["convert", *argv[:-1], str(path)]) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    error = captured.err.decode()
    assert error.startswith(f"rxgem: error: {said}")
    assert "leave --from out" in error
    assert error.count("\n") == 1


@pytest.mark.parametrize(
    ("flag", "capture"),
    [
        (["--slot-policy", "positional"], "vercel/tool-call-step1.chunks.txt"),
        (["--api", "vertex"], "vercel/basic.chunks.txt"),
        (["--announce", "none"], "vercel/basic.chunks.txt"),
        (["--allow-truncated"], "vercel/basic.json"),
    ],
)
def test_a_flag_the_interactions_pipeline_does_not_take_is_a_usage_error(
    flag: list[str], capture: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    assert main(["convert", str(DATA / capture), *flag]) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    assert captured.err.decode().startswith(f"rxgem: error: {flag[0]} does nothing for ")


def test_flags_the_interactions_pipeline_takes_reach_it(
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    path = DATA / "vercel" / "basic.chunks.txt"
    assert main(["convert", str(path), "--model", "my-model", "--no-usage"]) == 0
    chunks = [v for _, v in normalised_frames(capsysbinary.readouterr().out)[:-1]]
    assert {chunk["model"] for chunk in chunks} == {"my-model"}
    assert all(chunk["choices"] for chunk in chunks)  # no usage chunk


def test_a_generate_content_capture_still_converts_with_or_without_from(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "thinking_tools.sse"
    path.write_bytes(samples.read("thinking_tools.sse"))
    assert main(["convert", str(path)]) == 0
    told = capsysbinary.readouterr().out
    assert main(["convert", str(path), "--from", "generate-content", "--api", "gemini"]) == 0
    assert normalised_frames(capsysbinary.readouterr().out) == normalised_frames(told)


@pytest.mark.parametrize(
    ("head", "ended", "source"),
    [
        (b"event: step.start\ndata: {}\n\n", False, "interactions"),
        (b': keep-alive\n\nevent: interaction.created\ndata: {"x":1}', False, "interactions"),
        (b'data: {"event_type":"interaction.created"', False, "interactions"),
        (b'{"event_type":"step.delta","index":0}\n', False, "interactions"),
        (b'\xef\xbb\xbf  {"id":"i","steps":[]}', True, "interaction-object"),
        (
            b'{"id": "i", "object": "interaction", "status": "completed"}',
            True,
            "interaction-object",
        ),
        (
            b'data: {"candidates":[{"content":{"parts":[{"text":"steps"}]}}]',
            False,
            "generate-content",
        ),
        (b'[{"candidates": []}', False, "generate-content"),
        (
            b'{"candidates":[{"content":{"parts":[{"functionCall":{"args":{"steps":[]}}}]}}]}',
            True,
            "generate-content",
        ),
        (b"\x1f\x8b\x08\x00", True, "generate-content"),
        (b"", True, "generate-content"),
    ],
)
def test_the_upstream_is_told_from_the_first_event(head: bytes, ended: bool, source: str) -> None:
    found = upstream_of(head, ended)
    assert found is not None
    assert found.source == source


@pytest.mark.parametrize("head", [b"", b"  ", b"event: step", b'{"id": "i", "st', b"data: {"])
def test_more_bytes_are_read_until_the_first_event_tells(head: bytes) -> None:
    assert upstream_of(head, ended=False) is None


@pytest.mark.parametrize("output", OUTPUTS)
def test_a_failed_interaction_object_converts_its_steps_then_fails(
    output: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    body = {
        "id": "v1_bad",
        "status": "failed",
        "model": "gemini-3-flash-preview",
        "steps": [{"type": "model_output", "content": [{"type": "text", "text": "Partial"}]}],
        "errors": [{"message": "the model stopped"}],
    }
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(body), "utf-8")
    assert main(["convert", str(path), "--to", output]) == 1
    captured = capsysbinary.readouterr()
    assert b"Partial" in captured.out
    if output == "responses":
        assert b"response.failed" in captured.out
    assert b"the model stopped" in captured.err
