"""The README and every page of docs/ work as written, each block on its own.

Every ```python block runs alone, in a fresh namespace, as it would pasted into a fresh
interpreter. Blocks preceded by ``<!-- not-run: … -->`` need a Gemini key, the network or a
running server: they are compiled (so they at least stay valid Python) but not run.

Every ```sh block calls the project's interpreter and tools by their ``.venv/bin/`` path (a
bare ``python`` or ``pip`` may be another one). Those that no marker comment precedes run
offline, from the checkout. The marked ones are run elsewhere: ``setup-command`` and
``test-command`` by ``.ci/run``, ``curl-example`` and ``fake-server-python`` against
``serve-fake-command`` here (curl also against a test server by tests/server/test_server.py),
``not-run: …`` never.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"(?:<!-- ([^>]*?) -->\n)?```(\w*)\n(.*?)```", re.DOTALL)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
BARE = re.compile(r"(?<![\w/.-])(python|pip)(?= )", re.MULTILINE)
RUN_ELSEWHERE = {
    *("setup-command", "test-command", "curl-example", "serve-fake-command"),
    "fake-server-python",
}


def blocks(page: Path, language: str) -> list[tuple[str | None, str]]:
    """The (marker, code) of each fenced block of ``language`` on ``page``, in order."""
    text = page.read_text(encoding="utf-8")
    return [(marker, code) for marker, lang, code in BLOCK.findall(text) if lang == language]


def named(page: Path) -> str:
    return str(page.relative_to(ROOT))


def runnable(marker: str | None) -> bool:
    return not marker


PYTHON = [
    pytest.param(page, index, code, id=f"{named(page)}:{index}")
    for page in PAGES
    for index, (marker, code) in enumerate(blocks(page, "python"))
    if runnable(marker)
]
SHELL = [
    pytest.param(page, index, code, id=f"{named(page)}:{index}")
    for page in PAGES
    for index, (marker, code) in enumerate(blocks(page, "sh"))
    if runnable(marker)
]


def test_there_are_docs_pages_and_blocks_to_run() -> None:
    assert {p.name for p in PAGES} >= {
        *("README.md", "index.md", "operators.md", "mapping.md", "requests.md"),
        *("errors.md", "testing.md", "server.md", "cli.md", "performance.md", "streams.md"),
    }
    assert len(PYTHON) >= 10
    assert len(SHELL) >= 2


def test_the_readme_is_a_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for page in PAGES[1:]:
        assert f"(docs/{page.name})" in text or page.name == "index.md", page.name


@pytest.mark.parametrize(("page", "index", "code"), PYTHON)
def test_python_block_runs_alone(page: Path, index: int, code: str) -> None:
    namespace: dict[str, object] = {"__name__": f"block_{index}"}
    exec(compile(code, f"{named(page)} python block {index}", "exec"), namespace)


def test_not_run_python_blocks_still_compile() -> None:
    skipped = [(page, code) for page in PAGES for marker, code in blocks(page, "python") if marker]
    assert skipped
    for page, code in skipped:
        compile(code, named(page), "exec")


@pytest.mark.parametrize("page", PAGES, ids=named)
def test_shell_blocks_use_the_venv_tools(page: Path) -> None:
    for _, code in blocks(page, "sh"):
        found = BARE.search(code)
        assert not found, f"{named(page)}: use .venv/bin/{found[1] if found else ''}:\n{code}"


@pytest.mark.parametrize(("page", "index", "code"), SHELL)
def test_shell_block_runs_offline(page: Path, index: int, code: str) -> None:
    env = {**os.environ, "GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"{named(page)} sh block {index}:\n{code}\n{result.stderr}"
    assert result.stdout


@pytest.mark.parametrize("page", PAGES, ids=named)
def test_relative_links_point_at_files_that_exist(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    for match in LINK.finditer(text):
        target = (match.group(1) or match.group(2)).split("#", 1)[0]
        if re.match(r"[a-z]+:", target):
            continue
        path = page.parent / target if target else page
        assert path.exists(), f"{named(page)}: broken link {target}"
        anchor = (match.group(1) or match.group(2)).partition("#")[2]
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{named(page)}: no heading #{anchor} in {target}"


def anchors(page: Path) -> set[str]:
    """The ids GitHub gives the headings of ``page``."""
    headings = re.findall(r"^#+ (.*)$", page.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_block_marker_is_known() -> None:
    for page in PAGES:
        for marker, _ in [*blocks(page, "python"), *blocks(page, "sh")]:
            if marker:
                assert marker in RUN_ELSEWHERE or marker.startswith("not-run: "), marker


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.timeout(120)
def test_the_readme_server_without_a_key_answers_the_curl_example() -> None:
    (serve,) = [code for marker, code in blocks(README, "sh") if marker == "serve-fake-command"]
    (curl,) = [code for marker, code in blocks(README, "sh") if marker == "curl-example"]
    (sdk,) = [code for marker, code in blocks(README, "python") if marker == "fake-server-python"]
    port = free_port()
    env = {**os.environ, "GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}
    command = f"exec {serve.strip()} --workers 1 --port {port}"
    server = subprocess.Popen(
        ["bash", "-c", command],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "rxgem serve --fake did not start"
            time.sleep(0.1)
        result = subprocess.run(
            ["bash", "-c", curl.replace("http://127.0.0.1:8000", url)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        python = subprocess.run(
            [sys.executable, "-c", sdk.replace("http://127.0.0.1:8000", url)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    assert result.returncode == 0, result.stderr
    frames = [line for line in result.stdout.splitlines() if line.startswith("data: ")]
    assert len(frames) > 1
    assert frames[-1] == "data: [DONE]"
    assert python.returncode == 0, python.stderr
    # the block ends with what it prints, as comments
    shown = [line[2:] for line in sdk.splitlines() if line.startswith("# ")]
    assert python.stdout.splitlines() == shown
    assert shown[0] == 'call: get_weather {"city":"Paris"}'  # a city, not {"city":"city"}


def test_python_blocks_run_in_a_fresh_interpreter_too() -> None:
    """The README's quick start, each block in its own process, from the checkout."""
    for index, (marker, code) in enumerate(blocks(README, "python")):
        if runnable(marker):
            result = subprocess.run(
                [sys.executable, "-c", code],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert result.returncode == 0, f"README python block {index}:\n{result.stderr}"
