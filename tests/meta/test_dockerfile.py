"""The container recipe (``Dockerfile``, ``.dockerignore``): read, run here, and built.

The checks a reviewer makes run everywhere: the image installs the ``server`` extra and
no dev tools, runs as a user other than root, and its ``ENTRYPOINT`` is ``rxgem serve``
bound to ``0.0.0.0`` on the port it exposes; its ``HEALTHCHECK`` asks ``/healthz`` with
Python's ``urllib`` (a slim image has no curl), and that command works against a live
server. The image itself is built and run only where a Docker engine answers
(``docker info``); elsewhere that test skips and says so.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from server_harness import HELLO, KEY, MODEL, TOKEN, expected_content, sdk, serving, settings_for

from rxgem import samples
from rxgem.cli.serve import add_serve_parser
from rxgem.server import ENV
from rxgem.testing import FakeGemini

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
DEV_TOOLS = (
    "[dev]",
    "pytest",
    "ruff",
    "mypy",
    "hypothesis",
    "playwright",
    "gcc",
    "build-essential",
)
SECRETS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", ENV["api_key"], ENV["access_token"])


# --------------------------------------------------------------------------- reading it


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, RUN, ...
    text: str  # the rest of the line, continuations joined, ARG values put in

    @property
    def exec_form(self) -> list[str]:
        """The JSON array of an exec-form ENTRYPOINT, CMD or HEALTHCHECK ... CMD."""
        value = json.loads(self.text[self.text.index("[") :])
        assert isinstance(value, list), self
        assert all(isinstance(v, str) for v in value), self
        return value


def _instructions(path: Path = DOCKERFILE) -> list[Instruction]:
    """Comments dropped, ``\\`` continuations joined, ``${ARG}`` from the ARG defaults."""
    lines: list[str] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8").splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    assert not pending, "the Dockerfile ends inside a continuation"
    args: dict[str, str] = {}
    instructions = []
    for line in lines:
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "ARG" and "=" in rest:
            name, _, default = rest.strip().partition("=")
            args[name] = default
        if keyword == "FROM":  # other instructions keep their ${...} for the shell
            rest = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m[1], m[0]), rest)
        instructions.append(Instruction(keyword, rest.strip()))
    return instructions


def _final_stage() -> list[Instruction]:
    instructions = _instructions()
    starts = [i for i, instruction in enumerate(instructions) if instruction.keyword == "FROM"]
    assert starts, "the Dockerfile has no FROM"
    return instructions[starts[-1] :]


def _one(stage: list[Instruction], keyword: str) -> Instruction:
    found = [i for i in stage if i.keyword == keyword]
    assert len(found) == 1, f"the image should have one {keyword}, not {len(found)}"
    return found[0]


def _serve_args() -> argparse.Namespace:
    """ENTRYPOINT and CMD as the image runs them, parsed by ``rxgem serve``'s own parser."""
    stage = _final_stage()
    command = _one(stage, "ENTRYPOINT").exec_form
    cmd = [i for i in stage if i.keyword == "CMD"]
    command += cmd[-1].exec_form if cmd else []
    assert command[:2] == ["rxgem", "serve"], command
    parser = argparse.ArgumentParser(prog="rxgem")
    add_serve_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(command[1:])


def _healthcheck_command() -> list[str]:
    check = _one(_final_stage(), "HEALTHCHECK")
    assert " CMD " in f" {check.text} ", check
    return check.exec_form


def _image_env() -> dict[str, str]:
    env: dict[str, str] = {}
    for instruction in _final_stage():
        if instruction.keyword == "ENV":
            for pair in shlex.split(instruction.text):
                name, _, value = pair.partition("=")
                env[name] = value
    return env


# --------------------------------------------------------------------------- what a reviewer checks


def test_the_image_is_a_slim_python_of_a_supported_version() -> None:
    image = _final_stage()[0].text.split()[0]
    found = re.fullmatch(r"python:3\.(\d+)-slim(-\w+)?", image)
    assert found, f"the base should be an official slim Python image, not {image}"
    assert int(found[1]) >= 11  # pyproject.toml: requires-python >= 3.11


def test_it_installs_the_server_extra_and_no_dev_tools() -> None:
    runs = [i.text for i in _final_stage() if i.keyword == "RUN"]
    installs = [run for run in runs if "pip install" in run]
    assert installs, "the image installs nothing with pip"
    assert any("[server]" in run for run in installs), installs
    for run in runs:
        for tool in DEV_TOOLS:
            assert tool not in run, f"the image's RUN brings a dev tool ({tool}): {run}"


def test_it_runs_as_a_user_other_than_root() -> None:
    stage = _final_stage()
    users = [i for i in stage if i.keyword == "USER"]
    assert users, "no USER: the server would run as root"
    user = users[-1].text.split(":")[0]
    assert user not in ("root", "0"), users[-1]
    after = stage[stage.index(users[-1]) :]
    assert not any(i.keyword == "RUN" for i in after)  # nothing runs as root after it
    creates = " ".join(i.text for i in stage if i.keyword == "RUN")
    assert re.search(rf"useradd\b.*(--uid {user}\b|\b{user}$)", creates), "USER is never created"


def test_the_entrypoint_is_rxgem_serve_on_every_interface_at_the_exposed_port() -> None:
    stage = _final_stage()
    assert _one(stage, "ENTRYPOINT").exec_form == ["rxgem", "serve", "--host", "0.0.0.0"]
    args = _serve_args()
    assert args.host == "0.0.0.0"  # in a container, 127.0.0.1 is unreachable from outside
    assert _one(stage, "EXPOSE").text.split() == [str(args.port)]


def test_the_healthcheck_asks_healthz_with_urllib_on_the_served_port() -> None:
    command = _healthcheck_command()
    assert command[:2] == ["python", "-c"], command  # exec form: no shell, no curl in slim
    assert "urllib.request" in command[2]
    assert not any(tool in " ".join(command) for tool in ("curl", "wget"))
    url = _image_env()["RXGEM_HEALTHCHECK_URL"]
    assert url == f"http://127.0.0.1:{_serve_args().port}/healthz"


def test_no_secret_is_baked_into_the_image() -> None:
    for instruction in _instructions():
        if instruction.keyword in ("ENV", "ARG"):
            for secret in (*SECRETS, ENV["client_tokens"]):
                assert secret not in instruction.text, instruction


def test_the_build_context_has_what_the_dockerfile_copies_and_no_local_state() -> None:
    ignored = [
        line.strip()
        for line in DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]

    def is_ignored(path: str) -> bool:
        patterns = [p.removeprefix("**/") for p in ignored]
        parts = Path(path).parts
        return any(
            fnmatch.fnmatch(path, p) or any(fnmatch.fnmatch(part, p) for part in parts)
            for p in patterns
        )

    for local in (".venv", ".git", "build", "dist", ".pytest_cache", ".mypy_cache"):
        assert is_ignored(local), f".dockerignore should leave out {local}"
    assert is_ignored("rxgem/core/sse/_decoder.cpython-311-x86_64-linux-gnu.so")  # a local build
    copied = [
        source
        for i in _instructions()
        if i.keyword == "COPY" and "--from=" not in i.text
        for source in i.text.split()[:-1]
    ]
    assert {"pyproject.toml", "setup.py", "README.md", "rxgem"} <= set(copied)
    for source in copied:
        assert (ROOT / source).exists(), source
        assert not is_ignored(source), f"{source} is copied but .dockerignore leaves it out"


# --------------------------------------------------------------------------- run here


def test_the_healthcheck_command_passes_against_a_live_server_and_fails_without_one() -> None:
    command = [sys.executable, *_healthcheck_command()[1:]]  # the image's `python`
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        env = {**os.environ, "RXGEM_HEALTHCHECK_URL": f"{url}/healthz"}
        healthy = subprocess.run(command, env=env, capture_output=True, timeout=20, check=False)
    assert healthy.returncode == 0, healthy.stderr
    gone = subprocess.run(command, env=env, capture_output=True, timeout=20, check=False)
    assert gone.returncode != 0  # the server stopped: refused, so unhealthy


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _wait_healthy(url: str, alive: Callable[[], bool], seconds: float = 20) -> None:
    """Poll ``/healthz`` until 200; ``alive()`` false or the deadline fails the test."""
    deadline = time.monotonic() + seconds
    while True:
        assert alive(), "the server stopped"
        assert time.monotonic() < deadline, "the server did not answer /healthz in time"
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        time.sleep(0.1)


def test_the_image_command_serves_with_configuration_from_the_environment_only() -> None:
    # What the container does, run from this checkout's venv: the ENTRYPOINT's argv
    # and the environment variables the Dockerfile documents, nothing else.
    rxgem = shutil.which("rxgem", path=str(Path(sys.executable).parent)) or shutil.which("rxgem")
    if rxgem is None:
        pytest.skip("no rxgem command on PATH (install the package: pip install -e '.[dev]')")
    port = _free_port()
    entrypoint = _one(_final_stage(), "ENTRYPOINT").exec_form
    env = {k: v for k, v in os.environ.items() if not k.startswith("RXGEM_")}
    with FakeGemini(samples.read("text")) as fake:
        env |= {
            "GEMINI_API_KEY": KEY,
            ENV["client_tokens"]: TOKEN,
            ENV["upstream"]: fake.base_url,
        }
        process = subprocess.Popen(
            [rxgem, *entrypoint[1:], "--port", str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, lambda: process.poll() is None)
            with sdk(url) as client:
                completion = client.chat.completions.create(model=MODEL, messages=HELLO)
            refused = httpx.post(f"{url}/v1/chat/completions", json={"model": MODEL})
        finally:
            process.send_signal(signal.SIGTERM)
            out, err = process.communicate(timeout=30)
        received = fake.requests
    assert completion.choices[0].message.content == expected_content("text.sse")
    assert refused.status_code == 401  # the client token came from RXGEM_CLIENT_TOKENS
    assert [r.headers["x-goog-api-key"] for r in received] == [KEY]
    assert process.returncode == 0, err
    assert KEY not in out + err
    assert TOKEN not in out + err


# --------------------------------------------------------------------------- built and run


def _docker_engine() -> str | None:
    """Why the image cannot be built here, or None when a Docker engine answers."""
    if shutil.which("docker") is None:
        return "no docker command"
    try:
        info = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return "`docker info` did not answer within 5 s"
    if info.returncode != 0:
        last = (info.stderr.strip().splitlines() or ["no message"])[-1]
        return f"no Docker engine answers `docker info` ({last})"
    return None


def _docker(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["docker", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    why = _docker_engine()
    if why:
        pytest.skip(f"the image is built only where a Docker engine runs: {why}")
    tag = f"rxgem-test:{uuid.uuid4().hex[:12]}"
    built = _docker("build", "--tag", tag, str(ROOT), timeout=900)
    assert built.returncode == 0, built.stderr[-4000:]
    try:
        yield tag
    finally:
        _docker("image", "rm", "--force", tag)


@pytest.mark.timeout(1200)
def test_the_built_image_serves_a_completion_and_reports_healthy(image: str) -> None:
    port = _free_port()  # --network host: the container binds it on this machine
    name = f"rxgem-test-{uuid.uuid4().hex[:12]}"
    url = f"http://127.0.0.1:{port}"
    with FakeGemini(samples.read("text")) as fake:
        # The FakeGemini listens on this machine's 127.0.0.1: with the host's network
        # the container reaches it (and the test reaches the container) there.
        run = _docker(
            "run",
            "--detach",
            "--name",
            name,
            "--network",
            "host",
            "--env",
            f"GEMINI_API_KEY={KEY}",
            "--env",
            f"{ENV['client_tokens']}={TOKEN}",
            "--env",
            f"{ENV['upstream']}={fake.base_url}",
            "--env",
            f"RXGEM_HEALTHCHECK_URL={url}/healthz",
            "--health-interval",
            "1s",
            "--health-start-period",
            "1s",
            image,
            "--port",
            str(port),
        )
        assert run.returncode == 0, run.stderr
        try:

            def running() -> bool:
                state = _docker("inspect", "--format", "{{.State.Running}}", name)
                return state.stdout.strip() == "true"

            _wait_healthy(url, running, seconds=60)
            with sdk(url) as client:
                completion = client.chat.completions.create(model=MODEL, messages=HELLO)
            health = ""
            deadline = time.monotonic() + 30
            while health != "healthy" and time.monotonic() < deadline:
                time.sleep(0.5)
                health = _docker(
                    "inspect", "--format", "{{.State.Health.Status}}", name
                ).stdout.strip()
            uid = _docker("exec", name, "id", "-u").stdout.strip()
        finally:
            logs = _docker("logs", name)
            _docker("rm", "--force", name)
        received = fake.requests
    assert completion.choices[0].message.content == expected_content("text.sse"), logs.stderr
    assert [r.headers["x-goog-api-key"] for r in received] == [KEY]
    assert health == "healthy", logs.stderr
    assert uid not in ("", "0"), uid
    assert KEY not in logs.stdout + logs.stderr
