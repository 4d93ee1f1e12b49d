"""The inspector's event feeds held to the server's standard.

A feed counts toward ``max_concurrent_requests`` as any request does; a worker holds at
most :data:`MAX_FEEDS` at once; the feed's summaries carry no diagram (the page fetches
each apart, size-capped), so a feed's first message stays small however large the kept
exchanges; and a client that takes in nothing for ``send_timeout`` seconds is cut off.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
import pytest
from server_harness import event_ends
from test_inspector import AUTH, chat, inspecting, serving_app

from rxgem.server.inspector import _page as _inspect_page
from rxgem.testing import FakeGemini, FakeResponse


def _said(text: str, **more: Any) -> bytes:
    part = {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, **more}]}
    return b"data: " + json.dumps(part).encode() + b"\r\n\r\n"


def _large() -> FakeResponse:
    """A response of 40 events of 6 KB each (a large diagram)."""
    body = b"".join(_said(f"{i} " + "word " * 1200) for i in range(39))
    body += _said("end", finishReason="STOP")
    return FakeResponse(body=body, split_at=event_ends(body)[:-1])


def _first_message(url: str) -> bytes:
    with httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10) as r:
        assert r.status_code == 200
        data = b""
        for chunk in r.iter_raw():
            data += chunk
            if b"event: keep" in data:
                return data
    return data


def test_the_first_message_is_summaries_without_diagrams() -> None:
    count = 6
    with (
        FakeGemini(*[_large() for _ in range(count)]) as fake,
        serving_app(inspecting(fake)) as (url, _),
    ):
        for _ in range(count):
            assert chat(url).status_code == 200
        first = _first_message(url)
        summaries = [
            json.loads(line[6:]) for line in first.split(b"\n") if line.startswith(b"data: {")
        ]
        svg = httpx.get(f"{url}/inspect/exchanges/1.svg", headers=AUTH, timeout=30)
    assert len(summaries) == count
    assert all("svg" not in s for s in summaries)
    assert len(first) < 1000 * count  # a summary is a few hundred bytes, whatever the size
    assert svg.status_code in (200, 413)
    assert len(svg.content) <= _inspect_page.MAX_SVG_BYTES


def test_a_diagram_over_the_cap_is_refused_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_inspect_page, "MAX_SVG_BYTES", 2048)
    with FakeGemini(_large()) as fake, serving_app(inspecting(fake)) as (url, _):
        assert chat(url).status_code == 200
        r = httpx.get(f"{url}/inspect/exchanges/1.svg", headers=AUTH, timeout=30)
    assert r.status_code == 413
    assert "download the exchange" in r.text


def test_an_open_feed_counts_toward_the_request_limit() -> None:
    with (
        FakeGemini() as fake,
        serving_app(inspecting(fake, max_concurrent_requests=1)) as (url, _),
        httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10) as feed,
    ):
        lines = feed.iter_lines()
        next(lines)  # the feed is open (and stays so: its lines are still to read)
        refused = chat(url)
    assert refused.status_code == 503
    assert refused.headers["retry-after"]


def test_feeds_are_capped_per_worker() -> None:
    with (
        FakeGemini() as fake,
        serving_app(inspecting(fake)) as (url, _),
        contextlib.ExitStack() as stack,
    ):
        for _ in range(_inspect_page.MAX_FEEDS):
            feed = stack.enter_context(
                httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10)
            )
            assert feed.status_code == 200
        refused = httpx.get(f"{url}/inspect/events", headers=AUTH, timeout=10)
        stack.close()
        again = httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10)
        with again as r:
            reopened = r.status_code
    assert refused.status_code == 503
    assert refused.headers["retry-after"]
    assert "close one" in refused.json()["error"]["message"]
    assert reopened == 200  # a closed feed frees its place


def test_a_feed_whose_client_takes_nothing_in_ends_after_the_send_timeout() -> None:
    with FakeGemini() as fake, serving_app(inspecting(fake, send_timeout=0.3)) as (url, app):
        assert chat(url).status_code == 200
        inspector = app.state.inspector
        settings = app.state.settings
        gate = _inspect_page.InspectorGate(
            lambda *_: None, inspector, settings, ({}, {}), app.state.drain
        )

        sends: list[str] = []
        aborted: list[bool] = []

        async def stuck(message: Any) -> None:
            sends.append(message["type"])
            if message["type"] == "http.response.body":
                await asyncio.Event().wait()  # a client that never reads: never sent

        scope = {"type": "http", "extensions": {"rxgem.abort": lambda: aborted.append(True)}}

        async def run() -> float:
            loop = asyncio.get_running_loop()
            started = loop.time()
            await asyncio.wait_for(gate.feed(scope, stuck), 10)
            return loop.time() - started

        took = asyncio.run(run())
    assert sends[:2] == ["http.response.start", "http.response.body"]
    assert aborted == [True]  # the connection dropped, unsent data and all
    assert took < 5


def test_a_feed_ends_after_its_lifetime_and_frees_its_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    monkeypatch.setattr(_inspect_page, "_FEED_SECONDS", 0.5, raising=False)
    with (
        FakeGemini() as fake,
        serving_app(inspecting(fake)) as (url, _),
        httpx.stream("GET", f"{url}/inspect/events", headers=AUTH, timeout=10) as feed,
    ):
        started = time.monotonic()
        for _ in feed.iter_lines():  # a comment about every second while it lasts
            assert time.monotonic() - started < 5, "the feed did not end"
        took = time.monotonic() - started
    assert took < 5
