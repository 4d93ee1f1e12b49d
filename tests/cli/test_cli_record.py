"""``rxgem chat --record FILE`` and ``rxgem convert CASSETTE``, as a user runs them: the
cassette holds what Gemini sent and never the key; convert gives what the chat printed;
a ``--from`` the cassette contradicts, or a broken cassette, is a usage error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rxgem import samples
from rxgem.cli import main
from rxgem.testing import FakeGemini
from rxgem.transport import cassette_bytes, read_cassette

SCRIPT = Path(sys.executable).with_name("rxgem")
KEY = "AIza-CHAT-RECORD-KEY-91ab"


def _chat(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    env["GEMINI_API_KEY"] = KEY
    return subprocess.run(
        [str(SCRIPT), "chat", *args],
        input="",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def _content(sse: str) -> str:
    out = ""
    for line in sse.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                out += choice["delta"].get("content") or ""
    return out


def test_chat_record_writes_a_cassette_convert_reads(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    tape = tmp_path / "hello.json"
    with FakeGemini(samples.read("text")) as fake:
        result = _chat("Hi", "--base-url", fake.base_url, "--json", "--record", str(tape))
    assert result.returncode == 0, result.stderr
    assert KEY not in tape.read_text("utf-8")
    assert read_cassette(tape)["upstream"] == "generate-content"
    assert cassette_bytes(tape) == samples.read("text")
    assert main(["convert", str(tape)]) == 0
    converted = capsysbinary.readouterr().out.decode()
    assert _content(converted) == _content(result.stdout) != ""


def test_chat_record_to_an_unwritable_place_still_answers(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with FakeGemini(samples.read("text")) as fake:
        result = _chat("Hi", "--base-url", fake.base_url, "--record", str(blocker / "x.json"))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("cannot record") == 1
    assert result.stdout.strip()


def test_convert_refuses_a_contradicting_from_and_a_broken_cassette(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tape = tmp_path / "t.json"
    with FakeGemini(samples.read("text")) as fake:
        _chat("Hi", "--base-url", fake.base_url, "--record", str(tape))
    assert main(["convert", str(tape), "--from", "interactions"]) == 2
    assert "recorded from generate-content" in capsys.readouterr().err
    broken = tmp_path / "b.json"
    broken.write_text('{"format": "rxgem-cassette/1", "request": {}}')
    assert main(["convert", str(broken)]) == 2
    assert "not a cassette" in capsys.readouterr().err
