"""``rxgem serve`` probed as an attacker would: slow and idle clients, short bodies, big
heads, descriptor exhaustion, memory-amplifying and deeply nested bodies, floods.

Each probe is one a security review ran from outside the project; each failed before
the server had request deadlines, a connection cap, body bounds and an admission
limit. Servers are real (uvicorn on 127.0.0.1, in a thread or in their own process).
"""

from __future__ import annotations

import contextlib
import json
import logging
import resource
import socket
import time
from typing import Any

import httpx
import pytest
from server_harness import (
    HELLO,
    KEY,
    MODEL,
    TOKEN,
    event_ends,
    expected_content,
    sdk,
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse, event, finish, text, usage

AUTH = f"Authorization: Bearer {TOKEN}\r\n".encode()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed ``sock`` within ``seconds``; and what it sent."""
    sock.settimeout(0.05)
    received = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            data = sock.recv(65536)
        except TimeoutError:
            continue
        except ConnectionResetError:
            return True, received
        if not data:
            return True, received
        received += data
    return False, received


def _post_head(length: int) -> bytes:
    return (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + AUTH + b"Content-Type: "
        b"application/json\r\nContent-Length: %d\r\n\r\n" % length
    )


# --------------------------------------------------------------------------- slow clients


def test_an_idle_connection_is_closed_after_the_head_timeout() -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, head_timeout=0.5)) as url,
        socket.create_connection(("127.0.0.1", _port(url))) as idle,
    ):
        closed, _ = _closed_within(idle, 3)
    assert closed


def test_a_head_sent_a_byte_at_a_time_is_cut_at_the_head_timeout() -> None:
    head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, head_timeout=0.6)) as url,
        socket.create_connection(("127.0.0.1", _port(url))) as slow,
    ):
        started = time.monotonic()
        cut = None
        for byte in head:
            try:
                slow.sendall(bytes([byte]))
            except OSError:
                cut = time.monotonic() - started
                break
            closed, _ = _closed_within(slow, 0.05)
            if closed:
                cut = time.monotonic() - started
                break
    assert cut is not None
    assert cut < 2.0  # not after the whole (endless) head


def test_the_head_deadline_restarts_for_each_request_on_a_kept_alive_connection() -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, head_timeout=0.5)) as url,
        httpx.Client() as client,
    ):
        for _ in range(3):  # longer together than one head timeout
            assert client.get(f"{url}/healthz").status_code == 200
            time.sleep(0.3)


def test_a_head_larger_than_the_cap_is_refused() -> None:
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, max_head_bytes=4096)) as url,
        socket.create_connection(("127.0.0.1", _port(url))) as big,
    ):
        big.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        sent = 0
        try:
            for _ in range(100):
                big.sendall(b"X-Pad: " + b"a" * 1000 + b"\r\n")
                sent += 1
                time.sleep(0.001)
        except OSError:
            pass  # the server hung up mid-send: the cap at work
        closed, received = _closed_within(big, 2)
    assert closed
    assert sent < 100 or b" 200 " not in received
    assert b" 200 " not in received


def test_a_body_shorter_than_its_length_gets_408_at_the_body_timeout() -> None:
    with FakeGemini() as fake, serving(settings_for(fake, body_timeout=0.5)) as url:
        with socket.create_connection(("127.0.0.1", _port(url))) as short:
            short.sendall(_post_head(1000) + b'{"model": "')
            started = time.monotonic()
            closed, received = _closed_within(short, 5)
            waited = time.monotonic() - started
        assert fake.requests == []
    assert received.startswith(b"HTTP/1.1 408 ")
    assert b"body_timeout" in received
    assert closed
    assert waited < 3


def test_a_client_that_leaves_while_uploading_is_a_499_not_an_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="rxgem.server")
    caplog.set_level(logging.INFO, logger="uvicorn.error")
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        with socket.create_connection(("127.0.0.1", _port(url))) as leaving:
            leaving.sendall(_post_head(100_000) + b'{"model": "' + b"x" * 1000)
            time.sleep(0.2)
        deadline = time.monotonic() + 5
        while " 499 " not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fake.requests == []
    access = [r.getMessage() for r in caplog.records if r.name == "rxgem.server"]
    assert any(line.startswith("POST /v1/chat/completions 499 ") for line in access), access
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# --------------------------------------------------------------------------- descriptors


def _low_descriptor_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (160, 160))


def test_a_flood_of_idle_connections_under_a_descriptor_limit_keeps_the_server_up() -> None:
    """Before: 80 idle sockets made /healthz time out and asyncio wrote 157,639
    'Too many open files' tracebacks in ten seconds."""
    with (
        FakeGemini(samples.read("text")) as fake,
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--head-timeout", "1", "--log-level", "warning",
            env={"RXGEM_API_KEY": KEY},
            preexec_fn=_low_descriptor_limit,
        ) as (url, process),
    ):  # fmt: skip
        port = _port(url)
        with httpx.Client() as kept:  # a connection made before the flood
            assert kept.get(f"{url}/healthz").status_code == 200
            flood = []
            refused = 0
            for _ in range(200):
                try:
                    flood.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                except OSError:
                    refused += 1
            try:
                time.sleep(0.3)
                # beyond the cap, connections get a 503 at once instead of exhausting fds
                busy = 0
                for sock in flood:
                    _, received = _closed_within(sock, 0.01)
                    busy += received.startswith(b"HTTP/1.1 503 ")
                assert busy > 0
                assert kept.get(f"{url}/healthz").status_code == 200
                # the idle ones are closed at the head timeout: new clients get in again
                time.sleep(1.5)
                with sdk(url) as client:
                    answer = client.chat.completions.create(model=MODEL, messages=HELLO)
                assert answer.choices[0].message.content == expected_content("text.sse")
            finally:
                for sock in flood:
                    sock.close()
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert "Too many open files" not in err
    assert len(err.splitlines()) < 50, err[-2000:]


# --------------------------------------------------------------------------- bodies


def _peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_a_body_of_empty_objects_is_refused_within_a_small_multiple_of_its_size() -> None:
    """Before: 31 MB of ``{}`` took the server from 38 to 816 MB before its 400."""
    body = b'{"model": "m", "messages": [' + b"{}," * 10_000_000 + b"{}]}"
    with (
        FakeGemini() as fake,
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            env={"RXGEM_API_KEY": KEY},
        ) as (url, process),
    ):  # fmt: skip
        before = _peak_rss_kb(process.pid)
        response = httpx.post(
            f"{url}/v1/chat/completions",
            content=body,
            headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/json"},
            timeout=60,
        )
        grown_mb = (_peak_rss_kb(process.pid) - before) / 1024
    assert response.status_code == 400
    assert "max_json_values" in response.json()["error"]["message"]
    assert grown_mb < 5 * len(body) / 1e6, grown_mb


def test_json_nested_100000_deep_is_a_400_naming_the_limit() -> None:
    """Before: a 500 and a RecursionError traceback."""
    body = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        response = httpx.post(
            f"{url}/v1/chat/completions",
            content=body,
            headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/json"},
        )
        assert fake.requests == []
    assert response.status_code == 400
    assert "max_json_depth" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("overrides", "body", "needle"),
    [
        ({"max_json_depth": 5}, {"model": MODEL, "messages": [[[[[[1]]]]]]}, "max_json_depth=5"),
        ({"max_json_values": 50}, {"model": MODEL, "messages": list(range(60))}, "50 JSON"),
        ({"max_request_bytes": 100}, {"model": MODEL, "messages": "x" * 200}, "100 bytes"),
    ],
)
def test_the_body_limits_are_settings(overrides: dict[str, Any], body: Any, needle: str) -> None:
    with FakeGemini() as fake, serving(settings_for(fake, **overrides)) as url:
        response = httpx.post(
            f"{url}/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {TOKEN}"},
        )
    assert response.status_code in (400, 413)
    message = response.json()["error"]["message"]
    assert needle.replace("=", " more than ").split()[0] in message or needle in message


def test_100000_one_word_messages_are_answered() -> None:
    """Before: 37.7 s of blocked event loop (the merge of same-role messages was quadratic)."""
    messages = [{"role": "user", "content": "word"}] * 100_000
    body = json.dumps({"model": MODEL, "messages": messages}).encode()  # 3.3 MB
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        started = time.monotonic()
        response = httpx.post(
            f"{url}/v1/chat/completions",
            content=body,
            headers={"authorization": f"Bearer {TOKEN}", "content-type": "application/json"},
            timeout=60,
        )
        took = time.monotonic() - started
        (sent,) = fake.requests
    assert response.json()["choices"][0]["message"]["content"] == expected_content("text.sse")
    assert len(sent.json["contents"]) == 1
    assert len(sent.json["contents"][0]["parts"]) == 100_000
    assert took < 20  # generous: linear work is about a second here


# --------------------------------------------------------------------------- floods


@pytest.fixture
def slow_answers() -> list[FakeResponse]:
    capture = samples.read("text")
    return [FakeResponse(body=capture, split_at=event_ends(capture), pause=0.4) for _ in range(4)]


def test_requests_beyond_the_limit_get_503_with_retry_after(
    slow_answers: list[FakeResponse],
) -> None:
    settings = {"max_concurrent_requests": 2}
    with FakeGemini(*slow_answers) as fake, serving(settings_for(fake, **settings)) as url:
        headers = {"authorization": f"Bearer {TOKEN}"}
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        with (
            httpx.Client(timeout=30) as one,
            httpx.Client(timeout=30) as two,
            one.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers) as a,
            two.stream("POST", f"{url}/v1/chat/completions", json=body, headers=headers) as b,
        ):
            assert (a.status_code, b.status_code) == (200, 200)
            third = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers)
            ready = httpx.get(f"{url}/readyz")
            alive = httpx.get(f"{url}/healthz")
            a.read()
            b.read()
        assert [r.method for r in fake.requests].count("POST") == 2  # and the readiness probe
        after = httpx.post(
            f"{url}/v1/chat/completions", json={**body, "stream": False}, headers=headers
        )
    assert third.status_code == 503
    assert third.headers["retry-after"] == "1"
    assert third.json()["error"]["type"] == "server_error"
    assert ready.status_code == 503
    assert "max_concurrent_requests" in json.dumps(ready.json())
    assert alive.status_code == 200
    assert after.status_code == 200


@pytest.mark.parametrize(("http", "loop"), [("h11", "asyncio"), ("httptools", "uvloop")])
def test_each_http_parser_and_loop_keeps_the_guard(http: str, loop: str) -> None:
    with (
        FakeGemini(samples.read("text")) as fake,
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--http", http, "--loop", loop, "--head-timeout", "0.5",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, _),
    ):  # fmt: skip
        with socket.create_connection(("127.0.0.1", _port(url))) as idle:
            closed, _ = _closed_within(idle, 3)
        with sdk(url) as client:
            answer = client.chat.completions.create(model=MODEL, messages=HELLO)
    assert closed
    assert answer.choices[0].message.content == expected_content("text.sse")


# --------------------------------------------------------------------------- upstream


def test_an_endless_upstream_line_is_a_502_within_the_cap() -> None:
    """Before: a 100 MB line without a newline was buffered whole (508 MB) before the 502."""
    first = event(text("Hello"))
    endless = first + b"data: " + b"x" * 100_000_000
    with (
        FakeGemini(FakeResponse(body=endless, chunk_size=1 << 20)) as fake,
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--max-upstream-line-bytes", str(8 << 20),
            env={"RXGEM_API_KEY": KEY},
        ) as (url, process),
    ):  # fmt: skip
        before = _peak_rss_kb(process.pid)
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        with httpx.stream(
            "POST",
            f"{url}/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=60,
        ) as response:
            frames = [f for f in response.read().decode().split("\n\n") if f]
        grown_mb = (_peak_rss_kb(process.pid) - before) / 1024
    assert response.status_code == 200  # the first event had gone out
    assert json.loads(frames[0].removeprefix("data: "))["choices"][0]["delta"]["content"] == (
        "Hello"
    )
    error = json.loads(frames[-1].removeprefix("data: "))["error"]
    assert "max_line_bytes" in error["message"]
    assert grown_mb < 60, grown_mb


def test_a_client_that_stops_reading_is_cut_off_after_the_send_timeout() -> None:
    piece = "x" * 65536
    big = b"".join(event(text(piece)) for _ in range(600)) + event(finish("STOP"), usage(1, 1))
    request = json.dumps({"model": MODEL, "messages": HELLO, "stream": True}).encode()
    overrides = {"send_timeout": 1.0, "keep_alive": 0.3}
    with (
        FakeGemini(FakeResponse(body=big, chunk_size=65536)) as fake,
        serving(settings_for(fake, **overrides)) as url,
        socket.create_connection(("127.0.0.1", _port(url))) as client,
    ):
        client.sendall(_post_head(len(request)) + request)
        time.sleep(0.5)  # the client reads nothing; the server's sends stall
        assert fake.wait_for_disconnect(timeout=10)  # the upstream request was cancelled
        # and the server dropped the connection: what is left to read ends soon
        client.settimeout(10)
        started = time.monotonic()
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := client.recv(1 << 20):
                received += len(chunk)
        assert time.monotonic() - started < 5
        assert fake.completed == 0
    assert received < len(big)
