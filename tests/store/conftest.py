"""The stores under test: each contract test runs on SQLite and on a real Redis.

Redis runs as a ``redis-server`` on 127.0.0.1 (a free port, no persistence) started
once per session; without the binary or the ``redis`` package those tests skip,
saying which is missing (``.ci/run`` installs ``redis-server``).
"""

from __future__ import annotations

import itertools
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rxgem.store import ResponseStore, SQLiteStore

StoreFactory = Callable[..., ResponseStore]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server; .ci/run does)")
    try:
        import redis
    except ImportError:
        pytest.skip("the redis package is not installed (pip install 'rxgem[server]')")
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    command = [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", ""]
    command += ["--appendonly", "no", "--dir", str(folder)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    try:
        deadline = time.monotonic() + 15
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                if client.ping():
                    break
            except redis.ConnectionError:
                pass
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=15)


_PREFIXES = itertools.count()


@pytest.fixture(params=["sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Makes stores of one backend that share their data within the test: a SQLite
    file in ``tmp_path``, or a key prefix of the test's own on the session's Redis."""
    if request.param == "sqlite":

        def sqlite(**options: Any) -> ResponseStore:
            return SQLiteStore(tmp_path / "responses.sqlite3", **options)

        return sqlite
    url = request.getfixturevalue("redis_url")
    prefix = f"rxgem:test{next(_PREFIXES)}:"

    def redis(**options: Any) -> ResponseStore:
        from rxgem.store import RedisStore

        return RedisStore(url, prefix=prefix, **options)

    return redis
