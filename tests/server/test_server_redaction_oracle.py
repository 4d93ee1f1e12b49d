"""Redaction without an oracle: a client's own text comes back the same whatever it equals.

Before: a 400 for an unknown field echoed the field's name unless it equalled one of the
server's secrets (its Gemini key, a client token), which came back as ``[redacted]``: one
request confirmed a guessed key or token. Now the client's names and values are quoted
in a bounded form, never compared with a secret; secrets are scrubbed only from what
Gemini and the server itself say (see test_server.py and test_server_responses.py).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from server_harness import KEY, MODEL, TOKEN, serving, settings_for

from rxgem.testing import FakeGemini

OTHER = "tok-OTHER-GUESS-1234"  # as long as TOKEN, shaped like it
ROUTES = {
    "chat": (
        "/v1/chat/completions",
        {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}]},
    ),
    "responses": ("/v1/responses", {"model": MODEL, "input": "Hi"}),
}
HOLES: dict[str, Any] = {
    "field-name": lambda name: {name: 1},
    "role": lambda name: {
        "messages": [{"role": name, "content": "Hi"}],
        "input": [{"role": name, "content": "Hi"}],
    },
}


def _ask(url: str, route: str, hole: str, name: str) -> dict[str, Any]:
    path, body = ROUTES[route]
    extra = HOLES[hole](name)
    if hole == "role":  # each route's own list
        extra = {k: v for k, v in extra.items() if k in body}
    answer = httpx.post(
        f"{url}{path}", json={**body, **extra}, headers={"authorization": f"Bearer {TOKEN}"}
    )
    assert answer.status_code == 400, answer.text
    error: dict[str, Any] = answer.json()["error"]
    return error


def _shape(error: dict[str, Any], name: str) -> str:
    return repr(error).replace(name, "NAME")


@pytest.mark.parametrize("hole", list(HOLES))
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_name_equal_to_a_secret_is_echoed_like_any_other(route: str, hole: str) -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        guesses = {name: _ask(url, route, hole, name) for name in (KEY, TOKEN, OTHER)}
        assert fake.requests == []
    assert len({_shape(error, name) for name, error in guesses.items()}) == 1, guesses
    for name, error in guesses.items():
        assert name in error["message"]  # the client's own text, as it sent it
        assert "[redacted]" not in repr(error)


@pytest.mark.parametrize("hole", list(HOLES))
@pytest.mark.parametrize("route", list(ROUTES))
def test_a_very_long_name_is_echoed_bounded(route: str, hole: str) -> None:
    long = "x" * 200_000
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        error = _ask(url, route, hole, long)
    assert len(error["message"]) < 1000
    assert error["param"] is None or len(error["param"]) <= 256
    assert "x" * 40 in error["message"]  # quoted, cut
