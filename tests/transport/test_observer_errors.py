"""What a subscriber raises, and a stream's error given to a subscriber without ``on_error``,
leave the transport's sources as they leave reactivex's own (``from_iterable`` since 6.1.1):
they propagate out of the worker, never sent back down as ``on_error`` where stopped observers
would drop them. On a thread, ``threading.excepthook`` is told; on an event loop, the loop's
exception handler, at once. Either way the connection is closed.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from reactivex import Observable

import rxgem
from rxgem import GeminiAPIError, samples
from rxgem.testing import FakeGemini, FakeResponse
from rxgem.transport import from_interactions

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
INTERACTION = {"model": MODEL, "input": "Hi", "stream": True}
KEY = "test-key"


class Hooked:
    """The exceptions ``threading.excepthook`` is given while installed."""

    def __init__(self) -> None:
        self.errors: list[BaseException | None] = []
        self.told = threading.Event()

    def __call__(self, args: threading.ExceptHookArgs) -> None:
        self.errors.append(args.exc_value)
        self.told.set()


@pytest.fixture
def hooked(monkeypatch: pytest.MonkeyPatch) -> Hooked:
    hook = Hooked()
    monkeypatch.setattr(threading, "excepthook", hook)
    return hook


def test_a_stream_error_to_a_subscriber_without_on_error_is_not_dropped(hooked: Hooked) -> None:
    chunks: list[Any] = []
    with FakeGemini(samples.read("error_mid_stream")) as fake:
        source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        source.pipe(rxgem.gemini_to_openai(model="m")).subscribe(chunks.append)
        assert hooked.told.wait(10), "the error vanished"
    assert chunks
    assert [type(error) for error in hooked.errors] == [GeminiAPIError]


def test_what_a_subscriber_raises_propagates_and_closes_the_connection(hooked: Hooked) -> None:
    failure = ValueError("consumer failed")
    given: list[Exception] = []

    def take(_: bytes) -> None:
        raise failure

    body = samples.read("thinking_tools")
    ends = [i + 4 for i in range(len(body)) if body.startswith(b"\r\n\r\n", i)]
    slow = FakeResponse(body=body, split_at=ends[:-1], pause=5.0)  # the rest 5 s later
    with FakeGemini(slow) as fake:
        source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        source.subscribe(take, given.append)
        assert hooked.told.wait(10)
        assert fake.wait_for_disconnect(5.0)
    assert hooked.errors == [failure]
    assert given == []  # as from_iterable: not handed back to the observer that raised it


def test_an_interactions_subscriber_that_raises_is_told_on_its_thread(hooked: Hooked) -> None:
    failure = ValueError("consumer failed")
    given: list[Exception] = []

    def take(_: bytes) -> None:
        raise failure

    with FakeGemini() as fake:
        source = from_interactions(INTERACTION, api_key=KEY, base_url=fake.base_url)
        source.subscribe(take, given.append)
        assert hooked.told.wait(10)
    assert hooked.errors == [failure]
    assert given == []


def on_loop(
    source: Observable[Any], take: Callable[[Any], None] | None = None
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Subscribe without ``on_error`` on a running loop: the items, and what the loop's
    exception handler was told (waiting for it at most 10 s)."""

    async def main() -> tuple[list[Any], list[dict[str, Any]]]:
        loop = asyncio.get_running_loop()
        told: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _, context: told.append(context))
        items: list[Any] = []
        source.subscribe(take or items.append)
        for _ in range(500):  # the task's end, at most 10 s
            if told:
                break
            await asyncio.sleep(0.02)
        return items, told

    return asyncio.run(main())


def test_on_a_loop_a_stream_error_without_on_error_reaches_the_exception_handler() -> None:
    with FakeGemini(samples.read("error_mid_stream")) as fake:
        source = rxgem.from_gemini(REQUEST, model=MODEL, api_key=KEY, base_url=fake.base_url)
        items, told = on_loop(source.pipe(rxgem.gemini_to_openai(model="m")))
    assert items
    assert [type(context.get("exception")) for context in told] == [GeminiAPIError]
    assert told[0]["message"] == "an observer of from_gemini raised"


def test_on_a_loop_an_interactions_subscriber_that_raises_reaches_the_handler() -> None:
    failure = ValueError("consumer failed")

    def take(_: bytes) -> None:
        raise failure

    with FakeGemini() as fake:
        source = from_interactions(INTERACTION, api_key=KEY, base_url=fake.base_url)
        _, told = on_loop(source, take)
    assert [context.get("exception") for context in told] == [failure]
    assert told[0]["message"] == "an observer of from_interactions raised"
