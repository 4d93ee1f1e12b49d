"""The ``rxgem`` command, run for real in a subprocess: ``convert``, its error frames and exit
codes, the offline ``demo``, and the package the commands live in."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk as SDKChunk

import rxgem
from rxgem import samples

CONSOLE_SCRIPT = Path(sys.executable).parent / "rxgem"
MODULE = [sys.executable, "-m", "rxgem.cli"]
ROOT = Path(__file__).resolve().parents[2]
DONE = b"data: [DONE]\n\n"
STAGES = ("decode_sse", "parse", "group_by_slot", "latest_args", "flush_on_finish", "to_openai")

Run = Callable[..., "subprocess.CompletedProcess[bytes]"]


@pytest.fixture
def cli(tmp_path: Path) -> Run:
    """Run the command (``python -m rxgem.cli``, or the console script) in an empty folder."""

    def run(
        *args: str, stdin: bytes = b"", script: bool = False
    ) -> subprocess.CompletedProcess[bytes]:
        command = [str(CONSOLE_SCRIPT)] if script else MODULE
        return subprocess.run(
            [*command, *args],
            input=stdin,
            capture_output=True,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )

    return run


def sample_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_bytes(samples.read(name))
    return path


def frames(stdout: bytes) -> list[bytes]:
    """The SSE frames of the output: every one must be ``data: …`` followed by a blank line."""
    assert stdout.endswith(b"\n\n"), stdout[-200:]
    pieces = stdout.split(b"\n\n")
    assert pieces[-1] == b""
    for frame in pieces[:-1]:
        assert frame.startswith(b"data: "), frame[:200]
        assert b"\n" not in frame, frame[:200]
        assert b"\r" not in frame, frame[:200]
    return pieces[:-1]


def payloads(stdout: bytes) -> list[dict[str, Any]]:
    """Every ``data:`` payload except ``[DONE]``, JSON-decoded."""
    return [
        json.loads(frame[len(b"data: ") :]) for frame in frames(stdout) if frame + b"\n\n" != DONE
    ]


def chunks_of(stdout: bytes) -> list[dict[str, Any]]:
    """The chunk payloads (error frames excluded), each accepted by the openai SDK."""
    chunks = [p for p in payloads(stdout) if "error" not in p]
    for chunk in chunks:
        SDKChunk.model_validate(chunk)
    return chunks


def error_frame(stdout: bytes) -> dict[str, Any]:
    """The final error frame; it is the last frame and nothing follows it."""
    last = payloads(stdout)[-1]
    assert set(last) == {"error"}, last
    error: dict[str, Any] = last["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    return error


def normalised(stdout: bytes) -> list[dict[str, Any]]:
    """Chunks without ``created`` and with minted ``call_…`` ids renamed in order of appearance."""
    minted: dict[str, str] = {}
    out = []
    for chunk in chunks_of(stdout):
        chunk.pop("created")
        for choice in chunk["choices"]:
            for call in choice["delta"].get("tool_calls") or ():
                if "id" in call and call["id"].startswith("call_"):
                    call["id"] = minted.setdefault(call["id"], f"call_{len(minted)}")
        out.append(chunk)
    return out


def sdk_snapshot(chunks: list[dict[str, Any]]) -> Any:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        for _event in state.handle_chunk(SDKChunk.model_validate(chunk)):
            pass
    return state.current_completion_snapshot


def text_of(chunks: list[dict[str, Any]], index: int, field: str) -> str | None:
    parts = [
        choice["delta"][field]
        for chunk in chunks
        for choice in chunk["choices"]
        if choice["index"] == index and choice["delta"].get(field)
    ]
    return "".join(parts) if parts else None


def one_error_line(stderr: bytes) -> str:
    text = stderr.decode()
    assert "Traceback" not in text, text
    lines = text.splitlines()
    assert len(lines) == 1, text
    assert text.endswith("\n")
    assert lines[0].startswith("rxgem: error: "), text
    return lines[0]


def sse_to_jsonl(data: bytes) -> bytes:
    """The same capture as JSON lines: one response per line, no ``data:`` framing."""
    lines = [line[len(b"data: ") :] for line in data.splitlines() if line.startswith(b"data: ")]
    assert lines
    return b"\n".join(lines) + b"\n"


# -- convert: successful streams -------------------------------------------------------


SUCCESS_SAMPLES = [n for n in samples.names() if samples.expected()[n]["error"] is None]


@pytest.mark.parametrize("name", SUCCESS_SAMPLES)
def test_convert_file_writes_the_expected_openai_stream(
    cli: Run, tmp_path: Path, name: str
) -> None:
    expected = samples.expected()[name]
    api = expected.get("api", "gemini")
    result = cli("convert", str(sample_file(tmp_path, name)), "--api", api)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    assert result.stdout.endswith(DONE)
    assert result.stdout.count(b"[DONE]") == 1
    chunks = chunks_of(result.stdout)
    assert len(chunks) == len(frames(result.stdout)) - 1  # everything but [DONE] is a chunk
    assert {(c["id"], c["created"], c["model"]) for c in chunks} == {
        (chunks[0]["id"], chunks[0]["created"], expected["model"])
    }
    if expected["response_id"]:
        assert chunks[0]["id"] == f"chatcmpl-{expected['response_id']}"
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)

    snapshot = sdk_snapshot(chunks)
    assert len(snapshot.choices) == len(expected["choices"])
    for index, want in enumerate(expected["choices"]):
        choice = snapshot.choices[index]
        assert choice.finish_reason == want["finish_reason"]
        assert choice.message.content == want["content"]
        assert text_of(chunks, index, "reasoning_content") == want["reasoning"]
        calls = choice.message.tool_calls or []
        assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in want["tool_calls"]
        ]
        natives = [
            ch.get("native_finish_reason")
            for chunk in chunks
            for ch in chunk["choices"]
            if ch["index"] == index and ch["finish_reason"] is not None
        ]
        assert natives == [want["native_finish_reason"]]

    usage = chunks[-1].get("usage")
    if expected["usage"] is None:
        assert all("usage" not in c for c in chunks)
    else:
        assert chunks[-1]["choices"] == []
        assert usage is not None
        for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
            assert usage[key] == expected["usage"][key]


def test_convert_main_sample_has_the_four_tool_calls(cli: Run, tmp_path: Path) -> None:
    result = cli("convert", str(sample_file(tmp_path, "thinking_tools.sse")))
    assert result.returncode == 0
    snapshot = sdk_snapshot(chunks_of(result.stdout))
    calls = snapshot.choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["read_file", "read_file", "read_file", "search"]
    assert json.loads(calls[3].function.arguments) == {"query": "rxgem operators"}
    assert len({c.id for c in calls}) == 4


@pytest.mark.parametrize("script", [False, True], ids=["python-m", "console-script"])
def test_convert_from_stdin(cli: Run, tmp_path: Path, script: bool) -> None:
    if script:
        assert CONSOLE_SCRIPT.is_file(), f"console script missing at {CONSOLE_SCRIPT}"
    data = samples.read("gemini3_ids.sse")
    from_stdin = cli("convert", "-", stdin=data, script=script)
    from_file = cli("convert", str(sample_file(tmp_path, "gemini3_ids.sse")), script=script)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stderr == b""
    assert from_stdin.stdout.endswith(DONE)
    assert normalised(from_stdin.stdout) == normalised(from_file.stdout)
    ids = [
        call["id"]
        for chunk in chunks_of(from_stdin.stdout)
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls") or ()
        if "id" in call
    ]
    assert ids == ["ttgzlpie", "artpia4x"]


def test_convert_without_a_file_reads_stdin(cli: Run) -> None:
    result = cli("convert", stdin=samples.read("text.sse"))
    assert result.returncode == 0
    expected = samples.expected()["text.sse"]["choices"][0]["content"]
    assert text_of(chunks_of(result.stdout), 0, "content") == expected


@pytest.mark.parametrize("name", ["gemini3_ids.sse", "thinking_tools.sse", "multi_candidate.sse"])
def test_json_lines_give_the_same_stream_as_sse(cli: Run, tmp_path: Path, name: str) -> None:
    sse = samples.read(name)
    jsonl = sse_to_jsonl(sse)
    assert b"data:" not in jsonl
    (tmp_path / "capture.jsonl").write_bytes(jsonl)
    from_sse = cli("convert", "-", stdin=sse)
    from_jsonl = cli("convert", str(tmp_path / "capture.jsonl"))
    assert from_jsonl.returncode == 0, from_jsonl.stderr
    assert from_jsonl.stdout.endswith(DONE)
    a, b = normalised(from_sse.stdout), normalised(from_jsonl.stdout)
    assert len(a) == len(b) > 2
    assert [c["choices"] for c in a] == [c["choices"] for c in b]
    assert [c.get("usage") for c in a] == [c.get("usage") for c in b]
    assert {c["id"] for c in b} == {f"chatcmpl-{samples.expected()[name]['response_id']}"}


def test_model_option_is_on_every_chunk(cli: Run) -> None:
    data = samples.read("max_tokens.sse")
    plain = chunks_of(cli("convert", "-", stdin=data).stdout)
    assert {c["model"] for c in plain} == {"gemini-2.5-flash-preview-05-20"}
    result = cli("convert", "-", "--model", "my-proxy-model", stdin=data)
    assert result.returncode == 0
    chunks = chunks_of(result.stdout)
    assert len(chunks) == len(plain)
    assert {c["model"] for c in chunks} == {"my-proxy-model"}


def test_no_usage_drops_the_usage_chunk(cli: Run) -> None:
    data = samples.read("thinking_tools.sse")
    with_usage = chunks_of(cli("convert", "-", stdin=data).stdout)
    assert with_usage[-1]["choices"] == []
    assert with_usage[-1]["usage"]["total_tokens"] == 2444
    result = cli("convert", "-", "--no-usage", stdin=data)
    assert result.returncode == 0
    assert result.stdout.endswith(DONE)
    chunks = chunks_of(result.stdout)
    assert all("usage" not in c for c in chunks)
    assert all(c["choices"] for c in chunks)
    assert len(chunks) == len(with_usage) - 1
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize(
    ("field", "absent"), [("reasoning", "reasoning_content"), ("none", "reasoning_content")]
)
def test_reasoning_field_option(cli: Run, field: str, absent: str) -> None:
    result = cli(
        "convert", "-", "--reasoning-field", field, stdin=samples.read("thinking_tools.sse")
    )
    assert result.returncode == 0
    chunks = chunks_of(result.stdout)
    deltas = [choice["delta"] for c in chunks for choice in c["choices"]]
    assert not any(absent in d for d in deltas)
    reasoning = samples.expected()["thinking_tools.sse"]["choices"][0]["reasoning"]
    assert text_of(chunks, 0, "reasoning") == (reasoning if field == "reasoning" else None)


def test_api_option_reads_integer_enums_with_that_api_s_numbers(cli: Run) -> None:
    data = samples.read("int_enums_vertex.sse")  # finishReason 10, safety categories 1..4

    def finish(*options: str) -> tuple[str, str, dict[str, Any]]:
        result = cli("convert", "-", *options, stdin=data)
        assert result.returncode == 0, result.stderr
        [last] = [
            choice
            for chunk in chunks_of(result.stdout)
            for choice in chunk["choices"]
            if choice["finish_reason"] is not None
        ]
        return last["finish_reason"], last["native_finish_reason"], last["delta"]

    reason, native, delta = finish("--api", "vertex")
    assert (reason, native) == ("content_filter", "MODEL_ARMOR")
    assert delta["refusal"] == samples.expected()["int_enums_vertex.sse"]["choices"][0]["refusal"]
    ratings = delta["extra_content"]["google"]["safety_ratings"]
    assert ratings[0]["category"] == "HARM_CATEGORY_HATE_SPEECH"
    # the Gemini API numbers the same values differently
    reason, native, delta = finish()
    assert (reason, native) == ("stop", "MALFORMED_FUNCTION_CALL")
    assert "refusal" not in delta
    assert delta["extra_content"]["google"]["safety_ratings"][0]["category"] == (
        "HARM_CATEGORY_DEROGATORY"
    )


def test_api_option_rejects_other_apis(cli: Run) -> None:
    result = cli("convert", "-", "--api", "openai", stdin=samples.read("text.sse"))
    assert result.returncode == 2
    assert result.stdout == b""
    assert "--api" in result.stderr.decode()


# -- convert: stream errors -------------------------------------------------------------


@pytest.mark.parametrize("name", ["error_mid_stream.sse", "error_event.sse"])
def test_gemini_error_writes_text_then_error_frame(cli: Run, tmp_path: Path, name: str) -> None:
    expected = samples.expected()[name]
    result = cli("convert", str(sample_file(tmp_path, name)))
    assert result.returncode == 1
    assert b"[DONE]" not in result.stdout
    chunks = chunks_of(result.stdout)
    assert text_of(chunks, 0, "content") == expected["choices"][0]["content"]
    assert all(ch["finish_reason"] is None for c in chunks for ch in c["choices"])
    assert all("usage" not in c for c in chunks)
    error = error_frame(result.stdout)  # in OpenAI's words (rxgem.core.openai.openai_error)
    status = expected["error"]["status"]
    quota = status == "RESOURCE_EXHAUSTED"
    assert error["type"] == ("rate_limit_error" if quota else "server_error")
    assert error["code"] == status.lower()
    line = one_error_line(result.stderr)  # the exception's own words
    assert line.startswith(f"rxgem: error: Gemini API error {expected['error']['code']} {status}")
    assert line.endswith(error["message"])


def test_error_mid_stream_details(cli: Run, tmp_path: Path) -> None:
    result = cli("convert", str(sample_file(tmp_path, "error_mid_stream.sse")))
    assert result.returncode == 1
    found = frames(result.stdout)
    assert len(found) == 3  # two text chunks, then the error frame
    error = error_frame(result.stdout)
    assert error["code"] == "cancelled"
    assert error["type"] == "server_error"
    assert error["message"] == "The operation was cancelled."
    line = one_error_line(result.stderr)
    assert "499 CANCELLED (event 3)" in line


def test_truncated_stream_reports_after_the_tool_call(cli: Run, tmp_path: Path) -> None:
    result = cli("convert", str(sample_file(tmp_path, "truncated.sse")))
    assert result.returncode == 1
    assert b"[DONE]" not in result.stdout
    error = error_frame(result.stdout)
    assert error["type"] == "server_error"
    assert error["code"] == "bad_upstream_response"
    chunks = chunks_of(result.stdout)
    calls = [
        call
        for c in chunks
        for choice in c["choices"]
        for call in choice["delta"].get("tool_calls") or ()
    ]
    assert [call["function"]["name"] for call in calls if "id" in call] == ["get_order"]
    arguments = "".join(call["function"].get("arguments", "") for call in calls)
    assert json.loads(arguments) == {"order_id": "A-20931"}
    assert all(ch["finish_reason"] is None for c in chunks for ch in c["choices"])
    one_error_line(result.stderr)


def test_allow_truncated_finishes_instead(cli: Run, tmp_path: Path) -> None:
    result = cli("convert", str(sample_file(tmp_path, "truncated.sse")), "--allow-truncated")
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    assert result.stdout.endswith(DONE)
    chunks = chunks_of(result.stdout)
    assert all("error" not in p for p in payloads(result.stdout))
    finishes = [ch["finish_reason"] for c in chunks for ch in c["choices"] if ch["finish_reason"]]
    assert finishes == ["tool_calls"]
    calls = sdk_snapshot(chunks).choices[0].message.tool_calls
    assert [c.function.name for c in calls] == ["get_order"]


# -- convert: unusable input --------------------------------------------------------------


def test_missing_file_exits_2(cli: Run, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-capture.sse"
    result = cli("convert", str(missing))
    assert result.returncode == 2
    assert result.stdout == b""
    line = one_error_line(result.stderr)
    assert "no-such-capture.sse" in line


def test_directory_exits_2(cli: Run, tmp_path: Path) -> None:
    result = cli("convert", str(tmp_path))
    assert result.returncode == 2
    assert result.stdout == b""
    one_error_line(result.stderr)


@pytest.mark.parametrize(
    "garbage",
    [
        b"<html><body>502 Bad Gateway</body></html>",
        b"<html>\r\n<body>502 Bad Gateway</body>\r\n</html>\r\n",
        b"\x00\xff\xfe\x80 binary \x9c\x00",
        b"{not json at all",
        b"data: 42\n\n",
        b"[1, 2, 3]\n",
    ],
    ids=["html", "html-lines", "binary", "bad-json", "data-not-object", "array-of-numbers"],
)
def test_garbage_input_is_an_error(cli: Run, garbage: bytes) -> None:
    result = cli("convert", "-", stdin=garbage)
    assert result.returncode == 1
    assert b"[DONE]" not in result.stdout
    error = error_frame(result.stdout)
    assert (error["type"], error["code"]) == ("server_error", "bad_upstream_response")
    assert chunks_of(result.stdout) == []
    one_error_line(result.stderr)


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        (gzip.compress(b"data: {}\n\n", mtime=0), "1f 8b 08 00 00 00 00 00 …: gzip?)"),
        ("data: {}\n\n".encode("utf-16"), "ff fe 64 00 61 00 74 00 …: UTF-16 text?)"),
        (b"\x00\xff\xfe\x80 binary \x9c\x00" * 20, "00 ff fe 80 20 62 69 6e …)"),
        (b"\xc3\x28\x80", "c3 28 80)"),
    ],
    ids=["gzip", "utf-16", "binary", "short-bad-utf-8"],
)
def test_binary_input_is_described_not_quoted(cli: Run, body: bytes, shown: str) -> None:
    result = cli("convert", "-", stdin=body)
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert line.endswith(f"(no event in it): binary data (starts with {shown}")
    assert line.replace("…", "").isascii()  # no U+FFFD, no raw bytes
    assert len(line) < 200  # however long the input
    error = error_frame(result.stdout)
    assert error["code"] == "bad_upstream_response"
    # the frame says why, never what the input held (the excerpt is the terminal's)
    assert error["message"].endswith("(no event in it)")


def test_text_that_is_not_a_stream_is_still_quoted(cli: Run) -> None:
    result = cli("convert", "-", stdin=b"<html><body>502 Bad Gateway</body></html>")
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert "binary" not in line
    assert "502 Bad Gateway" in line


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_convert_from_a_terminal_says_it_reads_stdin(tmp_path: Path) -> None:
    import select

    leader, follower = os.openpty()
    try:
        process = subprocess.Popen(
            [*MODULE, "convert"],
            stdin=follower,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
        os.close(follower)
        assert process.stderr is not None
        ready, _, _ = select.select([process.stderr], [], [], 60)
        assert ready, "nothing on stderr while waiting for the terminal"
        hint = process.stderr.readline().decode()
        os.write(leader, b"\x04")  # Ctrl-D at the start of a line: the end of the input
        out, err = process.communicate(timeout=60)
    finally:
        os.close(leader)
    assert hint == (
        "rxgem convert: reading a Gemini stream from stdin (Ctrl-D to end; or pass a file)\n"
    )
    assert process.returncode == 1  # nothing was typed: no response arrived
    assert error_frame(out)["code"] == "bad_upstream_response"
    one_error_line(err)


def test_empty_input_is_an_error(cli: Run) -> None:
    result = cli("convert", "-", stdin=b"")
    assert result.returncode == 1
    assert b"[DONE]" not in result.stdout
    assert error_frame(result.stdout)["code"] == "bad_upstream_response"
    one_error_line(result.stderr)


def test_error_report_stays_one_line_for_a_multiline_message(cli: Run) -> None:
    body = b'data: {"error": {"code": 500, "message": "first line\\nsecond line"}}\n\n'
    result = cli("convert", "-", stdin=body)
    assert result.returncode == 1
    error = error_frame(result.stdout)
    assert (error["type"], error["message"]) == ("server_error", "first line\nsecond line")
    one_error_line(result.stderr)


def test_reader_going_away_is_quiet(tmp_path: Path) -> None:
    event = {"candidates": [{"content": {"parts": [{"text": "lorem ipsum " * 8}]}}]}
    line = b"data: " + json.dumps(event).encode() + b"\n\n"
    last = {"candidates": [{"content": {"parts": [{"text": "."}]}, "finishReason": "STOP"}]}
    capture = tmp_path / "big.sse"
    capture.write_bytes(line * 5000 + b"data: " + json.dumps(last).encode() + b"\n\n")
    process = subprocess.Popen(
        [*MODULE, "convert", str(capture)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    assert process.stdout.read(100).startswith(b"data: ")
    process.stdout.close()  # like `| head -c 100`: far less than the megabytes still to come
    stderr = process.stderr.read()
    process.wait(timeout=120)
    assert "Traceback" not in stderr.decode()
    assert stderr == b""


def test_cut_off_error_array_is_a_malformed_stream(cli: Run) -> None:
    result = cli("convert", "-", stdin=b'[{"error": {"code": 500, "message": "Internal err')
    assert result.returncode == 1
    assert b"[DONE]" not in result.stdout
    line = one_error_line(result.stderr)
    error = error_frame(result.stdout)
    assert error["code"] == "bad_upstream_response"
    assert "event 1" in line
    assert "event 1" in error["message"]


def test_negative_candidate_index_is_not_passed_through(cli: Run) -> None:
    event = {
        "candidates": [
            {"index": -1, "content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}
        ],
        "responseId": "neg",
    }
    result = cli("convert", "-", stdin=b"data: " + json.dumps(event).encode() + b"\n\n")
    assert result.returncode in (0, 1)
    assert "Traceback" not in result.stderr.decode()
    chunks = chunks_of(result.stdout)
    assert all(ch["index"] >= 0 for c in chunks for ch in c["choices"])
    opened: set[int] = set()
    for chunk in chunks:
        for choice in chunk["choices"]:
            if choice["index"] not in opened:
                assert choice["delta"].get("role") == "assistant"
                opened.add(choice["index"])


# -- demo ----------------------------------------------------------------------------------


def test_demo_shows_every_stage_and_the_four_calls(cli: Run) -> None:
    result = cli("demo")
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    out = result.stdout.decode()
    assert "thinking_tools.sse" in out
    positions = [out.index(f"{number}. {stage}:") for number, stage in enumerate(STAGES, 1)]
    assert positions == sorted(positions)
    calls = re.findall(r"tool_calls\[(\d+)\]: (\w+)\((.*)\)", out)
    expected = samples.expected()["thinking_tools.sse"]["choices"][0]["tool_calls"]
    assert [(int(i), name, json.loads(args)) for i, name, args in calls] == [
        (c["index"], c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in expected
    ]
    assert [name for _, name, _ in calls] == ["read_file", "read_file", "read_file", "search"]
    assert "finish_reason=tool_calls" in out


def test_demo_through_the_console_script(cli: Run) -> None:
    assert CONSOLE_SCRIPT.is_file(), f"console script missing at {CONSOLE_SCRIPT}"
    result = cli("demo", script=True)
    assert result.returncode == 0
    out = result.stdout.decode()
    assert all(f"{stage}:" in out for stage in STAGES)
    assert out.count("read_file(") == 3


def test_demo_list_names_every_sample(cli: Run) -> None:
    result = cli("demo", "--list")
    assert result.returncode == 0
    lines = result.stdout.decode().splitlines()
    names = samples.names()
    assert len(names) >= 16
    assert [line.split()[0] for line in lines] == names
    for line, name in zip(lines, names, strict=True):
        assert samples.expected()[name]["description"] in line


def test_demo_all_mentions_every_sample(cli: Run) -> None:
    result = cli("demo", "--all")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr.decode()
    out = result.stdout.decode()
    for name in samples.names():
        assert f"== {name} " in out, name
    assert "stream error: GeminiAPIError" in out
    assert "stream error: TruncatedStreamError" in out
    assert "1. decode_sse:" not in out  # --all shows final messages only


@pytest.mark.parametrize("name", ["text", "text.sse"])
def test_demo_named_sample(cli: Run, name: str) -> None:
    result = cli("demo", name)
    assert result.returncode == 0
    out = result.stdout.decode()
    assert "== text.sse " in out
    assert "thinking_tools" not in out
    assert "finish_reason=stop" in out


def test_demo_grounded_answer_lists_its_sources(cli: Run) -> None:
    result = cli("demo", "grounded_search")
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    want = samples.expected()["grounded_search.sse"]["choices"][0]
    spans = {(a["start_index"], a["end_index"]) for a in want["annotations"]}
    assert f"sources ({len(spans)} cited spans):" in out
    lines = out.splitlines()
    for start, end in sorted(spans):
        cited = want["content"][start:end]
        [at] = [i for i, line in enumerate(lines) if line.strip().startswith(f"[{start}:{end}]")]
        assert cited[:60] in lines[at], lines[at]  # the cited text, cut for the terminal
        cites = [
            a for a in want["annotations"] if (a["start_index"], a["end_index"]) == (start, end)
        ]
        shown = lines[at + 1 : at + 1 + len(cites)]
        assert [line.split() for line in shown] == [[a["title"], a["url"]] for a in cites]
    assert "search queries:" in out


@pytest.mark.parametrize("name", ["code_execution", "mid_stream_finish"])
def test_demo_code_execution_shows_the_fenced_code_and_output(cli: Run, name: str) -> None:
    result = cli("demo", name)
    assert result.returncode == 0, result.stderr
    out = result.stdout.decode()
    content = samples.expected()[f"{name}.sse"]["choices"][0]["content"]
    assert "```output" in content
    shown = [line.split("| ", 1)[1] for line in out.splitlines() if line.startswith("        |")]
    assert shown == content.splitlines()  # all of it, line by line
    assert re.search(r"parts\[0\]: executableCode \(python, \d+ lines", out)
    assert re.search(r"parts\[1\]: codeExecutionResult \(OUTCOME_OK, 1 line of output\)", out)


def test_demo_notes_images_and_audio_by_size(cli: Run) -> None:
    import base64

    out = cli("demo", "image_generation").stdout.decode()
    urls = samples.expected()["image_generation.sse"]["choices"][0]["images"]
    for number, url in enumerate(urls):
        size = len(base64.b64decode(url.split(",", 1)[1]))
        assert f"images[{number}]: image/png, {size} bytes" in out
        assert url not in out  # noted by size, not dumped
    out = cli("demo", "audio_output").stdout.decode()
    audio = samples.expected()["audio_output.sse"]["choices"][0]["audio"]
    size = len(base64.b64decode(audio))
    assert re.search(rf"audio: audio_\w+, {size} bytes of audio/L16;codec=pcm;rate=24000", out)
    assert audio[:200] not in out
    events = [
        json.loads(line[len(b"data: ") :])
        for line in samples.read("audio_output").splitlines()
        if line.startswith(b"data: ")
    ]
    pieces = [e["candidates"][0]["content"]["parts"][0]["inlineData"]["data"] for e in events]
    for number, piece in enumerate(pieces):  # each part's own share of the clip
        own = len(base64.b64decode(piece))
        assert (
            f"parts[{number}]: inlineData (audio/L16;codec=pcm;rate=24000 -> audio, {own} bytes)"
            in out
        )


@pytest.mark.parametrize("name", ["int_enums_vertex", "model_armor_block"])
def test_demo_shows_why_an_answer_was_blocked(cli: Run, name: str) -> None:
    out = cli("demo", name).stdout.decode()
    want = samples.expected()[f"{name}.sse"]["choices"][0]
    assert "finish_reason=content_filter" in out
    assert f"refusal:   {want['refusal'][:80]}" in out


def test_demo_unknown_sample_exits_2(cli: Run) -> None:
    result = cli("demo", "nosuch")
    assert result.returncode == 2
    assert result.stdout == b""
    assert "nosuch" in one_error_line(result.stderr)


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--all", "text"], "--all shows every sample: give 'text' or --all, not both"),
        (["text", "--list"], "--list takes no sample name: leave out 'text'"),
        (["--list", "-v"], "--verbose is for --all"),
    ],
)
def test_demo_refuses_arguments_it_would_ignore(cli: Run, args: list[str], said: str) -> None:
    result = cli("demo", *args)
    assert result.returncode == 2
    assert result.stdout == b""
    assert said in one_error_line(result.stderr)


def test_demo_list_and_all_exclude_each_other(cli: Run) -> None:
    result = cli("demo", "--list", "--all")
    assert result.returncode == 2
    assert result.stdout == b""
    assert "--all: not allowed with argument --list" in result.stderr.decode()


@pytest.mark.parametrize("script", [False, True], ids=["python-m", "console-script"])
def test_version(cli: Run, script: bool) -> None:
    result = cli("--version", script=script)
    assert result.returncode == 0
    assert result.stdout.decode().strip() == f"rxgem {rxgem.__version__}"


def test_no_render_code_and_signature_in_id(cli: Run) -> None:
    data = samples.read("code_execution.sse")
    shown = "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in chunks_of(cli("convert", "-", stdin=data).stdout)
        if c["choices"]
    )
    plain = "".join(
        c["choices"][0]["delta"].get("content") or ""
        for c in chunks_of(cli("convert", "-", "--no-render-code", stdin=data).stdout)
        if c["choices"]
    )
    assert "```" in shown
    assert "```" not in plain
    signed = samples.read("gemini3_ids.sse")
    ids = [
        call["id"]
        for c in chunks_of(cli("convert", "-", "--signature-in-id", stdin=signed).stdout)
        if c["choices"]
        for call in c["choices"][0]["delta"].get("tool_calls") or []
        if "id" in call
    ]
    assert ids
    assert any("__thought__" in i for i in ids)


def test_announce_none_holds_every_call_to_the_end(cli: Run) -> None:
    data = samples.read("thinking_tools.sse")

    def converted(*args: str) -> tuple[list[str], Any]:
        chunks = chunks_of(cli("convert", "-", *args, stdin=data).stdout)
        kinds = [key for c in chunks if c["choices"] for key in c["choices"][0]["delta"]]
        message = sdk_snapshot(chunks).choices[0].message
        calls = [(c.function.name, c.function.arguments) for c in message.tool_calls]
        return kinds, (message.content, message.reasoning_content, calls)

    def first_call_before_content(kinds: list[str]) -> bool:
        return kinds.index("tool_calls") < max(i for i, k in enumerate(kinds) if k == "content")

    (announced, message), (held, same) = converted(), converted("--announce", "none")
    assert first_call_before_content(announced)
    assert not first_call_before_content(held)
    assert same == message
    assert len(message[2]) == 4
    assert cli("convert", "-", "--announce", "all", stdin=data).returncode == 2


# -- the package ----------------------------------------------------------------------------

# a process in which the server extra is not installed
WITHOUT_SERVER = (
    "import sys\n"
    "sys.modules.update(starlette=None, uvicorn=None)\n"
    "from rxgem.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"], ["demo", "--list"]])
def test_the_command_works_without_the_server_extra(tmp_path: Path, args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_SERVER, *args],
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout


def test_serve_without_the_server_extra_says_how_to_get_it(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_SERVER, "serve", "--port", "0"],
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.decode() == (
        "rxgem serve: error: rxgem serve needs the server extra: pip install 'rxgem[server]'\n"
    )


def test_the_server_does_not_import_the_command() -> None:
    code = (
        "import sys, rxgem.server\n"
        "assert not any(m.startswith('rxgem.cli') for m in sys.modules), 'imported'\n"
        "assert not hasattr(rxgem.server, 'add_serve_parser'), 'the command is rxgem.cli.serve'\n"
        "assert not hasattr(rxgem.server, 'run_serve'), 'the command is rxgem.cli.serve'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert result.returncode == 0, result.stderr


def test_the_entry_points() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["scripts"]
    assert scripts == {"rxgem": "rxgem.cli:main"}


def test_one_module_per_command_none_too_long() -> None:
    package = ROOT / "rxgem" / "cli"
    modules = {path.stem: path for path in package.glob("*.py")}
    assert set(modules) >= {"__init__", "convert", "demo", "chat", "serve"}
    for path in modules.values():
        assert len(path.read_text("utf-8").splitlines()) <= 500, path.name
