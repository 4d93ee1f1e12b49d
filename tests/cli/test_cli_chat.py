"""`rxgem chat` against a real loopback server (FakeGemini), as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk as SDKChunk

from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse

SCRIPT = Path(sys.executable).parent / "rxgem"
KEY = "AIzaTestKey-0123456789abcdefghijklmnopq"
WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    }
]


def chat(
    *args: str,
    key: str | None = "test-key",
    stdin: str | None = None,
    env_extra: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    if key is not None:
        env["GEMINI_API_KEY"] = key
    env.update(env_extra or {})
    return subprocess.run(
        [str(SCRIPT), "chat", *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("rxgem: error: "), result.stderr
    return line


def signatures(sample: str) -> list[str]:
    """The thought signatures of a sample capture, in order."""
    lines = samples.read(sample).decode().splitlines()
    events = [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    return [
        part["thoughtSignature"]
        for event in events
        for part in event["candidates"][0]["content"]["parts"]
        if "thoughtSignature" in part
    ]


def write_tools(tmp_path: Path, tools: Any = WEATHER_TOOLS, name: str = "tools.json") -> str:
    path = tmp_path / name
    path.write_text(tools if isinstance(tools, str) else json.dumps(tools), encoding="utf-8")
    return str(path)


# -- one prompt ---------------------------------------------------------------------


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
        "generationConfig": {"thinkingConfig": {"includeThoughts": True}},
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
    assert chunks[-1].usage is not None  # stream_options.include_usage


def test_chat_one_prompt_prints_the_tool_calls_and_stops(tmp_path: Path) -> None:
    tools = write_tools(tmp_path)
    with FakeGemini(samples.read("gemini3_ids")) as fake:
        result = chat(
            "Weather?",
            "--model",
            "gemini-3-pro-preview",
            "--tools",
            tools,
            "--base-url",
            fake.base_url,
            stdin="not read\n",
        )
        [request] = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        'tool call: get_weather({"city":"Lisbon","unit":"celsius"})',
        'tool call: get_weather({"city":"Porto"})',
        "finish: tool_calls",
    ]
    [declaration] = request.json["tools"][0]["functionDeclarations"]
    assert declaration["parametersJsonSchema"] == WEATHER_TOOLS[0]["function"]["parameters"]


@pytest.mark.parametrize(
    ("model", "effort", "thinking", "warning"),
    [
        ("gemini-2.5-flash", "high", {"thinkingBudget": 24576}, None),
        (
            "gemini-3-pro-preview",
            "none",
            {"thinkingLevel": "low"},
            "rxgem: warning: --reasoning-effort: Gemini 3 cannot stop thinking",
        ),
    ],
)
def test_chat_reasoning_effort_reaches_thinking_config(
    model: str, effort: str, thinking: dict[str, Any], warning: str | None
) -> None:
    with FakeGemini(samples.read("text")) as fake:
        result = chat(
            "Hi", "--model", model, "--reasoning-effort", effort, "--base-url", fake.base_url
        )
        [request] = fake.requests
    assert result.returncode == 0, result.stderr
    config = request.json["generationConfig"]["thinkingConfig"]
    assert config == {**thinking, "includeThoughts": True}
    if warning is None:
        assert result.stderr == ""
    else:
        [line] = result.stderr.splitlines()  # said once, not as a Python warning
        assert line.startswith(warning)


# -- a conversation -----------------------------------------------------------------


def test_chat_conversation_sends_the_history_back() -> None:
    with FakeGemini(samples.read("text_signature"), samples.read("text")) as fake:
        result = chat(
            "--model",
            "gemini-3-flash-preview",
            "--system",
            "Be brief",
            "--base-url",
            fake.base_url,
            stdin="Is a frozenset hashable?\n\nAnd a set?\n",
        )
        first, second = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert ">" not in result.stdout  # no prompt marker when stdin is not a terminal
    answers = result.stdout.split("\n\nHere is")  # a blank line between the turns
    assert answers[0].startswith("Yes. A `frozenset` is immutable")
    assert result.stdout.count("finish: stop") == 2
    [signature] = signatures("text_signature")
    question = {"role": "user", "parts": [{"text": "Is a frozenset hashable?"}]}
    assert first.json["contents"] == [question]
    assert second.json["systemInstruction"] == {"parts": [{"text": "Be brief"}]}
    assert second.json["contents"] == [
        question,
        {
            "role": "model",
            "parts": [
                {
                    "text": "Yes. A `frozenset` is immutable and hashable, so it can be a"
                    " dictionary key or an element of another set — unlike a plain `set`,"
                    " which is mutable.",
                    "thoughtSignature": signature,
                }
            ],
        },
        {"role": "user", "parts": [{"text": "And a set?"}]},
    ]


def test_chat_conversation_answers_tool_calls_from_stdin(tmp_path: Path) -> None:
    tools = write_tools(tmp_path)
    with FakeGemini(samples.read("gemini3_ids"), samples.read("text")) as fake:
        result = chat(
            "--model",
            "gemini-3-pro-preview",
            "--tools",
            tools,
            "--base-url",
            fake.base_url,
            stdin='Weather in Lisbon and Porto?\n{"temp": 21}\nsunny\n/exit\nnot sent\n',
        )
        first, second = fake.requests
    assert result.returncode == 0, result.stderr
    assert 'tool call: get_weather({"city":"Porto"})' in result.stdout
    assert "Bonne journée" in result.stdout  # the answer after the results
    [signature] = signatures("gemini3_ids")  # on the first call only
    assert second.json["tools"] == first.json["tools"]
    assert second.json["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"city": "Lisbon", "unit": "celsius"},
                        "id": "ttgzlpie",
                    },
                    "thoughtSignature": signature,
                },
                {
                    "functionCall": {
                        "name": "get_weather",
                        "args": {"city": "Porto"},
                        "id": "artpia4x",
                    }
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"temp": 21},
                        "id": "ttgzlpie",
                    }
                },
                {
                    "functionResponse": {
                        "name": "get_weather",
                        "response": {"output": "sunny"},
                        "id": "artpia4x",
                    }
                },
            ],
        },
    ]


def test_chat_conversation_reports_a_failed_turn_and_goes_on() -> None:
    quota = FakeResponse(
        status=429,
        error={"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"},
    )
    with FakeGemini(quota, samples.read("text")) as fake:
        result = chat("--base-url", fake.base_url, "--json", stdin="one\ntwo\n")
        _, second = fake.requests
    assert result.returncode == 1  # a turn failed
    assert one_error_line(result).startswith("rxgem: error: Gemini API error 429")
    assert second.json["contents"] == [{"role": "user", "parts": [{"text": "two"}]}]  # forgotten
    assert result.stdout.startswith("data: ")
    assert result.stdout.endswith("data: [DONE]\n\n")


# -- where the request goes ---------------------------------------------------------

# A real CLI process whose HTTPS requests to Vertex AI reach FakeGemini instead (the
# path and the Host header stay as the CLI built them).
REDIRECT = """
import os
import httpx

_port = int(os.environ["RXGEM_TEST_VERTEX_PORT"])
_send = httpx.HTTPTransport.handle_request


def _handle_request(self, request):
    if request.url.host.endswith("aiplatform.googleapis.com"):
        request.url = request.url.copy_with(scheme="http", host="127.0.0.1", port=_port)
    return _send(self, request)


httpx.HTTPTransport.handle_request = _handle_request
"""


@pytest.mark.parametrize(
    ("location", "host"),
    [
        ("us-central1", "us-central1-aiplatform.googleapis.com"),
        ("global", "aiplatform.googleapis.com"),
    ],
)
def test_chat_vertex_builds_the_url_and_sends_the_token(
    tmp_path: Path, location: str, host: str
) -> None:
    (tmp_path / "sitecustomize.py").write_text(REDIRECT, encoding="utf-8")
    token = "ya29.test-token-0123456789"
    with FakeGemini() as fake:
        result = chat(
            "Hi",
            "--vertex",
            f"my-project/{location}",
            "--access-token",
            token,
            "--tools",
            write_tools(tmp_path),
            env_extra={"PYTHONPATH": str(tmp_path), "RXGEM_TEST_VERTEX_PORT": str(fake.port)},
        )
        [request] = fake.requests
    assert request.path == (
        f"/v1/projects/my-project/locations/{location}/publishers/google"
        "/models/gemini-2.5-flash:streamGenerateContent"
    )
    assert request.query == {"alt": "sse"}
    assert request.headers["host"] == host
    assert request.headers["authorization"] == f"Bearer {token}"
    assert "x-goog-api-key" not in request.headers  # the token, not GEMINI_API_KEY
    [declaration] = request.json["tools"][0]["functionDeclarations"]
    assert "parameters" in declaration  # Vertex's schema form
    assert result.returncode == 1  # FakeGemini serves only /v1beta: a 404
    assert "404" in one_error_line(result)
    assert token not in result.stdout + result.stderr


# -- errors -------------------------------------------------------------------------


def test_chat_without_a_key_says_how_to_set_one() -> None:
    result = chat("Hi", key=None)
    assert result.returncode == 2
    line = one_error_line(result)
    for hint in ("--api-key", "GEMINI_API_KEY", "GOOGLE_API_KEY", "--access-token"):
        assert hint in line
    assert "api_key=" not in line
    assert result.stdout == ""


def test_chat_conversation_without_a_key_stops_before_reading() -> None:
    result = chat(key=None, stdin="Hi\n")
    assert result.returncode == 2
    assert "--api-key" in one_error_line(result)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("[{", "tools.json: not JSON: "),
        ('{"type": "function"}', "tools.json: must be a JSON list of tools"),
        (
            '[{"type": "function", "function": {"name": "get weather"}}]',
            "tools.json: at [0].function.name: a Gemini function name",
        ),
        ('[{"type": "web_search"}]', "tools.json: at [0].type: tool type 'web_search'"),
    ],
)
def test_chat_bad_tools_file_names_the_file_and_the_path(
    tmp_path: Path, content: str, said: str
) -> None:
    result = chat(
        "Hi", "--tools", write_tools(tmp_path, content), "--base-url", "http://127.0.0.1:9"
    )
    assert result.returncode == 2
    line = one_error_line(result)
    assert f"{tmp_path}/{said}" in line
    assert "unsupported=" not in line  # no Python keyword argument in the message


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--model", "gemini-2.0-flash", "--reasoning-effort", "low"], "--reasoning-effort: "),
        (["--vertex", "my-project"], "--vertex takes PROJECT/LOCATION"),
        (["--api-key", KEY, "--access-token", KEY], "give --api-key or --access-token"),
    ],
)
def test_chat_usage_errors_name_the_flags(args: list[str], said: str) -> None:
    result = chat("Hi", *args)
    assert result.returncode == 2
    line = one_error_line(result)
    assert said in line
    assert "reasoning_effort" not in line
    assert KEY not in line


def test_chat_reports_an_http_error_in_one_line_without_the_key() -> None:
    quota = FakeResponse(
        status=429,
        error={
            "code": 429,
            "message": f"Quota exceeded for {KEY}.",
            "status": "RESOURCE_EXHAUSTED",
        },
    )
    with FakeGemini(quota) as fake:
        result = chat("Hi", "--base-url", fake.base_url, "--api-key", KEY, key=None)
        assert fake.requests[0].headers["x-goog-api-key"] == KEY
    assert result.returncode == 1
    line = one_error_line(result)
    assert line.startswith("rxgem: error: Gemini API error 429 RESOURCE_EXHAUSTED")
    assert KEY not in result.stdout + result.stderr


def test_chat_reports_a_connection_failure() -> None:
    with FakeGemini() as fake:
        url = fake.base_url
    result = chat("Hi", "--base-url", url)
    assert result.returncode == 1
    assert "ConnectError" in one_error_line(result)
