"""``rxgem serve --fake`` and ``rxgem chat --fake`` answer as Gemini would (the openai SDK)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from server_harness import TOKEN, sdk, serve_process

MODEL = "gemini-2.5-flash"
WEATHER: Any = {
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
            "required": ["city", "unit"],
        },
    },
}
ASK: Any = [{"role": "user", "content": "Weather in Paris?"}]
OFFLINE = {"GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}


def test_serve_fake_calls_the_offered_tool_then_answers_with_its_result() -> None:
    with (
        serve_process("--workers", "1", "--fake", "--client-token", TOKEN, env=OFFLINE) as (url, _),
        sdk(url) as client,
    ):
        with client.chat.completions.stream(model=MODEL, messages=ASK, tools=[WEATHER]) as s:
            first = s.get_final_completion()
        (call,) = first.choices[0].message.tool_calls or []
        result = {"role": "tool", "tool_call_id": call.id, "content": '{"temperature": 21}'}
        with client.chat.completions.stream(
            model=MODEL,
            messages=[*ASK, first.choices[0].message.model_dump(exclude_none=True), result],
            tools=[WEATHER],
        ) as s:
            second = s.get_final_completion()
        flat = {"type": "function", **WEATHER["function"]}
        response = client.responses.create(model=MODEL, input="Weather in Paris?", tools=[flat])
        (item,) = [i for i in response.output if i.type == "function_call"]
        output = {"type": "function_call_output", "call_id": item.call_id, "output": "sunny"}
        answered = client.responses.create(
            model=MODEL, previous_response_id=response.id, input=[output], tools=[flat]
        )
    assert first.choices[0].finish_reason == "tool_calls"
    assert json.loads(call.function.arguments) == {"city": "Paris", "unit": "celsius"}
    assert second.choices[0].finish_reason == "stop"
    assert "21" in (second.choices[0].message.content or "")
    assert json.loads(item.arguments) == {"city": "Paris", "unit": "celsius"}
    assert "sunny" in answered.output_text


@pytest.mark.parametrize("model", ["gpt-4o", "gemini-2.5-flahs"])
def test_serve_fake_passes_on_geminis_404_for_an_unknown_model(model: str) -> None:
    with (
        serve_process("--workers", "1", "--fake", "--client-token", TOKEN, env=OFFLINE) as (url, _),
        sdk(url) as client,
    ):
        with pytest.raises(openai.NotFoundError) as chat:
            client.chat.completions.create(model=model, messages=ASK)
        with pytest.raises(openai.NotFoundError) as responses:
            client.responses.create(model=model, input="Hi", stream=True)
        with pytest.raises(openai.NotFoundError):
            client.models.retrieve(model)
    assert model in str(chat.value)
    assert model in str(responses.value)


def test_serve_fake_scenario_by_name_and_by_file(tmp_path: Path) -> None:
    script = tmp_path / "answer.jsonl"
    lines = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Scripted"}]}}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "!"}]}, "finishReason": "STOP"}
            ]
        },
    ]
    script.write_text("\n".join(json.dumps(line) for line in lines))
    argv = ["--workers", "1", "--fake", "--client-token", TOKEN]
    with (
        serve_process(*argv, "--fake-scenario", "code-execution", env=OFFLINE) as (url, _),
        sdk(url) as client,
    ):
        coded = client.chat.completions.create(model=MODEL, messages=ASK)
    with (
        serve_process(*argv, "--fake-scenario", str(script), env=OFFLINE) as (url, _),
        sdk(url) as client,
    ):
        scripted = client.chat.completions.create(model=MODEL, messages=ASK)
    assert "45" in (coded.choices[0].message.content or "")
    assert scripted.choices[0].message.content == "Scripted!"


def test_serve_fake_honours_n_and_the_interactions_upstream_refuses_it() -> None:
    argv = ["--workers", "1", "--fake", "--client-token", TOKEN]
    with serve_process(*argv, env=OFFLINE) as (url, _), sdk(url) as client:
        whole = client.chat.completions.create(model=MODEL, messages=ASK, n=2)
        with client.chat.completions.stream(model=MODEL, messages=ASK, n=2) as stream:
            streamed = stream.get_final_completion()
        with client.chat.completions.stream(
            model=MODEL, messages=ASK, n=2, tools=[WEATHER]
        ) as stream:
            called = stream.get_final_completion()
    with (
        serve_process(*argv, "--upstream-api", "interactions", env=OFFLINE) as (url, _),
        sdk(url) as client,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        client.chat.completions.create(model=MODEL, messages=ASK, n=2)
    for completion in (whole, streamed):
        first, second = completion.choices
        assert (first.index, second.index) == (0, 1)
        assert (first.finish_reason, second.finish_reason) == ("stop", "stop")
        assert first.message.content
        assert second.message.content == f"Answer 2: {first.message.content}"
    assert [c.finish_reason for c in called.choices] == ["tool_calls", "tool_calls"]
    assert [len(c.message.tool_calls or []) for c in called.choices] == [1, 1]
    assert refused.value.status_code == 400
    assert "n: 1" in refused.value.message
    assert isinstance(refused.value.body, dict)
    assert refused.value.body.get("param") == "n"


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    return subprocess.run(
        [str(Path(sys.executable).parent / "rxgem"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_chat_fake_answers_offline_without_a_key(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([WEATHER]))
    plain = run_cli("chat", "--fake", "Hi")
    called = run_cli("chat", "--fake", "--tools", str(tools), "--json", "Weather in Paris?")
    forced = run_cli("chat", "--fake", "--fake-scenario", "text", "Hi")
    assert plain.returncode == 0, plain.stderr
    assert "[reasoning]" in plain.stdout  # rxgem chat asks for thoughts
    assert called.returncode == 0, called.stderr
    assert '"get_weather"' in called.stdout
    assert '"finish_reason":"tool_calls"' in called.stdout.replace(" ", "")
    assert "good morning" in forced.stdout


def test_a_fake_scenario_that_is_neither_a_name_nor_a_file_is_refused() -> None:
    result = run_cli("chat", "--fake", "--fake-scenario", "tool-cal", "Hi")
    alone = run_cli("chat", "--fake-scenario", "text", "Hi")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "no scenario or file named 'tool-cal'; scenarios: text, thinking" in result.stderr
    assert alone.returncode == 2
    assert "--fake-scenario needs --fake" in alone.stderr


def test_serve_help_names_every_scenario() -> None:
    from rxgem.testing import SCENARIOS

    shown = " ".join(run_cli("serve", "--help").stdout.split()).replace("- ", "-")
    assert all(f" {name}" in shown for name in SCENARIOS), shown


def test_serve_fake_keeps_responses_in_a_temporary_store(tmp_path: Path) -> None:
    # as users start it: the default worker count, the user's data directory
    data = tmp_path / "data"
    env = {**OFFLINE, "XDG_DATA_HOME": str(data)}
    with serve_process("--fake", env=env) as (url, process), sdk(url) as client:
        assert process.stderr is not None
        said = next(line for line in process.stderr if line.startswith("rxgem serve: responses:"))
        first = client.responses.create(model=MODEL, input="hi")
        again = client.responses.create(model=MODEL, input="more", previous_response_id=first.id)
        assert again.status == "completed"
    assert "temporary" in said
    assert "--store" in said
    path = Path(said.split("SQLite file ", 1)[1].split(" (", 1)[0])
    assert not path.exists()  # gone with the server
    assert not data.exists()  # the user's own store never touched


def test_serve_fake_with_store_keeps_them_there(tmp_path: Path) -> None:
    store = tmp_path / "kept.sqlite3"
    argv = ("--workers", "1", "--fake", "--store", str(store))
    with serve_process(*argv, env=OFFLINE) as (url, _), sdk(url) as client:
        client.responses.create(model=MODEL, input="hi")
    assert store.exists()


def _forged_history(model: str) -> dict[str, Any]:
    """A chat request replaying a Gemini 3 call with a signature Gemini never issued."""
    call = {
        "id": "call-1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris", "unit": "celsius"}'},
        "extra_content": {"google": {"thought_signature": "Zm9yZ2VkLXNpZ25hdHVyZQ=="}},
    }
    return {
        "model": model,
        "messages": [
            *ASK,
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call-1", "content": "sunny"},
        ],
        "tools": [WEATHER],
    }


def test_serve_fake_refuses_what_gemini_refuses_unless_lenient() -> None:
    request = _forged_history("gemini-3-flash-preview")
    argv = ("--workers", "1", "--fake", "--client-token", TOKEN)
    with (
        serve_process(*argv, env=OFFLINE) as (url, _),
        sdk(url) as client,
        pytest.raises(openai.BadRequestError) as refused,
    ):
        client.chat.completions.create(**request)
    with serve_process(*argv, "--fake-lenient", env=OFFLINE) as (url, _), sdk(url) as client:
        answered = client.chat.completions.create(**request)
    assert "Corrupted thought signature." in str(refused.value)
    assert answered.choices[0].finish_reason == "stop"
    alone = run_cli("chat", "--fake-lenient", "Hi")
    assert alone.returncode == 2
    assert "--fake-lenient needs --fake" in alone.stderr
