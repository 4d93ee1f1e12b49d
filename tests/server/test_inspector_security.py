"""The live inspector against what a client or a neighbour on the host can send it.

Its diagrams redact the bytes joined, not piece by piece (a key split across two network
pieces is still hidden); every path built from input is a clean 404, never a 500; its
cookie is a random, signed, expiring session id, never the token; and a server without
``--inspect`` says how to turn it on.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from server_harness import KEY, MODEL, TOKEN, settings_for
from test_inspector import AUTH, CHAT, chat, diagram, first_frames, inspecting, serving_app

from rxgem.testing import FakeGemini, FakeResponse


def _said(text: str, **more: Any) -> bytes:
    part = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, **more}]}
    return b"data: " + json.dumps(part).encode() + b"\r\n\r\n"


def test_a_key_split_across_two_pieces_is_redacted_in_the_diagram() -> None:
    body = _said(f"the key is {KEY} indeed") + _said("and that is all", finishReason="STOP")
    middle = body.index(KEY.encode()) + len(KEY) // 2
    split = FakeResponse(body=body, split_at=[middle])
    with FakeGemini(split) as fake, serving_app(inspecting(fake)) as (url, _):
        assert chat(url).status_code == 200
        [summary] = first_frames(url, 1)
        svg = diagram(url, summary)
    assert summary["pieces"] >= 2
    assert "[redacted]" in svg
    assert KEY not in svg
    assert KEY[: len(KEY) // 2] not in svg
    assert KEY[len(KEY) // 2 :] not in svg


MALFORMED = [
    "/inspect/exchanges/\u00b2.json",  # a Unicode digit: str.isdigit() says yes, int() no
    "/inspect/exchanges/\u0661.json",  # ARABIC-INDIC DIGIT ONE: int() says 1
    "/inspect/exchanges/" + "9" * 5000 + ".json",  # past int()'s digit limit
    "/inspect/exchanges/-1.json",
    "/inspect/exchanges/+1.json",
    "/inspect/exchanges/1_0.json",
    "/inspect/exchanges/ 1.json",
    "/inspect/exchanges/1.json.json",
    "/inspect/exchanges/1.svg.json",
    "/inspect/exchanges/.json",
    "/inspect/exchanges/",
    "/inspect/exchanges/%00.json",
    "/inspect/exchanges/1%00.json",
    "/inspect/exchanges/1.json/x",
    "/inspect/exchanges/\u00b2.svg",
    "/inspect/exchanges/" + "9" * 5000 + ".svg",
    "/inspect/events/x",
    "/inspect//events",
    "/inspect/app.js/x",
    "/inspect/%ff",
]


@pytest.mark.parametrize("path", MALFORMED)
def test_a_malformed_inspector_path_is_a_clean_404(path: str) -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake)) as (url, _):
        assert chat(url).status_code == 200
        r = httpx.get(url + path, headers=AUTH, timeout=10)
    assert r.status_code in (400, 404), r.text
    assert "Traceback" not in r.text


@pytest.mark.parametrize(
    "query", ["token=%ff%fe", "token=", "token=" + "x" * 30_000, "token=a%00b", "token=\u00b2"]
)
def test_a_malformed_query_token_is_a_clean_401(query: str) -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake)) as (url, _):
        r = httpx.get(f"{url}/inspect?{query}", timeout=10)
    assert r.status_code in (400, 401, 431), r.text
    assert "set-cookie" not in r.headers


def _login(url: str) -> str:
    r = httpx.get(f"{url}/inspect?token={TOKEN}")
    assert r.status_code == 303
    cookie = r.headers["set-cookie"]
    name = cookie.partition("=")[0]
    assert name == "rxgem_inspect"
    return cookie


def test_the_cookie_is_a_random_expiring_session_not_the_token() -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake)) as (url, _):
        first, second = _login(url), _login(url)
        value = first.partition("=")[2].partition(";")[0]
        page = httpx.get(f"{url}/inspect", cookies={"rxgem_inspect": value})
        as_token = httpx.get(f"{url}/inspect", cookies={"rxgem_inspect": TOKEN})
        tampered = value[:-2] + ("AA" if not value.endswith("AA") else "BB")
        forged = httpx.get(f"{url}/inspect", cookies={"rxgem_inspect": tampered})
    assert TOKEN not in first
    assert value != second.partition("=")[2].partition(";")[0]  # a fresh id each time
    attributes = {part.strip().split("=")[0].lower() for part in first.split(";")[1:]}
    assert {"httponly", "samesite", "path", "max-age"} <= attributes
    assert "SameSite=Strict" in first
    assert "Path=/inspect" in first
    assert page.status_code == 200
    assert as_token.status_code == 401  # the token itself is no longer a cookie
    assert forged.status_code == 401


def test_an_expired_session_is_refused() -> None:
    from rxgem.server.inspector._session import Sessions

    sessions = Sessions(b"k" * 32, lifetime=60)
    value = sessions.issue(now=1000.0)
    assert sessions.valid(value, now=1030.0)
    assert not sessions.valid(value, now=1061.0)
    assert not Sessions(b"j" * 32, lifetime=60).valid(value, now=1030.0)  # another server
    for bad in ["", ".", "..", "a.b.c", value + "x", "x" + value, value.replace(".", ""), "\u00b2"]:
        assert not sessions.valid(bad, now=1030.0)


@pytest.mark.parametrize("path", ["/inspect", "/inspect/events", "/inspect/exchanges/1.json"])
def test_without_inspect_the_inspector_says_how_to_turn_it_on(path: str) -> None:
    with FakeGemini() as fake, serving_app(settings_for(fake)) as (url, _):
        r = httpx.get(f"{url}{path}", headers=AUTH)
        anonymous = httpx.get(f"{url}{path}")
    assert r.status_code == 404
    assert "rxgem serve --inspect" in r.json()["error"]["message"]
    assert anonymous.status_code == 404
    assert anonymous.text == r.text  # the same for anyone: it says nothing else
    assert MODEL not in r.text
    assert TOKEN not in r.text
    assert CHAT not in r.text


def test_a_secret_cut_where_the_kept_bytes_end_is_hidden() -> None:
    from rxgem.server.capture._redact import redact_pieces

    secret = KEY.encode()
    assert redact_pieces([b"x " + secret[:10]], [secret], cut=True) == [b"x [redacted]"]
    assert redact_pieces([b"x " + secret[:10]], [secret]) == [b"x " + secret[:10]]  # all of it
    split = [b"a" + secret[:5], secret[5:] + b"b", b"c"]
    assert redact_pieces(split, [secret]) == [b"a[redacted]", b"b", b"c"]
    assert redact_pieces([b"ab", b"cd"], []) == [b"ab", b"cd"]
