"""``rxgem serve --inspect``: the live inspector at ``/inspect``, on the wire.

Off by default (no route, no capture on the upstream's transport); behind the client
token (a query token once becomes a ``SameSite=Strict``, ``HttpOnly`` cookie); the
``Host`` check applies and no CORS header goes out; bounded; secrets redacted; each
exchange downloadable, and drawn stage by stage in its event feed. The page itself in
Chromium: tests/server/test_inspector_browser.py.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from server_harness import HELLO, KEY, MODEL, TOKEN, settings_for

from rxgem import samples
from rxgem.server import ServerSettings, create_app
from rxgem.server.capture._inspector import DRAWN_PIECES
from rxgem.server.capture._spool import Kept
from rxgem.server.inspector._draw import draw
from rxgem.server.run._runner import uvicorn_config
from rxgem.server.settings._settings import SettingsError
from rxgem.testing import FakeGemini
from rxgem.transport import cassette_bytes, read_cassette

AUTH = {"authorization": f"Bearer {TOKEN}"}
CHAT = "/v1/chat/completions"


@contextlib.contextmanager
def serving_app(settings: ServerSettings) -> Iterator[tuple[str, Any]]:
    """The app in uvicorn on an ephemeral port: its URL and the app itself."""
    app = create_app(settings)
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
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(10)
        assert not thread.is_alive()


def inspecting(fake: FakeGemini, **overrides: Any) -> ServerSettings:
    return settings_for(fake, inspect=True, **overrides)


def chat(url: str, content: Any = HELLO, **extra: Any) -> httpx.Response:
    body = {"model": MODEL, "messages": content, "stream": True, **extra}
    return httpx.post(f"{url}{CHAT}", json=body, headers=AUTH, timeout=30)


def first_frames(url: str, count: int) -> list[dict[str, Any]]:
    """The first ``count`` exchange summaries of the event feed."""
    found: list[dict[str, Any]] = []
    with httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        event = "message"
        for line in r.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "message":
                found.append(json.loads(line[6:]))
                if len(found) == count:
                    return found
            elif not line:
                event = "message"
    return found


def diagram(url: str, summary: dict[str, Any]) -> str:
    """The exchange's diagram, as the page fetches it (apart from the feed's summaries)."""
    assert "svg" not in summary
    r = httpx.get(f"{url}/inspect/exchanges/{summary['id']}.svg", headers=AUTH, timeout=10)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("image/svg+xml")
    return r.text


def test_off_by_default_there_is_no_page_and_no_capture() -> None:
    with FakeGemini() as fake, serving_app(settings_for(fake)) as (url, app):
        assert chat(url).status_code == 200
        r = httpx.get(f"{url}/inspect", headers=AUTH)
        assert r.status_code == 404
        assert app.state.inspector is None
        client = app.state.gateway.pools.clients[0]
        assert type(client._transport).__name__ != "_CapturingTransport"


@pytest.mark.parametrize(
    "path", ["/inspect", "/inspect/events", "/inspect/app.js", "/inspect/exchanges/1.json"]
)
def test_without_the_token_every_inspector_path_is_401(path: str) -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake)) as (url, _):
        assert httpx.get(f"{url}{path}").status_code == 401
        wrong = {"authorization": "Bearer nope"}
        assert httpx.get(f"{url}{path}", headers=wrong).status_code == 401
        assert httpx.get(f"{url}{path}", cookies={"rxgem_inspect": "nope"}).status_code == 401


def test_a_query_token_becomes_a_strict_http_only_cookie() -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake)) as (url, _):
        wrong = httpx.get(f"{url}/inspect?token=nope")
        r = httpx.get(f"{url}/inspect?token={TOKEN}")
        assert r.status_code == 303
        assert r.headers["location"] == "/inspect"  # the token leaves the address bar
        cookie = r.headers["set-cookie"]
        assert {"HttpOnly", "SameSite=Strict", "Path=/inspect"} <= {
            part.strip() for part in cookie.split(";")
        }
        session = r.cookies["rxgem_inspect"]
        page = httpx.get(f"{url}/inspect", cookies={"rxgem_inspect": session})
    assert wrong.status_code == 401
    assert "set-cookie" not in wrong.headers
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["referrer-policy"] == "no-referrer"


def test_no_cors_on_the_inspector_and_the_host_check_applies() -> None:
    origin = "http://127.0.0.1:5173"
    with (
        FakeGemini() as fake,
        serving_app(inspecting(fake, cors_origins=(origin,))) as (url, _),
    ):
        page = httpx.get(f"{url}/inspect", headers={**AUTH, "origin": origin})
        preflight = httpx.options(
            f"{url}/inspect/events",
            headers={"origin": origin, "access-control-request-method": "GET"},
        )
        api = httpx.get(f"{url}/v1/models", headers={**AUTH, "origin": origin})
        elsewhere = httpx.get(f"{url}/inspect", headers={**AUTH, "host": "evil.example"})
    assert page.status_code == 200
    assert "access-control-allow-origin" not in page.headers
    assert not any(name.startswith("access-control-") for name in preflight.headers)
    assert api.headers.get("access-control-allow-origin") == origin  # CORS elsewhere stays
    assert elsewhere.status_code == 421


def test_pass_through_auth_cannot_inspect() -> None:
    with pytest.raises(SettingsError, match="client tokens"):
        ServerSettings(pass_through_auth=True, inspect=True)


def test_an_exchange_downloads_with_its_bytes_and_no_secret() -> None:
    body = samples.read("text")
    secret_message = [{"role": "user", "content": f"my key is {KEY} and {TOKEN}"}]
    with FakeGemini(body) as fake, serving_app(inspecting(fake)) as (url, _):
        assert chat(url, secret_message).status_code == 200
        [summary] = first_frames(url, 1)
        r = httpx.get(f"{url}/inspect/exchanges/{summary['id']}.json", headers=AUTH)
    assert r.status_code == 200
    assert r.headers["content-disposition"].startswith("attachment;")
    assert KEY not in r.text
    assert TOKEN not in r.text
    cassette = read_cassette(r.content)  # a cassette, as --record writes them
    assert cassette_bytes(cassette) == body  # the bytes as received
    assert cassette["response"]["status"] == 200
    assert cassette["complete"] is True
    request = cassette["request"]["body"]
    assert request["contents"][0]["parts"][0]["text"] == "my key is [redacted] and [redacted]"
    assert "key" not in cassette["request"]["query"]
    assert cassette["inspector"]["route"] == CHAT
    assert summary["model"] == MODEL
    assert summary["status"] == 200
    assert summary["done"]
    assert summary["route"] == CHAT
    assert summary["request_id"].startswith("req_")
    assert summary["first_byte_ms"] >= 0
    assert summary["duration_ms"] >= summary["first_byte_ms"]
    assert KEY not in json.dumps(summary)
    assert TOKEN not in json.dumps(summary)


def test_the_feed_draws_every_stage_of_a_chat_stream() -> None:
    with FakeGemini(samples.read("text")) as fake, serving_app(inspecting(fake)) as (url, _):
        assert chat(url).status_code == 200
        [summary] = first_frames(url, 1)
        svg = diagram(url, summary)
    assert svg.startswith("<svg")
    for lane in ("bytes", "decode_sse", "parse", "to_openai"):
        assert f">{lane}<" in svg


def test_the_feed_draws_a_responses_stream_to_its_events() -> None:
    body = {"model": MODEL, "input": "Say good morning.", "stream": True}
    with FakeGemini(samples.read("text")) as fake, serving_app(inspecting(fake)) as (url, _):
        r = httpx.post(f"{url}/v1/responses", json=body, headers=AUTH, timeout=30)
        assert r.status_code == 200
        [summary] = first_frames(url, 1)
        svg = diagram(url, summary)
    assert summary["route"] == "/v1/responses"
    assert ">to_responses<" in svg
    assert "response.completed" in svg or "completed" in svg


def test_many_and_huge_requests_stay_within_bounds() -> None:
    big = [{"role": "user", "content": "x" * 200_000}]
    with (
        FakeGemini(samples.read("text")) as fake,
        serving_app(inspecting(fake, inspect_requests=2, inspect_kb=1)) as (url, app),
    ):
        for _ in range(5):
            assert chat(url, big).status_code == 200
        kept = list(app.state.inspector.exchanges)
        spool = Path(app.state.inspector.spool.path)
        files = {p.name: p.stat().st_size for p in spool.iterdir()}
        frames = first_frames(url, 2)
        downloads = [
            httpx.get(f"{url}/inspect/exchanges/{e.number}.json", headers=AUTH) for e in kept
        ]
        dropped = httpx.get(f"{url}/inspect/exchanges/1.json", headers=AUTH)
    assert [e.number for e in kept] == [4, 5]
    assert [f["id"] for f in frames] == [4, 5]
    for exchange in kept:
        assert len(exchange.body) <= 1024
        assert exchange.body_size > 200_000
        assert exchange.kept <= 1024
        assert exchange.truncated
    for r in downloads:
        assert r.status_code == 200
        assert len(r.content) < 4 * 1024
        assert r.json()["inspector"]["truncated"] is True
        assert r.json()["complete"] is False
    assert dropped.status_code == 404
    assert sorted(files) == ["4.bin", "4.json", "5.bin", "5.json", "key"]  # what it shows, no more
    assert all(size < 3 * 1024 for size in files.values())


def test_the_serve_flags_set_the_inspector() -> None:
    import argparse

    from rxgem.cli.serve import _environment, add_serve_parser

    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers(dest="command"))
    flags = ["serve", "--inspect", "--inspect-requests", "5", "--inspect-kb", "8"]
    env = _environment(parser.parse_args(flags))
    assert env["RXGEM_INSPECT"] == "1"
    assert env["RXGEM_INSPECT_REQUESTS"] == "5"
    assert env["RXGEM_INSPECT_KB"] == "8"
    assert "RXGEM_INSPECT" not in _environment(parser.parse_args(["serve"]))


def test_a_diagram_draws_the_first_pieces_only() -> None:
    event = b'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hi "}]}}]}\r\n\r\n'

    def kept(pieces: int, *, whole: bool) -> Kept:
        drawn = min(pieces, DRAWN_PIECES)
        header = {
            "status": 200,
            "route": CHAT,
            "drawn_whole": whole,
            "cuts": [len(event) * (i + 1) for i in range(drawn)],
        }
        return Kept(1, header, b"{}", event * pieces)

    many = draw(kept(DRAWN_PIECES * 5, whole=False), {})
    assert many == draw(kept(DRAWN_PIECES, whole=False), {})  # bounded: drawn as so far
    assert many != draw(kept(DRAWN_PIECES - 1, whole=False), {})
    assert many != draw(kept(DRAWN_PIECES, whole=True), {})


@pytest.mark.parametrize(
    ("route", "request_body", "last_lane"),
    [
        (CHAT, {"messages": HELLO}, "to_openai"),
        ("/v1/responses", {"input": "Say good morning."}, "to_responses"),
    ],
)
def test_the_interactions_upstream_is_drawn_through_its_own_stages(
    route: str, request_body: dict[str, Any], last_lane: str
) -> None:
    body = {"model": MODEL, "stream": True, **request_body}
    with (
        FakeGemini() as fake,
        serving_app(inspecting(fake, upstream_api="interactions")) as (url, _),
    ):
        r = httpx.post(f"{url}{route}", json=body, headers=AUTH, timeout=30)
        assert r.status_code == 200
        [summary] = first_frames(url, 1)
        svg = diagram(url, summary)
        download = httpx.get(f"{url}/inspect/exchanges/{summary['id']}.json", headers=AUTH)
    assert summary["model"] == MODEL
    for lane in ("parse_interactions", "read_steps", last_lane):
        assert f">{lane}<" in svg
    assert read_cassette(download.content)["upstream"] == "interactions"


def test_a_shutdown_ends_the_event_feed() -> None:
    with (
        FakeGemini() as fake,
        serving_app(inspecting(fake)) as (url, app),
        httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10) as r,
    ):
        lines = r.iter_lines()
        next(lines)  # the feed is open
        app.state.drain.started = True  # as SIGTERM's drain.begin() marks it
        started = time.monotonic()
        rest = list(lines)  # ends, rather than holding the shutdown up
        took = time.monotonic() - started
    assert took < 3
    assert all(not line or line.startswith(":") for line in rest)


def test_a_short_token_does_not_redact_ordinary_text() -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake, client_tokens=("t",))) as (url, _):
        body = {"model": MODEL, "messages": HELLO, "stream": True}
        auth = {"authorization": "Bearer t"}
        assert httpx.post(f"{url}{CHAT}", json=body, headers=auth).status_code == 200
        r = httpx.get(f"{url}/inspect/exchanges/1.json", headers=auth)
    cassette = read_cassette(r.content)
    assert cassette["request"]["body"]["contents"][0]["parts"][0]["text"] == "Say good morning."
    assert "streamGenerateContent" in cassette["request"]["path"]
