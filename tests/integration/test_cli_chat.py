"""`rxgem chat` against a real loopback server (FakeGemini), as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from openai.types.chat import ChatCompletionChunk as SDKChunk

from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse

SCRIPT = Path(sys.executable).parent / "rxgem"


def chat(*args: str, key: str | None = "test-key") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    if key is not None:
        env["GEMINI_API_KEY"] = key
    return subprocess.run(
        [str(SCRIPT), "chat", *args], capture_output=True, text=True, env=env, timeout=60
    )


def test_chat_streams_text_reasoning_tool_calls_and_usage() -> None:
    with FakeGemini(FakeResponse(body=samples.read("thinking_tools"), chunk_size=300)) as fake:
        result = chat("Explain rxgem", "--base-url", fake.base_url, "--system", "Be brief")
        [request] = fake.requests
    assert result.returncode == 0, result.stderr
    expected = samples.expected()["thinking_tools.sse"]["choices"][0]
    assert expected["content"] in result.stdout
    assert "Scoping the Request" in result.stdout  # reasoning is shown
    assert 'tool call: search({"query":"rxgem operators"})' in result.stdout
    assert result.stdout.count("tool call: read_file(") == 3
    assert "finish: tool_calls" in result.stdout
    assert "usage: 2187 prompt + 257 completion = 2444 tokens" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour codes when not a terminal
    assert request.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert request.headers["x-goog-api-key"] == "test-key"
    assert request.json == {
        "contents": [{"role": "user", "parts": [{"text": "Explain rxgem"}]}],
        "systemInstruction": {"parts": [{"text": "Be brief"}]},
    }


def test_chat_json_prints_the_openai_sse_stream() -> None:
    with FakeGemini(samples.read("text")) as fake:
        result = chat("Hi", "--base-url", fake.base_url, "--json", "--model", "gemini-2.5-pro")
        assert fake.requests[0].path.endswith("/models/gemini-2.5-pro:streamGenerateContent")
    assert result.returncode == 0, result.stderr
    frames = [line[6:] for line in result.stdout.splitlines() if line.startswith("data: ")]
    assert frames[-1] == "[DONE]"
    chunks = [SDKChunk.model_validate(json.loads(frame)) for frame in frames[:-1]]
    assert {chunk.model for chunk in chunks} == {"gemini-2.5-pro"}


def test_chat_without_a_key_says_how_to_set_one() -> None:
    result = chat("Hi", key=None)
    assert result.returncode == 2
    assert "GEMINI_API_KEY" in result.stderr
    assert "GOOGLE_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_chat_reports_an_http_error_in_one_line() -> None:
    quota = FakeResponse(
        status=429,
        error={"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"},
    )
    with FakeGemini(quota) as fake:
        result = chat("Hi", "--base-url", fake.base_url)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert line.startswith("rxgem: error: Gemini API error 429 RESOURCE_EXHAUSTED")
    assert "Traceback" not in result.stderr


def test_chat_reports_a_connection_failure() -> None:
    with FakeGemini() as fake:
        url = fake.base_url
    result = chat("Hi", "--base-url", url)
    assert result.returncode == 1
    [line] = result.stderr.splitlines()
    assert "ConnectError" in line
