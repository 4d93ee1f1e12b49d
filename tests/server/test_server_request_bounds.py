"""The server's bounds on what one request asks for and on what all requests hold.

Each test is a finding of an outside probe (issue 32): ``n`` without a bound (a
million candidates grew ``rxgem serve --fake`` to 24 GB). Servers are real (uvicorn
on 127.0.0.1).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_harness import HELLO, MODEL, TOKEN, serving, settings_for

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
