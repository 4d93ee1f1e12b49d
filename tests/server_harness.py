"""The harness of the ``rxgem serve`` tests: the app in real uvicorn on 127.0.0.1.

``serving(settings)`` runs the app in a background thread with the same uvicorn
configuration ``rxgem serve`` uses (:func:`rxgem.server.run._runner.uvicorn_config`), on an
ephemeral port; ``gateway(...)`` puts it in front of a FakeGemini with an SDK client.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import uvicorn

from rxgem import samples
from rxgem.server import ServerSettings, create_app
from rxgem.server.run._runner import uvicorn_config
from rxgem.testing import FakeGemini, FakeResponse

KEY = "AIza-SERVER-KEY-4f1e9b"  # recognisable: must never be written anywhere
TOKEN = "tok-CLIENT-7c2d81"
MODEL = "gemini-2.5-flash"
HELLO: Any = [{"role": "user", "content": "Say good morning."}]
EXPECTED = samples.expected()

QUOTA_PER_MINUTE: dict[str, Any] = {
    "code": 429,
    "message": "You exceeded your current quota, please check your plan.",
    "status": "RESOURCE_EXHAUSTED",
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}],
        },
        {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34.4s"},
    ],
}
QUOTA_PER_DAY: dict[str, Any] = {
    **QUOTA_PER_MINUTE,
    "details": [
        {
            "@type": "type.googleapis.com/google.rpc.QuotaFailure",
            "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier"}],
        }
    ],
}


# --------------------------------------------------------------------------- harness


@contextlib.contextmanager
def serving(settings: ServerSettings, **app_options: Any) -> Iterator[str]:
    """The app in real uvicorn on 127.0.0.1 (an ephemeral port); yields its root URL.

    ``app_options`` go to :func:`~rxgem.server.create_app` (``telemetry=``)."""
    app = create_app(settings, **app_options)
    config = uvicorn_config(
        app, settings, host="127.0.0.1", port=0, log_config=None, timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive(), "uvicorn did not start"
        assert time.monotonic() < deadline, "uvicorn did not start in time"
        time.sleep(0.005)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive()
    assert not app.state.gateway.is_open  # the shared httpx client was closed


@contextlib.contextmanager
def gateway(
    *responses: FakeResponse | bytes, **overrides: Any
) -> Iterator[tuple[FakeGemini, str, openai.OpenAI]]:
    """FakeGemini, the server in front of it, and a sync SDK client of the server."""
    with (
        FakeGemini(*responses) as fake,
        serving(settings_for(fake, **overrides)) as url,
        sdk(url) as client,
    ):
        yield fake, url, client


def settings_for(fake: FakeGemini | str, **overrides: Any) -> ServerSettings:
    upstream = fake if isinstance(fake, str) else fake.base_url
    values: dict[str, Any] = {"upstream": upstream, "api_key": KEY, "client_tokens": (TOKEN,)}
    return ServerSettings(**{**values, **overrides})


def sdk(url: str, api_key: str = TOKEN, **options: Any) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=api_key, max_retries=0, **options)


def async_sdk(url: str, api_key: str = TOKEN) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{url}/v1", api_key=api_key, max_retries=0)


def expected_content(name: str, choice: int = 0) -> str:
    content: str = EXPECTED[name]["choices"][choice]["content"]
    return content


def strict_tool(name: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": v} for k, v in properties.items()},
                "required": list(properties),
                "additionalProperties": False,
            },
            "strict": True,
        },
    }


def event_ends(body: bytes) -> list[int]:
    """The offsets just after each SSE event (for ``split_at``)."""
    return [m.end() for m in re.finditer(rb"\r?\n\r?\n", body)]


SERVE = "import sys\nfrom rxgem.cli import main\nsys.exit(main(['serve', *sys.argv[1:]]))\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def serve_process(
    *argv: str,
    env: dict[str, str] | None = None,
    preexec_fn: Any = None,
    timeout: float = 30,
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """``rxgem serve ARGV`` in its own process on a free port, until it answers
    ``/healthz``; yields its URL and the process (stderr piped), stopped at the end."""
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RXGEM_")}
    environment.update(env or {})
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, "--port", str(port), *argv],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec_fn,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise AssertionError(f"rxgem serve exited: {process.communicate()[1]}")
            assert time.monotonic() < deadline, "rxgem serve did not start"
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            time.sleep(0.05)
        yield url, process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()
