"""A real ``redis-server`` on 127.0.0.1 for the tests that need one (the store contract,
servers sharing conversations): the session fixture :func:`redis_url`.

It listens on a free port with no persistence, started once per session; without the
binary or the ``redis`` package the tests that use it skip, saying which is missing
(``.ci/run`` installs ``redis-server``). Import the fixture into a conftest or a test
module: ``from redis_server import redis_url``.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest


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
