"""The server's bounds on what one request asks for and on what all requests hold.

Each test is a finding of an outside probe (issue 32): ``n`` without a bound (a
million candidates grew ``rxgem serve --fake`` to 24 GB); a large request's translation
holding the event loop (``/healthz`` a second late). Servers are real (uvicorn on
127.0.0.1, in a thread or in their own process).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from server_harness import (
    HELLO,
    KEY,
    MODEL,
    TOKEN,
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.testing import FakeGemini

HEADERS = {"authorization": f"Bearer {TOKEN}"}

# --------------------------------------------------------------------------- n


@pytest.mark.parametrize(
    "n", [0, -1, 9, 1_000_000, int("9" * 4000)], ids=["0", "-1", "9", "1e6", "4000digits"]
)
@pytest.mark.parametrize(
    ("upstream_api", "path", "body"),
    [
        ("generate-content", "/v1/chat/completions", {"messages": HELLO}),
        ("interactions", "/v1/chat/completions", {"messages": HELLO}),
        ("generate-content", "/v1/responses", {"input": "Say good morning."}),
        ("interactions", "/v1/responses", {"input": "Say good morning."}),
    ],
)
def test_n_outside_1_to_8_is_a_400_before_any_upstream_call(
    n: int, upstream_api: str, path: str, body: dict[str, Any]
) -> None:
    with FakeGemini() as fake, serving(settings_for(fake, upstream_api=upstream_api)) as url:
        response = httpx.post(
            f"{url}{path}", json={"model": MODEL, **body, "n": n}, headers=HEADERS, timeout=30
        )
        reached = [r for r in fake.requests if r.method == "POST"]
    assert reached == []
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["type"], error["param"]) == ("invalid_request_error", "n")
    assert len(response.content) < 2000  # the 4,000 digits are not echoed back


def test_n_of_8_reaches_gemini_as_candidate_count() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        response = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": MODEL, "messages": HELLO, "n": 8},
            headers=HEADERS,
            timeout=30,
        )
        (sent,) = fake.requests
    assert sent.json["generationConfig"]["candidateCount"] == 8
    assert [c["index"] for c in response.json()["choices"]] == list(range(8))


# --------------------------------------------------------------------------- translation


def _worst_healthz_while(url: str, post: Callable[[], httpx.Response]) -> tuple[float, int]:
    """The slowest ``/healthz`` answer, polled while ``post`` runs; and its status."""
    answers: list[httpx.Response] = []
    sender = threading.Thread(target=lambda: answers.append(post()))
    worst = 0.0
    with httpx.Client(timeout=30) as client:
        client.get(f"{url}/healthz")
        sender.start()
        while sender.is_alive():
            started = time.monotonic()
            assert client.get(f"{url}/healthz").status_code == 200
            worst = max(worst, time.monotonic() - started)
            time.sleep(0.005)
    sender.join()
    (answer,) = answers
    return worst, answer.status_code


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}] * 200_000}),
        ("/v1/responses", {"input": [{"role": "user", "content": "hi"}] * 150_000, "store": False}),
    ],
    ids=["200k-messages", "150k-items"],
)
def test_a_large_request_is_translated_while_healthz_answers(path: str, body: Any) -> None:
    """Before: 200k messages held /healthz 1.0 s (3 s on a loaded machine), 150k
    Responses items 2.2 s: their translation was one call on the event loop."""
    content = json.dumps({"model": MODEL, **body}).encode()  # 6.7 MiB, 4.4 MiB
    with (
        FakeGemini(samples.read("text")) as fake,  # scripted: the fake reads no body
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--max-json-values", "2000000", env={"RXGEM_API_KEY": KEY},
        ) as (url, _),
    ):  # fmt: skip
        worst, status = _worst_healthz_while(
            url,
            lambda: httpx.post(
                f"{url}{path}",
                content=content,
                headers={**HEADERS, "content-type": "application/json"},
                timeout=120,
            ),
        )
        (sent,) = fake.requests
    assert status == 200
    assert len(sent.body) > 2_000_000  # translated whole
    assert worst < 0.5, f"/healthz took {worst * 1000:.0f} ms"  # under 100 ms when quiet
