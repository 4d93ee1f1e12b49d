"""A blocking consumer on an event loop's thread, of a source that would emit on that
loop, raises at once and names ``aiterate``: ``Observable.run()`` and ``rxgem.iterate()``
would otherwise wait forever for a loop they block. Each test runs under
``asyncio.wait_for`` in a thread with a deadline, so a regression fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from reactivex import Observable
from reactivex import operators as ops

import rxgem
from rxgem.testing import FakeGemini
from rxgem.transport import from_interactions

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
KEY = "test-key"


def outcome(consume: Callable[[], Any]) -> BaseException | Any:
    """What ``consume`` gives (or raises) inside ``asyncio.run``, on a thread given 10 s."""
    result: list[Any] = []

    async def main() -> Any:
        return consume()

    def thread() -> None:
        try:
            result.append(asyncio.run(asyncio.wait_for(main(), 8)))
        except BaseException as error:  # the outcome under test
            result.append(error)

    worker = threading.Thread(target=thread, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "it hung: the blocking call never returned"
    return result[0]


def sources(fake: FakeGemini) -> dict[str, Callable[[], Observable[Any]]]:
    url = fake.base_url
    return {
        "from_gemini": lambda: rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=url),
        "from_interactions": lambda: from_interactions(
            {"model": MODEL, "input": "Hi"}, api_key=KEY, base_url=url
        ),
        "stream_chat": lambda: rxgem.stream_chat(REQUEST, model=MODEL, api_key=KEY, base_url=url),
        "async client": lambda: rxgem.from_gemini(
            REQUEST, model=MODEL, api_key=KEY, base_url=url, client=httpx.AsyncClient()
        ),
    }


NAMES = ["from_gemini", "from_interactions", "stream_chat", "async client"]


@pytest.mark.parametrize("name", NAMES)
def test_run_inside_a_running_loop_raises_at_once_naming_aiterate(name: str) -> None:
    with FakeGemini() as fake:
        make = sources(fake)[name]
        error = outcome(lambda: make().pipe(ops.to_list()).run())
        assert isinstance(error, RuntimeError), error
        assert "aiterate" in str(error)
        assert "Observable.run()" in str(error)
        assert fake.requests == []  # refused before any request was made


@pytest.mark.parametrize("name", NAMES)
def test_iterate_inside_a_running_loop_raises_at_once_naming_aiterate(name: str) -> None:
    with FakeGemini() as fake:
        make = sources(fake)[name]
        error = outcome(lambda: list(rxgem.iterate(make())))
        assert isinstance(error, RuntimeError), error
        assert "aiterate" in str(error)
        assert "rxgem.iterate()" in str(error)


def test_what_can_end_without_the_loop_still_runs() -> None:
    # a sync client's worker thread, and a body pushed on the caller's own thread
    with FakeGemini() as fake:

        def consume() -> Any:
            with httpx.Client() as client:
                sync = rxgem.from_gemini(
                    REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url, client=client
                )
                pieces = sync.pipe(ops.to_list()).run()
            return pieces, rxgem.from_body([b"a", b"b"]).pipe(ops.to_list()).run()

        pieces, body = outcome(consume)
    assert b"".join(pieces).startswith(b"data: ")
    assert body == [b"a", b"b"]


def test_aiterate_and_await_still_work_on_the_loop() -> None:
    with FakeGemini() as fake:

        async def main() -> tuple[list[bytes], list[bytes]]:
            source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
            streamed = [piece async for piece in rxgem.aiterate(source)]
            awaited: list[bytes] = await source.pipe(ops.to_list())
            return streamed, awaited

        streamed, awaited = asyncio.run(asyncio.wait_for(main(), 15))
    assert b"".join(streamed) == b"".join(awaited) != b""
