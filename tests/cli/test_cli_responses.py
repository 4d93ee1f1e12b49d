"""``rxgem convert --to responses``, run for real in a subprocess: every shipped sample gives
named Responses event frames, each valid for the ``openai`` SDK under strict validation, the
same events as ``gemini_to_responses``; a stream error ends with ``response.failed`` (or an
``error`` event) and exit code 1, with what came before written."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
import reactivex
from openai._models import validate_type
from openai.types.responses import ResponseStreamEvent
from responses_judge import TERMINAL, check_sequence, sdk_final, sdk_validate

from rxgem import samples
from rxgem.core.responses import ResponsesEvent
from rxgem.operators import gemini_to_responses

MODULE = [sys.executable, "-m", "rxgem.cli"]
FRAME = re.compile(r"event: ([a-z_.]+)\ndata: (\{[^\n]*\})")
MINTED = re.compile(r"\b(resp_|msg_|rs_|fc_|call_|ig_|ci_)[A-Za-z0-9_-]+")
EXPECTED = samples.expected()
SAMPLES = samples.names()
STATUS = {"stop": "completed", "tool_calls": "completed", "length": "incomplete"}
ALLOW_TRUNCATED = "(pass --allow-truncated to end it with what arrived)"


def convert(tmp_path: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*MODULE, "convert", "--to", "responses", *args],
        input=stdin,
        capture_output=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )


def sample_file(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_bytes(samples.read(name))
    return str(path)


def payloads(stdout: bytes) -> list[dict[str, Any]]:
    """Every frame's payload: each frame is ``event: <type>`` then ``data: <json>`` (that
    type's event) and a blank line, nothing else; no ``[DONE]``."""
    text = stdout.decode()
    assert text.endswith("\n\n"), text[-200:]
    frames = text[:-2].split("\n\n")
    out = []
    for frame in frames:
        match = FRAME.fullmatch(frame)
        assert match is not None, frame[:200]
        payload: dict[str, Any] = json.loads(match[2])
        assert payload["type"] == match[1]
        out.append(payload)
    return out


def events_of(stdout: bytes) -> list[ResponsesEvent]:
    """The events written, each validated as the openai SDK validates a streamed event with
    ``_strict_response_validation=True`` (on the JSON as written) and read back as rxgem's
    event losslessly."""
    events = []
    for payload in payloads(stdout):
        validate_type(type_=ResponseStreamEvent, value=payload)  # type: ignore[arg-type]
        event = msgspec.convert(payload, ResponsesEvent)
        assert event.to_dict() == payload
        events.append(event)
    sdk_validate(events)
    return events


def normalised(payloads: list[dict[str, Any]]) -> list[Any]:
    """The payloads with ``created_at`` dropped and minted ids renamed in order of appearance."""
    minted: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return minted.setdefault(match[0], f"{match[1]}{len(minted)}")

    out = []
    for payload in payloads:
        payload = json.loads(MINTED.sub(rename, json.dumps(payload)))
        payload.get("response", {}).pop("created_at", None)
        out.append(payload)
    return out


def in_process(name: str, **options: Any) -> tuple[list[dict[str, Any]], Exception | None]:
    events: list[ResponsesEvent] = []
    errors: list[Exception] = []
    reactivex.of(samples.read(name)).pipe(gemini_to_responses(**options)).subscribe(
        events.append, errors.append
    )
    return [event.to_dict() for event in events], errors[0] if errors else None


def message_text(response: dict[str, Any]) -> str | None:
    texts = [
        part["text"]
        for item in response["output"]
        if item["type"] == "message"
        for part in item["content"]
        if part["type"] == "output_text"
    ]
    return "".join(texts) if texts else None


# -- every sample ----------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLES)
def test_every_sample_converts_to_valid_responses_events(tmp_path: Path, name: str) -> None:
    expected = EXPECTED[name]
    api = expected.get("api", "gemini")
    result = convert(tmp_path, sample_file(tmp_path, name), "--api", api)
    events = events_of(result.stdout)
    response = check_sequence(events)
    written = [event.to_dict() for event in events]
    assert b"[DONE]" not in result.stdout
    reference, error = in_process(name, api=api)
    assert normalised(written) == normalised(reference)  # the CLI is the pipeline

    if expected["error"] is None:
        assert error is None
        assert result.returncode == 0, result.stderr
        assert result.stderr == b""
        assert response["model"] == expected["model"]
        if response["status"] == "completed":
            final = sdk_final(events)  # what responses.stream() accumulates
            assert [item.model_dump(exclude_none=True) for item in final.output] == (
                response["output"]
            )
    else:
        assert result.returncode == 1
        assert type(error).__name__ == expected["error"]["type"]
        assert response["status"] == "failed"
        said = f"rxgem: error: {' '.join(str(error).split())}"
        assert result.stderr.decode() in (f"{said}\n", f"{said} {ALLOW_TRUNCATED}\n")

    want = expected["choices"][0]
    if expected["error"] is None and want["finish_reason"] in STATUS:
        assert response["status"] == STATUS[want["finish_reason"]]
    if want["content"] and "```" not in want["content"] and expected["error"] is None:
        assert message_text(response) == want["content"]  # (code: its own items, not text)
    calls = [item for item in response["output"] if item["type"] == "function_call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        (c["function"]["name"], c["function"]["arguments"]) for c in want["tool_calls"]
    ]


def test_the_main_sample_carries_its_signatures_when_asked(tmp_path: Path) -> None:
    path = sample_file(tmp_path, "thinking_tools.sse")
    plain = check_sequence(events_of(convert(tmp_path, path).stdout))
    sealed = check_sequence(
        events_of(convert(tmp_path, path, "--include-encrypted-reasoning").stdout)
    )
    assert sealed["output"][0]["type"] == "reasoning"
    assert sealed["output"][0]["encrypted_content"].startswith("rxgem.sig.v1.")
    assert not any("encrypted_content" in item for item in plain["output"])
    names = [item["name"] for item in sealed["output"] if item["type"] == "function_call"]
    assert names == ["read_file", "read_file", "read_file", "search"]


def test_stdin_and_json_lines_convert_too(tmp_path: Path) -> None:
    data = samples.read("gemini3_ids.sse")
    lines = [line[len(b"data: ") :] for line in data.splitlines() if line.startswith(b"data: ")]
    from_stdin = convert(tmp_path, stdin=data)
    from_jsonl = convert(tmp_path, "-", stdin=b"\n".join(lines) + b"\n")
    assert from_stdin.returncode == from_jsonl.returncode == 0
    assert normalised(payloads(from_stdin.stdout)) == normalised(payloads(from_jsonl.stdout))
    calls = [
        item["call_id"]
        for item in check_sequence(events_of(from_stdin.stdout))["output"]
        if item["type"] == "function_call"
    ]
    assert calls == ["ttgzlpie", "artpia4x"]


# -- stream errors ----------------------------------------------------------------------


def test_truncated_stream_fails_with_the_call_written_and_exit_1(tmp_path: Path) -> None:
    result = convert(tmp_path, sample_file(tmp_path, "truncated.sse"))
    assert result.returncode == 1
    events = events_of(result.stdout)
    written = [event.to_dict() for event in events]
    assert [e["type"] for e in written].count("response.failed") == 1
    assert written[-1]["type"] == "response.failed"
    failed = check_sequence(events)
    assert failed["status"] == "failed"
    assert "no finishReason" in failed["error"]["message"]
    [call] = [item for item in failed["output"] if item["type"] == "function_call"]
    assert (call["name"], json.loads(call["arguments"])) == ("get_order", {"order_id": "A-20931"})
    assert message_text(failed) == "I'll look up the order status for you. One moment."
    deltas = [e["delta"] for e in written if e["type"] == "response.output_text.delta"]
    assert "".join(deltas) == message_text(failed)  # what came before, streamed before the end
    assert result.stderr.decode() == (
        "rxgem: error: the Gemini stream ended before candidate 0 finished (no finishReason)"
        f" {ALLOW_TRUNCATED}\n"
    )


def test_allow_truncated_completes_instead(tmp_path: Path) -> None:
    result = convert(tmp_path, sample_file(tmp_path, "truncated.sse"), "--allow-truncated")
    assert result.returncode == 0, result.stderr
    assert check_sequence(events_of(result.stdout))["status"] == "completed"


@pytest.mark.parametrize("name", ["error_mid_stream.sse", "error_event.sse"])
def test_gemini_error_fails_the_response_after_its_text(tmp_path: Path, name: str) -> None:
    expected = EXPECTED[name]
    result = convert(tmp_path, sample_file(tmp_path, name))
    assert result.returncode == 1
    failed = check_sequence(events_of(result.stdout))
    assert message_text(failed) == expected["choices"][0]["content"]
    status = expected["error"]["status"]  # the error object in OpenAI's words, Gemini's message
    quota = status == "RESOURCE_EXHAUSTED"
    assert failed["error"]["code"] == ("rate_limit_exceeded" if quota else "server_error")
    assert failed["error"]["type"] == ("rate_limit_error" if quota else "server_error")
    assert failed["error"]["message"] in result.stderr.decode()
    assert result.stderr.decode().startswith("rxgem: error: ")
    assert expected["error"]["status"] in result.stderr.decode()


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b"\x00\xff\xfe\x80 binary \x9c\x00", "binary data (starts with 00 ff fe 80"),
        (b"<html><body>502 Bad Gateway</body></html>", "502 Bad Gateway"),
        (b"", "before any response arrived"),
    ],
    ids=["binary", "html", "empty"],
)
def test_input_with_no_response_ends_with_an_error_event(
    tmp_path: Path, body: bytes, said: str
) -> None:
    result = convert(tmp_path, "-", stdin=body)
    assert result.returncode == 1
    [error] = payloads(result.stdout)  # no response began: the error event alone
    validate_type(type_=ResponseStreamEvent, value=error)  # type: ignore[arg-type]
    assert error["type"] == "error"
    assert error["sequence_number"] == 0
    assert not TERMINAL & {p["type"] for p in payloads(result.stdout)}
    assert error["code"] == "bad_upstream_response"
    assert error["message"].startswith("Gemini's response could not be read: ")
    line = result.stderr.decode()  # the exception's own words, the excerpt too
    assert line.count("\n") == 1
    assert line.startswith("rxgem: error: ")
    assert said in line
