"""A new upstream is a folder of ``rxgem/upstreams`` and one entry of the registry.

The proof: a copy of the package with a toy upstream added that way and nothing else (its
folder, and its import and entry in ``_registry.py``), run in a process of its own. The toy
answers ``generateContent`` on the Gemini API (an existing stream format: the core's reader
and the transport's exchange serve it) under its own name, ``toy``, and marks each request
it sends (``x-toy``), so what answered is seen at the fake Gemini. Every place that takes an
upstream's name takes it with no other change: the registry, the client's and the pipeline's
``upstream`` option, the server's settings (and their environment), ``rxgem serve
--upstream-api``, the in-process transport (``OpenAITransport(upstream="toy")``) and the
gateway under both, and a real server answering chat and Responses through it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TOY = '''\
"""A toy upstream: ``generateContent`` on the Gemini API, each request marked ``x-toy``."""

from collections.abc import Mapping
from typing import Any, Final

from reactivex import Observable

from .._generate_content import GenerateContent


class Toy(GenerateContent):
    def source(self, request: Mapping[str, Any], model: str, **transport: Any) -> Observable[bytes]:
        headers = {**(transport.pop("headers", None) or {}), "x-toy": "1"}
        return super().source(request, model, headers=headers, **transport)


TOY: Final = Toy("toy", "gemini", "toy.provider", "api_key")
'''

CHECK = """
import argparse, json, sys, threading, time

import httpx
import uvicorn

import rxgem
from rxgem.cli.serve import add_serve_parser
from rxgem.server import ENV, UPSTREAM_APIS, ServerSettings, create_app, settings_from_env
from rxgem.server.run._runner import uvicorn_config
from rxgem.testing import FakeGemini
from rxgem.upstreams import upstream_of

found = {"home": rxgem.__file__}
CHAT = {"model": "gemini-2.5-flash", "messages": [{"role": "user", "content": "Hi"}]}
RESPONSES = {"model": "gemini-2.5-flash", "input": "Hi"}

toy = upstream_of("toy")
found["registry"] = [toy.name, toy.provider, toy.reader.name]
found["settings"] = list(UPSTREAM_APIS)
found["env"] = settings_from_env(
    {ENV["api_key"]: "k", ENV["upstream_api"]: "toy"}
).chosen_upstream.name
parser = argparse.ArgumentParser()
add_serve_parser(parser.add_subparsers())
found["cli"] = parser.parse_args(["serve", "--upstream-api", "toy"]).upstream_api

with FakeGemini() as fake:
    def marked():
        return sum(r.headers.get("x-toy") == "1" for r in fake.requests)

    answer = list(rxgem.iterate(rxgem.chat_completions(
        CHAT, api_key="k", base_url=fake.base_url, upstream="toy"
    )))
    found["client"] = [answer[0].object, marked()]

    transport = rxgem.OpenAITransport(upstream="toy", api_key="k", base_url=fake.base_url)
    with httpx.Client(transport=transport, base_url="http://rxgem.local") as client:
        chat = client.post("/v1/chat/completions", json=CHAT).json()
        responses = client.post("/v1/responses", json=RESPONSES).json()
    found["inprocess"] = [chat["object"], responses["object"], marked()]

    settings = ServerSettings(api_key="k", upstream=fake.base_url, upstream_api="toy")
    app = create_app(settings)
    config = uvicorn_config(
        app, settings, host="127.0.0.1", port=0, log_config=None, timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        chat = client.post("/v1/chat/completions", json=CHAT).json()
        responses = client.post("/v1/responses", json=RESPONSES).json()
    server.should_exit = True
    thread.join(10)
    found["server"] = [chat["object"], responses["object"], marked()]

print(json.dumps(found))
"""


def _package_with_the_toy(where: Path) -> Path:
    """A copy of ``rxgem`` with the toy upstream added: a folder and a registry entry."""
    package = where / "rxgem"
    shutil.copytree(
        ROOT / "rxgem", package, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.c")
    )
    (package / "upstreams" / "toy").mkdir()
    (package / "upstreams" / "toy" / "__init__.py").write_text(TOY, encoding="utf-8")
    registry = package / "upstreams" / "_registry.py"
    text = registry.read_text(encoding="utf-8")
    imports = "from .interactions import INTERACTIONS\n"
    entries = "    INTERACTIONS,\n)"
    for old, new in [
        (imports, imports + "from .toy import TOY\n"),
        (entries, entries.replace(")", "    TOY,\n)")),
    ]:
        assert text.count(old) == 1, f"the registry no longer reads {old!r}"
        text = text.replace(old, new)
    registry.write_text(text, encoding="utf-8")
    return package


def test_a_new_upstream_is_a_folder_and_a_registry_entry(tmp_path: Path) -> None:
    package = _package_with_the_toy(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(CHECK)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found.pop("home").startswith(str(package))  # the copy, not the checkout
    assert found == {
        "registry": ["toy", "toy.provider", "generate-content"],
        "settings": ["generate-content", "interactions", "toy"],
        "env": "toy",
        "cli": "toy",
        "client": ["chat.completion", 1],
        "inprocess": ["chat.completion", "response", 3],
        "server": ["chat.completion", "response", 5],
    }
