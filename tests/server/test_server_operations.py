"""``rxgem serve`` as a deployment runs it: readiness, heartbeats, draining, workers.

- ``/healthz`` is liveness (the process answers); ``/readyz`` is readiness (Gemini
  answers, the server is not draining or full).
- A non-streaming answer that Gemini takes long over sends spaces before its JSON, so a
  proxy that cuts idle responses at 60 s does not cut it.
- SIGTERM drains: open streams get ``shutdown_grace`` seconds, then an error frame.
- With ``--workers 2`` every accepted connection has ``TCP_NODELAY``: a keep-alive
  request is not delayed ~40 ms by Nagle's algorithm meeting delayed ACKs.
"""

from __future__ import annotations

import json
import signal
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import openai
from server_harness import (
    HELLO,
    KEY,
    MODEL,
    SERVE,
    TOKEN,
    event_ends,
    expected_content,
    free_port,
    sdk,
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse

HEADERS = {"authorization": f"Bearer {TOKEN}"}


def test_readiness_follows_the_upstream_while_liveness_does_not() -> None:
    down = f"http://127.0.0.1:{free_port()}/v1beta"  # nothing listens there
    with serving(settings_for(down)) as url:
        ready = httpx.get(f"{url}/readyz")
        alive = httpx.get(f"{url}/healthz")
    assert alive.status_code == 200
    assert ready.status_code == 503
    assert ready.headers["retry-after"] == "1"
    assert "upstream unreachable" in ready.json()["checks"]["upstream"]
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        ready = httpx.get(f"{url}/readyz")
    assert ready.status_code == 200
    assert ready.json()["checks"]["upstream"] == "ok"


class _RefusingGemini(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        error = {"code": 403, "message": "API key not valid.", "status": "PERMISSION_DENIED"}
        body = json.dumps({"error": error}).encode()
        self.send_response(403)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_readiness_fails_when_gemini_refuses_the_servers_key() -> None:
    refusing = ThreadingHTTPServer(("127.0.0.1", 0), _RefusingGemini)
    threading.Thread(target=refusing.serve_forever, daemon=True).start()
    upstream = f"http://127.0.0.1:{refusing.server_address[1]}/v1beta"
    try:
        with serving(settings_for(upstream)) as url:
            ready = httpx.get(f"{url}/readyz")
    finally:
        refusing.shutdown()
        refusing.server_close()
    assert ready.status_code == 503
    assert "HTTP 40" in ready.json()["checks"]["upstream"]
    assert KEY not in ready.text


def test_a_slow_non_streaming_answer_sends_spaces_then_the_json() -> None:
    slow = FakeResponse(body=samples.read("text"), delay=0.7)
    with FakeGemini(slow, slow) as fake, serving(settings_for(fake, keep_alive=0.2)) as url:
        pieces: list[tuple[float, bytes]] = []
        started = time.monotonic()
        body = {"model": MODEL, "messages": HELLO}
        with httpx.stream(
            "POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS
        ) as response:
            for piece in response.iter_raw():
                pieces.append((time.monotonic() - started, piece))
        with sdk(url) as client:  # the SDK parses the body, blanks and all
            completion = client.chat.completions.create(model=MODEL, messages=HELLO)
    raw = b"".join(piece for _, piece in pieces)
    assert response.status_code == 200
    assert raw.startswith(b" ")
    assert pieces[0][0] < 0.6  # the first heartbeat came before Gemini's first byte
    assert json.loads(raw)["choices"][0]["message"]["content"] == expected_content("text.sse")
    assert completion.choices[0].message.content == expected_content("text.sse")


def test_an_error_after_the_heartbeat_is_the_error_object() -> None:
    late = FakeResponse(
        status=200,
        body=b'data: {"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}}'
        b"\n\n",
        delay=0.5,
    )
    with FakeGemini(late) as fake, serving(settings_for(fake, keep_alive=0.2)) as url:
        body = {"model": MODEL, "messages": HELLO}
        response = httpx.post(f"{url}/v1/chat/completions", json=body, headers=HEADERS)
    assert response.status_code == 200  # the status was sent with the first heartbeat
    assert response.content.startswith(b" ")
    assert json.loads(response.content)["error"]["message"].endswith("overloaded")


def _long_stream(events: int, pause: float) -> FakeResponse:
    capture = samples.read("text")
    return FakeResponse(body=capture, split_at=event_ends(capture)[:events], pause=pause)


def test_sigterm_lets_short_streams_finish_and_ends_long_ones_with_an_error_frame() -> None:
    short = _long_stream(3, 0.1)  # ends within the grace
    long = _long_stream(3, 5.0)  # does not
    with (
        FakeGemini(short, long) as fake,
        serve_process(
            "--upstream", fake.base_url, "--client-token", TOKEN,
            "--shutdown-grace", "1",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, process),
        httpx.Client(timeout=30) as one,
        httpx.Client(timeout=30) as two,
    ):  # fmt: skip
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        with (
            one.stream("POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS) as a,
            two.stream("POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS) as b,
        ):
            assert (a.status_code, b.status_code) == (200, 200)
            process.send_signal(signal.SIGTERM)
            signalled = time.monotonic()
            finished = a.read().decode()
            cut = b.read().decode()
            cut_after = time.monotonic() - signalled
        code = process.wait(30)
    assert finished.endswith("data: [DONE]\n\n")
    frames = [f for f in cut.split("\n\n") if f.startswith("data:")]
    assert json.loads(frames[-1].removeprefix("data: "))["error"]["code"] == "server_shutdown"
    assert "[DONE]" not in cut
    assert 0.8 < cut_after < 5
    assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled


def test_while_draining_new_requests_get_503_and_readiness_says_so() -> None:
    long = _long_stream(2, 3.0)
    with (
        FakeGemini(long) as fake,
        serve_process(
            "--upstream", fake.base_url, "--client-token", TOKEN,
            "--shutdown-grace", "2",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, process),
        httpx.Client(timeout=30) as kept,
    ):  # fmt: skip
        assert kept.get(f"{url}/healthz").status_code == 200  # a kept-alive connection
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        with httpx.stream(
            "POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS, timeout=30
        ) as open_stream:
            process.send_signal(signal.SIGTERM)
            time.sleep(1.0)  # the workers hear it from uvicorn's supervisor within 0.5 s
            try:
                later = kept.post(f"{url}/v1/chat/completions", json=body, headers=HEADERS)
            except httpx.TransportError:
                later = None  # uvicorn may close the idle connection first: also refused
            open_stream.read()
        process.wait(30)
    if later is not None:
        assert later.status_code == 503
        assert later.json()["error"]["message"].startswith("the server is shutting down")


def _keep_alive_latencies(url: str, count: int) -> list[float]:
    body = {"model": MODEL, "messages": HELLO, "stream": True}
    latencies = []
    with httpx.Client(timeout=30) as client:  # one kept-alive connection
        for _ in range(count):
            started = time.perf_counter()
            with client.stream(
                "POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS
            ) as response:
                response.read()
            latencies.append(time.perf_counter() - started)
    return latencies


def test_two_workers_answer_a_keep_alive_request_without_nagle_delays() -> None:
    """Before: ~40 ms per keep-alive request with --workers 2 (22.7 requests/s at one
    client, against 415 with one worker)."""
    capture = samples.read("text")
    with (
        FakeGemini(*[capture] * 40) as fake,
        serve_process(
            "--workers", "2", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--log-level", "warning",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, _),
    ):  # fmt: skip
        latencies = _keep_alive_latencies(url, 30)
    assert statistics.median(latencies[5:]) < 0.030, latencies


def test_the_sdk_retries_a_503_from_a_full_server_and_gets_its_answer() -> None:
    slow = _long_stream(3, 0.3)
    with (
        FakeGemini(slow, samples.read("text")) as fake,
        serving(settings_for(fake, max_concurrent_requests=1)) as url,
        httpx.Client(timeout=30) as first,
    ):
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        with first.stream("POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS):
            client = openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=3)
            completion = client.chat.completions.create(model=MODEL, messages=HELLO)
    assert completion.choices[0].message.content == expected_content("text.sse")


def test_serve_fake_answers_offline_without_a_key() -> None:
    env = {"GEMINI_API_KEY": "", "GOOGLE_API_KEY": ""}
    with serve_process(
        "--fake", "--client-token", TOKEN, env=env
    ) as (url, _):  # fmt: skip
        with sdk(url) as client:
            ids = [model.id for model in client.models.list()]
            stream = client.chat.completions.create(model=MODEL, messages=HELLO, stream=True)
            content = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        ready = httpx.get(f"{url}/readyz")
    assert MODEL in ids
    assert content == expected_content("text.sse")
    assert ready.status_code == 200


def test_serve_fake_refuses_an_upstream_too() -> None:
    result = subprocess.run(
        [sys.executable, "-c", SERVE, "--fake", "--upstream", "http://x/v1beta"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "rxgem serve: error: --fake is the upstream: leave out --upstream"
    )


def test_python_m_rxgem_testing_prints_a_base_url_that_answers() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "rxgem.testing", "--sample", "thinking_tools"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base = process.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:")
        assert base.endswith("/v1beta")
        url = f"{base}/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
        body = httpx.post(url, json={"contents": []}).content
        listing = httpx.get(f"{base}/models").json()
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(10)
    assert body == samples.read("thinking_tools")
    assert listing["models"]
    assert code == 130


def test_every_setting_survives_the_trip_to_the_workers_environment() -> None:
    from dataclasses import fields

    from rxgem.server import ServerSettings, settings_from_env

    changed: dict[str, Any] = {}
    for field in fields(ServerSettings):
        if isinstance(field.default, bool) or field.default is None:
            continue
        if isinstance(field.default, int | float) and field.name != "log_level":
            changed[field.name] = field.default * 2 + 1
    assert len(changed) >= 14
    settings = ServerSettings(
        api_key=KEY,
        client_tokens=(TOKEN,),
        cors_origins=("https://chat.example.com", "http://127.0.0.1:3000"),
        metrics=True,
        max_connections=77,
        **changed,
    )
    assert settings_from_env(settings.to_env()) == settings


def test_a_limit_given_as_a_flag_holds_in_every_worker() -> None:
    """Before: the limits existed only as ServerSettings fields; --workers dropped them."""
    with (
        FakeGemini(samples.read("text")) as fake,
        serve_process(
            "--workers", "2", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--max-request-bytes", "300", "--log-level", "warning",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, _),
    ):  # fmt: skip
        body = {"model": MODEL, "messages": [{"role": "user", "content": "x" * 400}]}
        statuses = set()
        for _ in range(12):  # new connections reach both workers
            with httpx.Client() as client:
                statuses.add(
                    client.post(
                        f"{url}/v1/chat/completions", json=body, headers=HEADERS
                    ).status_code
                )
        small = httpx.post(
            f"{url}/v1/chat/completions", json={"model": MODEL, "messages": HELLO}, headers=HEADERS
        )
    assert statuses == {413}
    assert small.status_code == 200
