"""The Node clients people use, unchanged, through ``rxgem serve``: do Gemini's thought
signatures make the round trip?

Each test runs a script of ``tests/clients/node/`` (Vercel's AI SDK with ``@ai-sdk/openai``'s
chat and Responses models and ``@ai-sdk/openai-compatible``; ``@openai/agents`` with its chat
and Responses models; the ``openai`` SDK's ``chat.completions.runTools``) as a subprocess
against the app in real uvicorn, with the server's defaults (responses kept in a SQLite
store), on each upstream (``generateContent`` and Interactions). Upstream is a strict
FakeGemini answering from its scenarios as a Gemini 3 model: tools offered get a signed call,
a tool result gets an answer. Each script holds two user turns with a tool loop in each (a
call of its own to a tool of its own), the second sending the first's messages back as its
client rebuilds them; then the test reads what reached the fake: every call sent back
carries the signature the fake issued for it, and Google's placeholder never stands in for
one.

The clients are npm packages pinned in ``tests/clients/node/package.json``; ``.ci/run``
installs them into ``~/.cache/rxgem-test-tools/node-clients``, where the ``node_clients``
fixture finds them (``RXGEM_NODE_CLIENTS`` overrides it); without them the tests skip with the
command that installs them. Nothing leaves 127.0.0.1, and every run has a timeout.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from server_harness import TOKEN, serving, settings_for

from rxgem.testing import FakeGemini, ReceivedRequest

NODE = Path(__file__).resolve().parent / "node"
PINS: dict[str, str] = json.loads((NODE / "package.json").read_text(encoding="utf-8"))[
    "dependencies"
]
CACHE = Path.home() / ".cache" / "rxgem-test-tools" / "node-clients"
SPECS = " ".join(f"{name}@{version}" for name, version in PINS.items())
G3 = "gemini-3-flash-preview"
TIMEOUT = 60  # seconds for one script (it takes about two here)
UPSTREAMS = ("generateContent", "interactions")

# (script, its arguments): each client, each way it carries a turn's state
CLIENTS: dict[str, tuple[str, ...]] = {
    "vercel-chat-generate": ("vercel_ai.mjs", "chat", "generate"),
    "vercel-chat-stream": ("vercel_ai.mjs", "chat", "stream"),
    "vercel-responses-generate": ("vercel_ai.mjs", "responses", "generate"),
    "vercel-responses-stream": ("vercel_ai.mjs", "responses", "stream"),
    "vercel-compatible-stream": ("vercel_ai.mjs", "compatible", "stream"),
    "agents-chat": ("openai_agents.mjs", "chat"),
    "agents-responses": ("openai_agents.mjs", "responses"),
    "run-tools-generate": ("openai_run_tools.mjs", "generate"),
    "run-tools-stream": ("openai_run_tools.mjs", "stream"),
}


@pytest.fixture(scope="module")
def node_clients() -> Path:
    """The ``node_modules`` holding the pinned clients: ``$RXGEM_NODE_CLIENTS`` (an npm
    prefix), else ``.ci/run``'s install. Skips, naming the install command, without them."""
    chosen = os.environ.get("RXGEM_NODE_CLIENTS")
    prefix = Path(chosen) if chosen else CACHE
    if shutil.which("node") is None:
        pytest.skip(
            "node is not installed: `apt-get install nodejs npm`, then `npm install --prefix"
            f" ~/.cache/rxgem-test-tools/node-clients {SPECS}`"
        )
    found = {}
    for name in PINS:
        manifest = prefix / "node_modules" / name / "package.json"
        with contextlib.suppress(OSError, ValueError):
            found[name] = json.loads(manifest.read_text(encoding="utf-8")).get("version")
    wrong = {name: found.get(name) for name, version in PINS.items() if found.get(name) != version}
    if wrong and chosen:
        pytest.fail(f"RXGEM_NODE_CLIENTS={chosen} lacks these pinned versions: {wrong}")
    if wrong:
        pytest.skip(
            f"the Node clients are not installed at their pinned versions ({', '.join(wrong)}):"
            f" `npm install --prefix ~/.cache/rxgem-test-tools/node-clients {SPECS}` (.ci/run"
            " does), or set RXGEM_NODE_CLIENTS to such an npm prefix"
        )
    return prefix / "node_modules"


def run_script(node_modules: Path, work: Path, url: str, script: str, *args: str) -> Any:
    """``node SCRIPT ARGS`` against ``url``, copied into ``work`` beside a link to the
    clients; returns the JSON line it reports. Fails the test on a non-zero exit."""
    for name in ("common.mjs", script):
        shutil.copy(NODE / name, work / name)
    with contextlib.suppress(FileExistsError):
        (work / "node_modules").symlink_to(node_modules, target_is_directory=True)
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(work),
        "RXGEM_BASE_URL": f"{url}/v1",
        "RXGEM_TOKEN": TOKEN,
        "RXGEM_MODEL": G3,
        "OPENAI_AGENTS_DISABLE_TRACING": "1",
    }
    process = subprocess.Popen(
        ["node", script, *args],
        cwd=work,
        env=environment,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"node {script} did not finish in {TIMEOUT} s; its stderr:\n{stderr}")
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, f"node {script} {args} exited {process.returncode}:\n{stderr}"
    return json.loads(stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- what reached Gemini


def replayed_calls(requests: list[ReceivedRequest]) -> list[str]:
    """The name of each call sent back to the fake, request by request, in order."""
    names: list[str] = []
    for request in requests:
        body = request.json
        if "input" in body:  # Interactions
            names += [s["name"] for s in body["input"] if s.get("type") == "function_call"]
            continue
        for content in body["contents"]:
            parts = content.get("parts", ()) if content.get("role") == "model" else ()
            names += [p["functionCall"]["name"] for p in parts if "functionCall" in p]
    return names


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("client", CLIENTS)
def test_node_client_sends_every_signature_back(
    node_clients: Path, tmp_path: Path, client: str, upstream: str
) -> None:
    settings: dict[str, Any] = {"store": str(tmp_path / "responses.sqlite3")}
    if upstream == "interactions":
        settings["upstream_api"] = "interactions"
    work = tmp_path / "node"
    work.mkdir()
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, **settings)) as url,
    ):
        report = run_script(node_clients, work, url, *CLIENTS[client])
    # each turn's tool ran once, and the fake's answer read its result
    assert report["ran"] == ["get_weather Paris", "get_time Paris"], report
    assert "get_weather returned" in report["answers"][0], report
    assert "get_time returned" in report["answers"][1], report
    posts = [r for r in fake.requests if r.method == "POST"]
    assert len(posts) == 4, [r.path for r in fake.requests]  # two turns, two steps each
    # turn 1's answer sends its call back; turn 2 sends it twice more and its own call once
    calls = replayed_calls(posts)
    assert calls == ["get_weather"] * 3 + ["get_time"], calls
    # each came back with the signature the fake issued for it: none bare, none dummy
    assert (fake.placeholder_signatures, fake.lost_signatures) == (0, 0)
    assert fake.signature_problems == []
