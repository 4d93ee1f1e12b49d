"""``rxgem serve --record DIR``: each exchange with Gemini becomes a cassette in DIR, on both
upstream APIs, streamed and not, with no key and no client token in it; ``rxgem convert``
reads a cassette and gives what the server sent; FakeGemini replays the directory and the
openai SDK gets the same answer; a client cannot steer names or paths; a directory that
cannot be written leaves the requests answered and says so once."""

from __future__ import annotations

import contextlib
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from server_harness import HELLO, KEY, MODEL, TOKEN, sdk, serve_process, serving, settings_for

from rxgem.cli import main
from rxgem.cli.serve import add_serve_parser, cpu_count
from rxgem.testing import FakeGemini, FakeInteraction, text_step
from rxgem.transport import cassette_bytes, read_cassette

_NAME = re.compile(r"\d{8}T\d{6}-\d+-\d{6}-(gc|interactions)-\d{3}\.json")


def _ask(url: str, *, stream: bool) -> str:
    with sdk(url) as client:
        if stream:
            parts = client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
            return "".join(c.choices[0].delta.content or "" for c in parts if c.choices)
        answer = client.chat.completions.create(model=MODEL, messages=HELLO)
        return answer.choices[0].message.content or ""


def _converted(path: Path, capsysbinary: pytest.CaptureFixture[bytes]) -> str:
    assert main(["convert", str(path)]) == 0
    out = capsysbinary.readouterr().out.decode()
    content = ""
    for line in out.splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:])["choices"]:
                content += choice["delta"].get("content") or ""
    return content


def _cassettes(directory: Path) -> list[Path]:
    files = sorted(directory.iterdir())
    for path in files:
        assert _NAME.fullmatch(path.name), path.name
        raw = path.read_text("utf-8")
        assert KEY not in raw
        assert TOKEN not in raw
    return files


@pytest.mark.parametrize("upstream_api", ["generate-content", "interactions"])
def test_serve_records_replays_and_convert_reads(
    upstream_api: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    tapes = tmp_path / "tapes"
    runs = [FakeInteraction(steps=[text_step("Hello from Interactions")])]
    with (
        FakeGemini(interactions=runs) as fake,
        serving(settings_for(fake, record=str(tapes), upstream_api=upstream_api)) as url,
    ):
        answers = [_ask(url, stream=True), _ask(url, stream=False)]
    assert answers[0] == answers[1] != ""
    files = _cassettes(tapes)
    assert len(files) == 2
    for path in files:
        cassette = read_cassette(path)
        assert cassette["upstream"] == upstream_api
        assert cassette["response"]["status"] == 200
        assert cassette["complete"] is True
        assert _converted(path, capsysbinary) == answers[0]
    with (
        FakeGemini(cassettes=tapes) as replay,
        serving(settings_for(replay, upstream_api=upstream_api)) as url,
    ):
        assert _ask(url, stream=True) == answers[0]
        assert _ask(url, stream=False) == answers[0]
    assert cassette_bytes(files[0]).strip()


def test_a_client_cannot_steer_the_recording(tmp_path: Path) -> None:
    tapes = tmp_path / "deep" / "tapes"
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, record=str(tapes))) as url,
        sdk(url) as client,
    ):
        # refused or answered: what matters is where files go and what they are named
        for model in ("../../../../evil", "..%2F..%2Fevil", "models/x/../../evil", MODEL):
            with contextlib.suppress(Exception):
                client.chat.completions.create(model=model, messages=HELLO)
        for previous in ("../../evil", "/etc/passwd"):
            with contextlib.suppress(Exception):
                client.responses.create(model=MODEL, input="Hi", previous_response_id=previous)
    everything = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert all(str(p).startswith("deep") for p in everything), everything
    files = _cassettes(tapes)
    assert len(files) >= 1
    for path in files:
        assert "evil" not in path.name


def test_an_unwritable_record_dir_is_logged_once_and_answers_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with (
        caplog.at_level(logging.WARNING),
        FakeGemini() as fake,
        serving(settings_for(fake, record=str(blocker / "tapes"))) as url,
    ):
        answers = [_ask(url, stream=True), _ask(url, stream=False)]
    assert all(answers)
    messages = [r.getMessage() for r in caplog.records if r.name == "rxgem.record"]
    assert len(messages) == 1
    assert "cannot write cassettes" in messages[0]
    assert all(r.exc_info is None for r in caplog.records)
    assert not any("Traceback" in r.getMessage() for r in caplog.records)


def test_the_serve_flags_set_the_settings() -> None:
    import argparse

    from rxgem.cli.serve import _environment

    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers())
    args: Any = parser.parse_args(["serve", "--record", "tapes", "--record-max-files", "5"])
    env = _environment(args)
    assert env["RXGEM_RECORD"] == "tapes"
    assert env["RXGEM_RECORD_MAX_FILES"] == "5"


def test_cassettes_keep_no_client_token_nor_key_said_in_a_prompt_or_an_echo(
    tmp_path: Path,
) -> None:
    """Before: a client token never travels to Gemini in a header, so a cassette kept it
    verbatim wherever a prompt or Gemini's answer said it; the inspector's download of
    the same exchange redacted it. The echo comes cut inside each secret."""
    from rxgem.testing import FakeResponse, event, finish, text

    tapes = tmp_path / "tapes"
    said = f"token {TOKEN} key {KEY}"
    echo = event(text(f"you said: {said}"), finish())
    cuts = (echo.index(TOKEN.encode()) + 5, echo.index(KEY.encode()) + 5)
    with (
        FakeGemini(FakeResponse(body=echo, split_at=cuts)) as fake,
        serving(settings_for(fake, record=str(tapes))) as url,
        sdk(url) as client,
    ):
        answer = client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": said}]
        )
    assert answer.choices[0].message.content == f"you said: {said}"  # the client gets it all
    (path,) = _cassettes(tapes)  # neither secret in the file
    cassette = read_cassette(path)
    assert "token [redacted] key [redacted]" in json.dumps(cassette["request"]["body"])
    assert b"you said: token [redacted] key [redacted]" in cassette_bytes(cassette)


def _pids(files: list[Path]) -> set[str]:
    return {path.name.split("-")[1] for path in files}


def test_serve_records_every_exchange_under_its_default_worker_count(tmp_path: Path) -> None:
    """As users run it: ``rxgem serve --fake --record DIR``, no ``--workers`` (one per
    core). Before: the workers' environment left ``record`` out, and 0 files were written."""
    tapes = tmp_path / "tapes"
    argv = ("--fake", "--record", str(tapes), "--client-token", TOKEN, "--log-level", "warning")
    asked = 0
    with serve_process(*argv) as (url, _):
        # each request on a new connection, until the workers (one per core) all answered
        while asked < 8 or (asked < 60 and len(_pids(_cassettes(tapes))) < min(2, cpu_count())):
            with sdk(url) as client:
                answer = client.chat.completions.create(
                    model=MODEL, messages=HELLO, stream=asked % 2 == 0
                )
                if asked % 2 == 0:
                    assert "".join(c.choices[0].delta.content or "" for c in answer if c.choices)
            asked += 1
    files = _cassettes(tapes)  # no key, no token
    assert len(files) == asked
    assert len(_pids(files)) == min(2, cpu_count())
    assert all(read_cassette(path)["complete"] for path in files)


def test_the_file_limit_holds_for_the_server_not_each_worker(tmp_path: Path) -> None:
    """``--record-max-files N`` is the server's: its workers share one count. Before: each
    worker counted its own, so N was N times the cores."""
    tapes = tmp_path / "tapes"
    argv = ("--fake", "--record", str(tapes), "--record-max-files", "3", "--client-token", TOKEN)
    with serve_process(*argv, "--log-level", "warning") as (url, _):
        for _ in range(24):  # new connections: every worker answers some
            with sdk(url) as client:
                assert client.chat.completions.create(model=MODEL, messages=HELLO).choices
    assert len(_cassettes(tapes)) == 3
