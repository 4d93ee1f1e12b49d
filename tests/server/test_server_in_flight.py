"""The server-wide budget on what the requests in progress hold: body bytes and JSON values.

A finding of an outside probe (issue 32): each request was bounded, but not how many a
process held at once (ten 31.5 MiB bodies of short strings: 1.26 GB). Servers are real
(uvicorn on 127.0.0.1, in a thread or in their own process).
"""

from __future__ import annotations

import json
import socket
import threading
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
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.server import SettingsError
from rxgem.testing import FakeGemini, FakeResponse

HEADERS = {"authorization": f"Bearer {TOKEN}"}


# --------------------------------------------------------------------------- in flight


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_big_bodies_at_once_beyond_the_budget_get_503_and_memory_stays_bounded() -> None:
    """Before: ten 31.5 MiB arrays of short strings at once took the server to 1.26 GB."""
    strings = 943_000  # 35 bytes each: 31.5 MiB, within max_json_values
    content = b'{"model": "m", "messages": [' + b",".join([b'"' + b"x" * 32 + b'"'] * strings)
    content += b"]}"
    headers = {**HEADERS, "content-type": "application/json"}
    answers: list[httpx.Response] = []
    with (
        FakeGemini(samples.read("text")) as fake,
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            env={"RXGEM_API_KEY": KEY, "RXGEM_MAX_BYTES_IN_FLIGHT": "40000000"},
        ) as (url, process),
    ):  # fmt: skip
        before = _peak_rss_mb(process.pid)

        def post() -> None:
            answers.append(
                httpx.post(
                    f"{url}/v1/chat/completions", content=content, headers=headers, timeout=120
                )
            )

        senders = [threading.Thread(target=post) for _ in range(10)]
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
        grown = _peak_rss_mb(process.pid) - before
        after = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": MODEL, "messages": HELLO},
            headers=HEADERS,
            timeout=30,
        )
    statuses = sorted(a.status_code for a in answers)
    assert 400 in statuses  # the admitted ones: a message must be an object
    busy = [a for a in answers if a.status_code == 503]
    assert busy, statuses
    for answer in busy:
        assert answer.headers["retry-after"] == "1"
        error = answer.json()["error"]
        assert (error["type"], error["code"]) == ("server_error", "server_busy")
        assert "max_bytes_in_flight" in error["message"]
    assert grown < 500, f"grew {grown:.0f} MB"
    assert after.status_code == 200  # what the big bodies took was given back


@pytest.fixture
def slow_answer() -> FakeResponse:
    capture = samples.read("text")
    return FakeResponse(body=capture, split_at=event_ends(capture), pause=0.3)


def _held_open(url: str, content: bytes) -> Any:
    """A streamed chat request of ``content``, its answer held open while the caller runs."""
    client = httpx.Client(timeout=30)
    return client, client.stream(
        "POST",
        f"{url}/v1/chat/completions",
        content=content,
        headers={**HEADERS, "content-type": "application/json"},
    )


def _chat_body(size: int, *, stream: bool = True) -> bytes:
    """A chat request body of about ``size`` bytes (one long message)."""
    head = {"model": MODEL, "stream": stream, "messages": [{"role": "user", "content": ""}]}
    empty = len(json.dumps(head))
    head["messages"][0]["content"] = "w" * (size - empty)
    return json.dumps(head).encode()


@pytest.mark.parametrize(
    ("settings", "body", "named"),
    [
        (
            {"max_request_bytes": 10_000, "max_bytes_in_flight": 15_000},
            _chat_body(8_000),
            "max_bytes_in_flight",
        ),
        (
            {"max_json_values": 1_000, "max_values_in_flight": 1_500},
            json.dumps(
                {
                    "model": MODEL,
                    "stream": True,
                    "messages": [
                        {"role": "user", "content": [{"type": "text", "text": "w"}] * 160}
                    ],
                }
            ).encode(),
            "max_values_in_flight",
        ),
    ],
    ids=["bytes", "values"],
)
def test_a_request_past_the_budget_is_a_503_until_the_one_holding_it_ends(
    settings: dict[str, Any], body: bytes, named: str, slow_answer: FakeResponse
) -> None:
    fast = FakeResponse(body=samples.read("text"))
    with FakeGemini(slow_answer, fast) as fake, serving(settings_for(fake, **settings)) as url:
        client, holding = _held_open(url, body)
        with client, holding as first:
            assert first.status_code == 200
            refused = httpx.post(
                f"{url}/v1/chat/completions",
                content=body,
                headers={**HEADERS, "content-type": "application/json"},
            )
            first.read()
        reached = [r for r in fake.requests if r.method == "POST"]
        after = httpx.post(
            f"{url}/v1/chat/completions",
            content=body,
            headers={**HEADERS, "content-type": "application/json"},
        )
    assert len(reached) == 1  # the refused one asked nothing
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "1"
    error = refused.json()["error"]
    assert (error["type"], error["code"]) == ("server_error", "server_busy")
    assert named in error["message"]
    assert after.status_code == 200


def test_a_client_that_leaves_mid_body_gives_its_bytes_back() -> None:
    settings = {"max_request_bytes": 10_000, "max_bytes_in_flight": 15_000}
    body = _chat_body(8_000, stream=False)
    with (
        FakeGemini(samples.read("text"), samples.read("text")) as fake,
        serving(settings_for(fake, **settings)) as url,
    ):
        port = int(url.rsplit(":", 1)[1])
        for _ in range(3):  # each takes 8,000 of the 15,000 bytes, then leaves
            with socket.create_connection(("127.0.0.1", port)) as sock:
                sock.sendall(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + f"Authorization: Bearer {TOKEN}\r\n".encode()
                    + b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
                    + body[:100]
                )
                time.sleep(0.2)
        time.sleep(0.3)
        answers = [
            httpx.post(
                f"{url}/v1/chat/completions",
                content=body,
                headers={**HEADERS, "content-type": "application/json"},
            )
            for _ in range(2)
        ]
    assert [a.status_code for a in answers] == [200, 200]


def test_the_budgets_follow_the_per_request_limits_and_are_never_below_them() -> None:
    upstream = "http://127.0.0.1:9/v1beta"
    derived = settings_for(upstream, max_request_bytes=1_000, max_json_values=50)
    assert (derived.bytes_in_flight, derived.values_in_flight) == (4_000, 200)
    for budget, limit in (
        ("max_bytes_in_flight", "max_request_bytes"),
        ("max_values_in_flight", "max_json_values"),
    ):
        with pytest.raises(SettingsError, match=f"{budget} must be at least {limit} \\(1000\\)"):
            settings_for(upstream, **{limit: 1_000, budget: 999})
