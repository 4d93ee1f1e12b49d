"""Every rxgem source is cold: each subscriber makes its own request, and ``share()`` (or
``publish()`` and ``connect()``) makes one request for all of them (docs/streams.md)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import reactivex
from reactivex import Observable
from reactivex import operators as ops

import rxgem
from rxgem import samples
from rxgem.testing import FakeGemini, FakeInteraction, FakeResponse, text_step

MODEL = "gemini-2.5-flash"
KEY = "test-key"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "stream": True}

Source = Callable[[FakeGemini, httpx.Client | httpx.AsyncClient], Observable[Any]]

SOURCES: dict[str, Source] = {
    "from_gemini": lambda fake, http: rxgem.from_gemini(
        REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=http
    ),
    "from_interactions": lambda fake, http: rxgem.from_interactions(
        {"model": MODEL, "input": "Hi"}, api_key=KEY, base_url=fake.base_url, client=http
    ),
    "stream_chat": lambda fake, http: rxgem.stream_chat(
        REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=http
    ),
    "chat_completions": lambda fake, http: rxgem.chat_completions(
        CHAT, api_key=KEY, base_url=fake.base_url, client=http
    ),
    "responses": lambda fake, http: rxgem.responses(
        {"model": MODEL, "input": "Hi", "stream": True},
        api_key=KEY,
        base_url=fake.base_url,
        client=http,
    ),
}


def fake_gemini() -> FakeGemini:
    answer = FakeResponse(body=samples.read("text"))
    return FakeGemini(*[answer] * 4, interactions=[FakeInteraction(steps=[text_step("Hi")])])


def upstream_requests(fake: FakeGemini) -> int:
    return sum(1 for received in fake.requests if received.method == "POST")


def test_from_body_replays_its_pieces_to_each_subscriber() -> None:
    source = rxgem.from_body([b"a", b"b"])
    both = reactivex.zip(source.pipe(ops.to_list()), source.pipe(ops.to_list()))
    assert both.run() == ([b"a", b"b"], [b"a", b"b"])


@pytest.mark.parametrize("name", SOURCES)
def test_each_subscriber_makes_its_own_request_and_share_makes_one(name: str) -> None:
    async def main() -> tuple[int, int]:
        with fake_gemini() as fake:
            async with httpx.AsyncClient() as http:
                source = SOURCES[name](fake, http)
                both = reactivex.zip(source.pipe(ops.count()), source.pipe(ops.to_list()))
                [(count, values)] = [pair async for pair in rxgem.aiterate(both)]
                assert count == len(values) > 0
                cold = upstream_requests(fake)
                shared = source.pipe(ops.share())
                both = reactivex.zip(shared.pipe(ops.count()), shared.pipe(ops.to_list()))
                [(count, values)] = [pair async for pair in rxgem.aiterate(both)]
                assert count == len(values) > 0
                return cold, upstream_requests(fake) - cold

    assert asyncio.run(main()) == (2, 1)


@pytest.mark.parametrize("name", SOURCES)
def test_publish_and_connect_make_one_request_on_a_worker_thread(name: str) -> None:
    with fake_gemini() as fake, httpx.Client() as http:
        published = SOURCES[name](fake, http).pipe(ops.publish())
        counts: list[list[int]] = [[], []]
        ends = [threading.Event(), threading.Event()]
        for count, end in zip(counts, ends, strict=True):
            published.pipe(ops.count()).subscribe(count.append, on_completed=end.set)
        published.connect()
        assert all(end.wait(30) for end in ends)
        assert counts[0] == counts[1]
        assert counts[0][0] > 0
        assert upstream_requests(fake) == 1
