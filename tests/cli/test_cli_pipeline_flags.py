"""``rxgem convert``'s pipeline flags, made from the options' declaration: every declared
option of both outputs (``--to chat``, ``--to responses``) has one, each flag reaches the
pipeline of each output that takes it as the option it means, and a flag the chosen output
does not take is a usage error that names it."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_origin, get_type_hints

import pytest
import reactivex
from pipeline_harness import normalised_frames

from rxgem import samples
from rxgem.cli import main
from rxgem.cli._pipeline_flags import Output
from rxgem.cli.convert import add_convert_parser
from rxgem.core.pipeline import PipelineOptions, ResponsesPipelineOptions
from rxgem.operators import gemini_to_openai, gemini_to_responses, responses_sse_encode, sse_encode

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
    "include_encrypted_reasoning": (["--include-encrypted-reasoning"], True, "gemini3_ids.sse"),
    "response_id": (["--response-id", "resp-cli-1"], "resp-cli-1", "text.sse"),
}
"""Each option's flag as given, the option's value it means, and a sample it changes."""

OUTPUT_OPTIONS: dict[Output, Any] = {
    "chat": PipelineOptions,
    "responses": ResponsesPipelineOptions,
}
NO_FLAG = {"id_factory", "clock", "scrub", "request", "namespaced"}  # functions, and mappings


def _declared(output: Output | None = None) -> dict[str, Any]:
    """Each option ``output``'s pipeline declares (default: either's) that takes a flag
    (all but callables and the ``request`` and ``namespaced`` mappings) → its type."""
    outputs = [output] if output is not None else list(OUTPUT_OPTIONS)
    hints = {
        name: hint
        for each in outputs
        for name, hint in get_type_hints(OUTPUT_OPTIONS[each], include_extras=True).items()
    }
    return {name: hint.__origin__ for name, hint in hints.items() if name not in NO_FLAG}


def _outputs(name: str) -> list[Output]:
    return [output for output in OUTPUT_OPTIONS if name in _declared(output)]


def _convert_parser() -> argparse.ArgumentParser:
    return add_convert_parser(argparse.ArgumentParser().add_subparsers())


def _options(*argv: str, output: Output = "chat") -> dict[str, Any]:
    from rxgem.cli._pipeline_flags import pipeline_options

    args = _convert_parser().parse_args(["-", *argv])
    if output == "responses":
        return dict(pipeline_options(args, "responses"))
    return dict(pipeline_options(args))


def test_every_declared_option_has_a_flag() -> None:
    declared = _declared()
    assert NO_FLAG.isdisjoint(declared)
    assert {"include_usage", "include_encrypted_reasoning"} <= set(declared)
    flagged = {action.dest for action in _convert_parser()._actions if action.option_strings}
    assert set(declared) <= flagged, set(declared) - flagged
    assert NO_FLAG.isdisjoint(flagged)
    # a new option needs its meaning below; `upstream`'s flag is convert's own `--from`
    # (it chooses the stages, so it is no stage's flag: tests/cli/test_cli_interactions.py)
    assert set(MEANINGS) == set(declared) - {"upstream"}
    assert {"--from": "upstream"}.items() <= {
        flag: action.dest for action in _convert_parser()._actions for flag in action.option_strings
    }.items()


@pytest.mark.parametrize("name", ["request", "namespaced"])
def test_a_mapping_is_declared_and_has_no_flag(name: str) -> None:
    hints = get_type_hints(ResponsesPipelineOptions)
    assert get_origin(hints["id_factory"]) is Callable
    assert name in hints
    assert not any(name in action.dest for action in _convert_parser()._actions)


@pytest.mark.parametrize("output", list(OUTPUT_OPTIONS))
def test_no_flag_gives_no_option(output: Output) -> None:
    assert _options(output=output) == {}


@pytest.mark.parametrize(
    ("name", "output"), [(name, output) for name in MEANINGS for output in _outputs(name)]
)
def test_each_flag_gives_its_option(name: str, output: Output) -> None:
    argv, value, _ = MEANINGS[name]
    assert _options(*argv, output=output) == {name: value}


def test_no_usage_is_no_include_usage() -> None:
    assert _options("--no-usage") == {"include_usage": False}


@pytest.mark.parametrize("output", list(OUTPUT_OPTIONS))
def test_the_flags_of_an_output_combine(output: Output) -> None:
    names = [name for name in MEANINGS if output in _outputs(name)]
    argv = [arg for name in names for arg in MEANINGS[name][0]]
    assert _options(*argv, output=output) == {name: MEANINGS[name][1] for name in names}


def test_each_output_has_flags_of_its_own() -> None:
    assert [n for n in MEANINGS if _outputs(n) == ["chat"]] == [
        "include_usage",
        "reasoning_field",
        "render_code",
        "signature_in_id",
    ]
    assert [n for n in MEANINGS if _outputs(n) == ["responses"]] == [
        "include_encrypted_reasoning",
        "response_id",
    ]


@pytest.mark.parametrize(
    ("name", "output"),
    [
        (name, output)
        for name in MEANINGS
        for output in OUTPUT_OPTIONS
        if output not in _outputs(name)
    ],
)
def test_a_flag_the_output_does_not_take_is_a_usage_error_naming_it(
    name: str,
    output: Output,
    tmp_path: Path,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    argv, _, sample = MEANINGS[name]
    path = tmp_path / sample
    path.write_bytes(samples.read(sample))
    assert main(["convert", str(path), "--to", output, *argv]) == 2
    captured = capsysbinary.readouterr()
    assert captured.out == b""
    [other] = _outputs(name)
    said = captured.err.decode()
    assert said.startswith(f"rxgem: error: {argv[0]}")
    assert f" is for --to {other} only: the " in said
    assert said.endswith(f"(--to {output}) has no {name} option\n")
    assert said.count("\n") == 1


def test_a_refused_alias_is_named_with_its_flag(capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(["convert", "--to", "responses", "--no-usage", "-"]) == 2
    said = capsysbinary.readouterr().err.decode()
    assert said.startswith("rxgem: error: --no-include-usage (or --no-usage) is for --to chat")


def test_the_help_shows_plain_docs_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["convert", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert "``" not in shown
    assert ":class:" not in shown
    assert "TruncatedStreamError" not in shown  # words for a terminal, not the API's
    assert "SlotPolicy" not in shown
    assert "this flag turns it off" not in shown
    assert "end it with what arrived instead of an error" in shown
    assert "(default: first)" in shown
    assert "or none to leave it out" in shown
    for argv, _, _ in MEANINGS.values():
        assert argv[0] in shown
    assert "--to {chat,responses}" in shown
    assert "[--to chat only] put each tool call's thought signature" in shown
    assert "[--to responses only] put Gemini's thought signatures" in shown
    assert "[--to chat only] --api" not in shown  # both outputs take it


def _piped(name: str, output: Output, **options: Any) -> list[Any]:
    frames: list[bytes] = []
    source = reactivex.of(samples.read(name))
    if output == "responses":
        encoded = source.pipe(gemini_to_responses(**options), responses_sse_encode())
    else:
        encoded = source.pipe(gemini_to_openai(**options), sse_encode())
    encoded.subscribe(frames.append, lambda _: None)
    return normalised_frames(b"".join(frames))


@pytest.mark.parametrize(
    ("name", "output"), [(name, output) for name in MEANINGS for output in _outputs(name)]
)
def test_each_flag_reaches_the_pipeline(
    name: str, output: Output, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv, value, sample = MEANINGS[name]
    path = tmp_path / sample
    path.write_bytes(samples.read(sample))
    main(["convert", str(path), "--to", output, *argv])
    converted = normalised_frames(capsysbinary.readouterr().out)
    assert converted == _piped(sample, output, **{name: value})
    assert converted != _piped(sample, output)


def test_the_cli_page_lists_every_flag_with_its_output() -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    listed = set(re.findall(r"^\| `(--[a-z-]+)[^\n]*\| (\w+) \|$", page, re.MULTILINE))
    made = {
        (action.option_strings[0], "both" if len(outputs) == 2 else outputs[0])
        for action in _convert_parser()._actions
        if action.dest in _declared() and action.option_strings
        for outputs in [_outputs(action.dest)]
    }
    assert listed == made
