"""``rxgem serve --inspect`` as users run it: several worker processes, one page.

The server is started as a user starts it (a real ``rxgem serve`` process on 127.0.0.1,
with its default worker count, and with two workers forced); requests go on fresh
connections until two workers answered; then every page, feed and download, whichever
worker answers it, shows every exchange, and a session set by one worker is good in
every other. The spool the workers share is private and gone once the server exits.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from server_harness import HELLO, MODEL, TOKEN, serve_process

from rxgem.cli.serve import cpu_count

AUTH = {"authorization": f"Bearer {TOKEN}"}
ATTEMPTS = 60


def _fresh(method: str, url: str, cookies: Any = None, **options: Any) -> httpx.Response:
    """One request on its own connection (so the kernel may hand it to any worker)."""
    with httpx.Client(timeout=30, cookies=cookies) as client:
        return client.request(method, url, **options)


def _summaries(url: str, cookies: Any = None, **options: Any) -> list[dict[str, Any]]:
    """The exchange summaries of a feed's first message (whichever worker answers it)."""
    with (
        httpx.Client(timeout=30, cookies=cookies) as client,
        client.stream("GET", f"{url}/inspect/events", **options) as r,
    ):
        assert r.status_code == 200
        found: list[dict[str, Any]] = []
        event = "message"
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "message":
                found.append(json.loads(line[6:]))
            elif line.startswith("data: ") and event == "keep":
                return found  # the first message ends with the list of kept exchanges
            elif not line:
                event = "message"
    return found


def _chat(url: str) -> int:
    body = {"model": MODEL, "messages": HELLO, "stream": True}
    return _fresh("POST", f"{url}/v1/chat/completions", json=body, headers=AUTH).status_code


def until_workers_answered(url: str, workers: int) -> list[dict[str, Any]]:
    """Chat requests, four at once, until ``workers`` workers answered some; the feed."""
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(ATTEMPTS // 4):
            assert list(pool.map(lambda _: _chat(url), range(4))) == [200] * 4
            summaries = _summaries(url, headers=AUTH)
            if len({s["worker"] for s in summaries}) >= workers:
                return summaries
    raise AssertionError(f"{workers} workers never all answered in {ATTEMPTS} requests")


@pytest.mark.parametrize("workers", [None, 2], ids=["default-workers", "two-workers"])
def test_every_worker_shows_every_exchange(workers: int | None, tmp_path: Path) -> None:
    argv = ["--fake", "--inspect", "--client-token", TOKEN, "--inspect-requests", "50"]
    if workers is not None:
        argv += ["--workers", str(workers)]
    expected = cpu_count() if workers is None else workers
    with serve_process(*argv, env={"TMPDIR": str(tmp_path)}) as (url, _):
        summaries = until_workers_answered(url, expected)
        ids = sorted(s["id"] for s in summaries)
        assert len(ids) == len(set(ids))  # numbered across workers, never twice
        feeds = [sorted(s["id"] for s in _summaries(url, headers=AUTH)) for _ in range(8)]
        downloads = [
            _fresh("GET", f"{url}/inspect/exchanges/{s['id']}.json", headers=AUTH)
            for s in summaries
            for _ in range(3)
        ]
        diagrams = [
            _fresh("GET", f"{url}/inspect/exchanges/{s['id']}.svg", headers=AUTH)
            for s in summaries[:4]
            for _ in range(3)
        ]
        login = _fresh("GET", f"{url}/inspect?token={TOKEN}")
        session = {"rxgem_inspect": login.cookies["rxgem_inspect"]}
        pages = [_fresh("GET", f"{url}/inspect", cookies=session) for _ in range(8)]
        by_session = _summaries(url, cookies=session)
        [spool] = list(tmp_path.glob("rxgem-inspect-*"))
        mode = os.stat(spool).st_mode & 0o777
    assert feeds == [ids] * 8
    assert [r.status_code for r in downloads] == [200] * len(downloads)
    by_id = {s["id"]: s for s in summaries}
    for r in downloads:
        inspected = r.json()["inspector"]
        number = int(r.headers["content-disposition"].split("-")[-1].split(".")[0])
        assert inspected["request_id"] == by_id[number]["request_id"]
        assert TOKEN not in r.text
    assert [r.status_code for r in diagrams] == [200] * len(diagrams)
    assert all(r.text.startswith("<svg") for r in diagrams)
    assert TOKEN not in login.headers["set-cookie"]
    assert [r.status_code for r in pages] == [200] * 8
    assert sorted(s["id"] for s in by_session) == ids
    assert mode == 0o700
    assert list(tmp_path.glob("rxgem-inspect-*")) == []  # removed at exit


def test_a_spool_others_can_read_is_refused(tmp_path: Path) -> None:
    from rxgem.server import ServerSettings, create_app
    from rxgem.server.settings._settings import SettingsError

    shared = tmp_path / "spool"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    settings = ServerSettings(api_key="k" * 20, inspect=True, inspect_spool=str(shared))
    with pytest.raises(SettingsError, match="chmod 700"):
        create_app(settings)
    shared.chmod(0o700)
    assert create_app(settings).state.inspector.spool.path == str(shared)


def test_the_spool_goes_through_the_workers_environment() -> None:
    from rxgem.server import ServerSettings, settings_from_env

    settings = ServerSettings(api_key="k" * 20, inspect=True, inspect_spool="/run/x")
    assert settings_from_env(settings.to_env()).inspect_spool == "/run/x"


def test_serve_refuses_a_spool_others_can_read_in_one_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    from server_harness import SERVE, free_port

    shared = tmp_path / "spool"
    shared.mkdir()
    shared.chmod(0o755)
    argv = ["--fake", "--inspect", "--inspect-spool", str(shared), "--workers", "2"]
    done = subprocess.run(
        [sys.executable, "-c", SERVE, "--port", str(free_port()), *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    [line] = [line for line in done.stderr.splitlines() if "error" in line]
    assert "chmod 700" in line
    assert "Traceback" not in done.stderr
