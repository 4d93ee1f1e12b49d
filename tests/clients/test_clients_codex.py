"""Codex CLI (npm ``@openai/codex``, unchanged) through ``rxgem serve``'s ``/v1/responses``.

``codex exec`` runs with a ``$CODEX_HOME/config.toml`` whose provider is the app in real
uvicorn (``wire_api = "responses"``, the server's client token in ``env_key``), in front of
a strict FakeGemini scripted as Gemini 3: a signed call to Codex's shell tool
(``exec_command``), then the answer after the command's output. Codex sends
``store: false`` and ``include: ["reasoning.encrypted_content"]``, so the signature makes the
round trip in a reasoning item's ``encrypted_content``.

The command runs in Codex's ``read-only`` sandbox (the bubblewrap shipped in the npm
package). The ``codex`` fixture (``tests/conftest.py``) skips these tests, saying so, where
Codex CLI is not installed; ``.ci/run`` installs it. Nothing leaves 127.0.0.1: Codex's
analytics and update check are off, and every run has a timeout.
"""

from __future__ import annotations

import base64
import contextlib
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from interactions_judge import strict_problems
from server_harness import TOKEN, serving, settings_for

from rxgem.testing import (
    FakeGemini,
    FakeInteraction,
    call,
    call_step,
    event,
    finish,
    text,
    text_step,
    thought,
    usage,
)
from rxgem.testing._interaction_script import THOUGHT_SIGNATURE, thought_step

G3 = "gemini-3-pro-preview"
STREAM_PATH = f"/v1beta/models/{G3}:streamGenerateContent"
SIGNATURE = base64.b64encode(b"signature of the call to exec_command").decode()
MARK = "rxgem-codex-tool-ran"
ANSWER = "The command printed the mark; all is well."
TIMEOUT = 180  # seconds for one `codex exec` (it starts in about a second here)

CONFIG = """\
model = "{model}"
model_provider = "rxgem"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.rxgem]
name = "rxgem serve"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "RXGEM_TEST_TOKEN"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 60000
"""


def _codex_exec(codex: str, url: str, home: Path, prompt: str) -> tuple[str, str, str]:
    """``codex exec PROMPT`` against ``url`` in a fresh ``CODEX_HOME``; returns the last
    message it wrote (``-o``), its stdout (the final message) and its stderr (the
    transcript: commands run, warnings). Fails the test on a non-zero exit."""
    codex_home = home / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(CONFIG.format(model=G3, url=url), encoding="utf-8")
    workdir = home / "work"
    workdir.mkdir()
    last = home / "last.txt"
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        "RXGEM_TEST_TOKEN": TOKEN,
    }
    command = [codex, "exec", "--skip-git-repo-check", "--ephemeral", "--strict-config"]
    command += ["-s", "read-only", "-o", str(last), prompt]
    # Its own process group: `codex` is a Node script that starts the native binary, and a
    # timeout must end both.
    process = subprocess.Popen(
        command,
        cwd=workdir,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:  # e.g. retrying a server that is not there
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"codex exec did not finish in {TIMEOUT} s; its stderr:\n{stderr}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # anything it left running
    assert process.returncode == 0, f"codex exec exited {process.returncode}:\n{stderr}"
    return last.read_text(encoding="utf-8"), stdout, stderr


def _declared(request: dict[str, Any]) -> set[str]:
    return {
        d["name"] for tool in request.get("tools", ()) for d in tool.get("functionDeclarations", ())
    }


def test_codex_exec_answers_a_turn(codex: str, tmp_path: Path) -> None:
    answer = event(text("Good morning ")) + event(
        text("from Gemini, through rxgem."), finish("STOP"), usage(900, 8)
    )
    with FakeGemini(answer, strict=True) as fake, serving(settings_for(fake)) as url:
        last, stdout, _ = _codex_exec(codex, url, tmp_path, "Say good morning.")
    assert last == "Good morning from Gemini, through rxgem."
    assert "Good morning from Gemini, through rxgem." in stdout
    (request,) = fake.requests
    assert request.path == STREAM_PATH
    body = request.json
    assert body["contents"][-1]["role"] == "user"
    assert body["contents"][-1]["parts"][-1] == {"text": "Say good morning."}
    assert "exec_command" in _declared(body)


def test_codex_exec_runs_a_shell_command_and_answers(codex: str, tmp_path: Path) -> None:
    call_turn = event(thought("I will run the command the user asked for.")) + event(
        call("exec_command", {"cmd": f"echo {MARK}"}, id="fc-exec-1", sig=SIGNATURE),
        finish("STOP"),
        usage(900, 12),
    )
    answer_turn = event(text(ANSWER), finish("STOP"), usage(950, 9))
    with (
        FakeGemini(call_turn, answer_turn, strict=True) as fake,
        serving(settings_for(fake)) as url,
    ):
        last, stdout, transcript = _codex_exec(codex, url, tmp_path, f"Run `echo {MARK}`.")
    assert last == ANSWER
    assert stdout.strip() == ANSWER
    assert f"echo {MARK}" in transcript  # Codex ran the command the call named
    requests = fake.requests
    assert [r.path for r in requests] == [STREAM_PATH, STREAM_PATH]
    second = requests[1].json
    model_turn, tool_turn = second["contents"][-2:]
    calls = [p for p in model_turn["parts"] if "functionCall" in p]
    assert model_turn["role"] == "model"
    assert calls == [
        {
            "functionCall": {
                "name": "exec_command",
                "args": {"cmd": f"echo {MARK}"},
                "id": "fc-exec-1",
            },
            "thoughtSignature": SIGNATURE,
        }
    ]
    (result,) = tool_turn["parts"]
    response = result["functionResponse"]
    assert (tool_turn["role"], response["name"], response["id"]) == (
        "user",
        "exec_command",
        "fc-exec-1",
    )
    output = response["response"]["output"]
    assert f"\n{MARK}\n" in output, output  # the command's output, as Codex reports it
    assert "exited with code 0" in output, output


# --------------------------------------------------------------------------- Interactions


def test_codex_exec_runs_a_command_on_the_interactions_upstream(codex: str, tmp_path: Path) -> None:
    """The same round trip through ``rxgem serve --upstream-api interactions``: Codex's
    ``store: false`` keeps the turn away from Google, and the signature comes back as
    the thought step before the call."""
    call_run = FakeInteraction(
        steps=(
            thought_step("I will run the command the user asked for."),
            call_step("exec_command", {"cmd": f"echo {MARK}"}, id="fc-exec-1", fragments=3),
        )
    )
    answer_run = FakeInteraction(steps=(text_step(ANSWER, pieces=2),))
    settings = {"upstream_api": "interactions", "interactions_store": True}
    with (
        FakeGemini(interactions=[call_run, answer_run], interaction_check=strict_problems) as fake,
        serving(settings_for(fake, **settings)) as url,
    ):
        last, stdout, transcript = _codex_exec(codex, url, tmp_path, f"Run `echo {MARK}`.")
    assert last == ANSWER
    assert stdout.strip() == ANSWER
    assert f"echo {MARK}" in transcript
    first, second = (r.json for r in fake.requests if r.method == "POST")
    assert first["store"] is False  # Codex sends store: false
    assert "exec_command" in {tool.get("name") for tool in first["tools"]}
    steps = second["input"]
    call = next(i for i, step in enumerate(steps) if step["type"] == "function_call")
    assert steps[call - 1] == {"type": "thought", "signature": THOUGHT_SIGNATURE}
    assert steps[call]["id"] == "fc-exec-1"
    assert steps[call]["arguments"] == {"cmd": f"echo {MARK}"}
    result = steps[-1]
    assert (result["type"], result["call_id"]) == ("function_result", "fc-exec-1")
    assert MARK in str(result["result"])
