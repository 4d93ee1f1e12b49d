"""The upstream clients against a plain HTTP/1.1 upstream: Python's ``http.server``, which
leaves Nagle's algorithm on and writes a response's head and body in two writes.

Its second write waits in its kernel until the client acknowledges the first, and a
client whose connection is in its request/response rhythm delays that ACK (40 ms on
Linux): each answer's first chunk came ~44 ms late through the default client.
FakeGemini sets ``TCP_NODELAY`` on its connections, so a test against it cannot show this.
The Interactions upstream goes through the same pools, so it is held to the same bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import statistics
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from server_harness import MODEL, TOKEN, serving, settings_for

from rxgem import samples
from rxgem.server._upstream import server_gateway
from rxgem.testing import FakeGemini, FakeInteraction, text_step

ANSWER = samples.read("text.sse")
ROUNDS = 15
BOUND_MS = 20.0
"""Far below the 40 ms of a delayed ACK, far above a loopback answer on a busy machine."""


def _interactions_answer() -> bytes:
    """An Interactions stream of a short text answer, as FakeGemini streams it."""
    steps = (text_step("Hello from a plain upstream, in five pieces.", pieces=5),)
    with FakeGemini(interactions=[FakeInteraction(steps=steps)]) as fake:
        body = {"model": MODEL, "input": "Hi.", "stream": True}
        answer = httpx.post(f"{fake.base_url}/interactions", json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.content


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    framing = "length"
    interactions = b""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answer = self.interactions if self.path.endswith("/interactions") else ANSWER
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if self.framing == "length":
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            return
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in answer.split(b"\n\n"):
            if event.strip():
                piece = event + b"\n\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")


@contextlib.contextmanager
def plain_upstream(framing: str, interactions: bytes = b"", *, nagle: bool = True) -> Iterator[str]:
    """``http.server`` on 127.0.0.1 answering every POST with ``text.sse`` (a POST to
    ``/interactions`` with ``interactions``), its body with a ``Content-Length`` in one
    write or chunked an event per write, Nagle's algorithm on unless ``nagle`` is false;
    yields its v1beta URL."""
    options = {"framing": framing, "interactions": interactions}
    handler = type("Handler", (_Handler,), {**options, "disable_nagle_algorithm": not nagle})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1beta"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _p50_ms(times: list[float]) -> float:
    return statistics.median(times) * 1000


@pytest.mark.parametrize("framing", ["length", "chunked"])
@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
def test_the_upstream_body_follows_its_head_at_once(client: str, framing: str) -> None:
    """Each upstream client the server can take, as the server makes it (one pool:
    the connection is reused at once, as under load), reads the body right after the
    head, not one delayed ACK later."""
    with plain_upstream(framing) as url:
        firsts = asyncio.run(_first_bytes(client, f"{url}/models/{MODEL}:streamGenerateContent"))
    p50 = _p50_ms(firsts[2:])
    assert p50 < BOUND_MS, f"{client}, {framing}: first body bytes p50 {p50:.1f} ms"


async def _first_bytes(client: str, url: str) -> list[float]:
    settings = settings_for("http://unused", upstream_client=client, max_upstream_connections=8)
    upstream = server_gateway(settings).pools
    [pool] = upstream.clients
    firsts = []
    try:
        for _ in range(ROUNDS + 2):
            started = time.perf_counter()
            first = None
            async with pool.stream("POST", url, content=b"{}") as response:
                async for _piece in response.aiter_raw():
                    first = first or time.perf_counter()
            assert first is not None
            firsts.append(first - started)
    finally:
        await upstream.aclose()
    return firsts


@pytest.mark.parametrize("api", ["generate-content", "interactions"])
def test_the_default_server_streams_a_plain_upstream_without_waiting(api: str) -> None:
    """``rxgem serve``'s default settings (on either upstream API) in front of
    ``http.server``: the first content chunk of streamed answers (one client, one after
    another), beside the same server in front of the same ``http.server`` with Nagle's
    algorithm off, which cannot hold the body back. Blocks of requests alternate between
    the two so that both see the same load; what a loaded machine adds to both cancels out,
    and a delayed ACK (40 ms) does not."""
    interactions = _interactions_answer() if api == "interactions" else b""
    firsts: dict[bool, list[float]] = {True: [], False: []}
    with (
        plain_upstream("length", interactions) as plain,
        plain_upstream("length", interactions, nagle=False) as quick,
        serving(settings_for(plain, upstream_api=api)) as plain_url,
        serving(settings_for(quick, upstream_api=api)) as quick_url,
        httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10) as client,
    ):
        for _ in range(3):
            for nagle, url in ((True, plain_url), (False, quick_url)):
                firsts[nagle] += _first_chunks(client, url, 7)[2:]
    plain_p50, quick_p50 = _p50_ms(firsts[True]), _p50_ms(firsts[False])
    assert plain_p50 - quick_p50 < BOUND_MS, (
        f"{api}: first content chunk p50 {plain_p50:.1f} ms, {quick_p50:.1f} ms with Nagle off"
    )


def _first_chunks(client: httpx.Client, url: str, count: int) -> list[float]:
    """The time to the first content chunk of each of ``count`` streamed answers."""
    body = {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "Hi."}]}
    firsts = []
    for _ in range(count):
        started = time.perf_counter()
        first = None
        with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if first is None and '"content":"' in line and '"content":""' not in line:
                    first = time.perf_counter()
        assert first is not None
        firsts.append(first - started)
    return firsts
