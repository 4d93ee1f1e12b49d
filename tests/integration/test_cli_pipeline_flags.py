"""``rxgem convert``'s pipeline flags, made from the options' declaration: every declared
option has one, and each flag reaches the pipeline as the option it means."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_origin, get_type_hints

import pytest
import reactivex

from rxgem import samples
from rxgem.cli import main
from rxgem.cli.convert import add_convert_parser
from rxgem.core import PipelineOptions
from rxgem.operators import gemini_to_openai, sse_encode

MEANINGS: dict[str, tuple[list[str], Any, str]] = {
    "api": (["--api", "vertex"], "vertex", "int_enums_vertex.sse"),
    "slot_policy": (["--slot-policy", "positional"], "positional", "thinking_tools.sse"),
    "announce": (["--announce", "none"], "none", "thinking_tools.sse"),
    "allow_truncated": (["--allow-truncated"], True, "truncated.sse"),
    "model": (["--model", "my-proxy-model"], "my-proxy-model", "text.sse"),
    "include_usage": (["--no-include-usage"], False, "text.sse"),
    "reasoning_field": (["--reasoning-field", "none"], None, "thinking_tools.sse"),
    "render_code": (["--no-render-code"], False, "code_execution.sse"),
    "signature_in_id": (["--signature-in-id"], True, "gemini3_ids.sse"),
}
"""Each option's flag as given, the option's value it means, and a sample it changes."""


def _declared() -> dict[str, Any]:
    """Each declared pipeline option that takes a flag (all but callables) → its type."""
    hints = get_type_hints(PipelineOptions, include_extras=True)
    return {
        name: hint.__origin__
        for name, hint in hints.items()
        if get_origin(hint.__origin__) is not Callable
    }


def _convert_parser() -> argparse.ArgumentParser:
    return add_convert_parser(argparse.ArgumentParser().add_subparsers())


def _options(*argv: str) -> dict[str, Any]:
    from rxgem.cli._pipeline_flags import pipeline_options

    return dict(pipeline_options(_convert_parser().parse_args(["-", *argv])))


def test_every_declared_option_has_a_flag() -> None:
    declared = _declared()
    assert {"id_factory", "clock"}.isdisjoint(declared)
    flagged = {action.dest for action in _convert_parser()._actions if action.option_strings}
    assert set(declared) <= flagged, set(declared) - flagged
    assert set(MEANINGS) == set(declared)  # a new option needs its meaning below


def test_no_flag_gives_no_option() -> None:
    assert _options() == {}


@pytest.mark.parametrize("name", list(MEANINGS))
def test_each_flag_gives_its_option(name: str) -> None:
    argv, value, _ = MEANINGS[name]
    assert _options(*argv) == {name: value}


def test_no_usage_is_no_include_usage() -> None:
    assert _options("--no-usage") == {"include_usage": False}


def test_the_flags_combine() -> None:
    argv = [arg for flag, _, _ in MEANINGS.values() for arg in flag]
    assert _options(*argv) == {name: value for name, (_, value, _) in MEANINGS.items()}


def test_the_help_shows_plain_docs_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "``" not in shown
    assert ":class:" not in shown
    assert "instead of TruncatedStreamError" in shown
    assert "(default: first)" in shown
    assert "or none to drop thought text" in shown
    for argv, _, _ in MEANINGS.values():
        assert argv[0] in shown


def _normalised(stream: bytes) -> list[Any]:
    """The SSE payloads with ``created`` dropped and minted ids renamed in order of appearance."""
    minted: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return minted.setdefault(match[0], f"{match[1]}{len(minted)}")

    out = []
    for frame in stream.split(b"\n\n")[:-1]:
        payload = frame.removeprefix(b"data: ").decode()
        if payload != "[DONE]":
            value = json.loads(re.sub(r"\b(chatcmpl-|call_)[A-Za-z0-9]+", rename, payload))
            value.pop("created", None)
            payload = value
        out.append(payload)
    return out


def _piped(name: str, **options: Any) -> list[Any]:
    frames: list[bytes] = []
    reactivex.of(samples.read(name)).pipe(gemini_to_openai(**options), sse_encode()).subscribe(
        frames.append, lambda _: None
    )
    return _normalised(b"".join(frames))


@pytest.mark.parametrize("name", list(MEANINGS))
def test_each_flag_reaches_the_pipeline(
    name: str, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv, value, sample = MEANINGS[name]
    path = tmp_path / sample
    path.write_bytes(samples.read(sample))
    main(["convert", str(path), *argv])
    converted = _normalised(capsysbinary.readouterr().out)
    assert converted == _piped(sample, **{name: value})
    assert converted != _piped(sample)


def test_the_cli_page_lists_every_flag() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    listed = set(re.findall(r"^\| `(--[a-z-]+)", page, re.MULTILINE))
    made = {
        action.option_strings[0]
        for action in _convert_parser()._actions
        if action.dest in _declared() and action.option_strings
    }
    assert listed == made
