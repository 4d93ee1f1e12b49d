"""Every rxgem source hands its error to a subscriber without ``on_error`` as
``reactivex.from_iterable`` does (6.1.1): raised, never dropped. On a worker thread,
``threading.excepthook`` is told; on an event loop, the loop's exception handler; on
the subscriber's own thread (``from_body``), ``subscribe()`` raises it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest
from reactivex import Observable

import rxgem
from rxgem import GeminiAPIError
from rxgem.operators import interactions_to_openai
from rxgem.testing import FakeGemini
from rxgem.transport import from_interactions

MODEL = "gemini-2.5-flash"
KEY = "test-key"
GC = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
CHAT = {"model": MODEL, "messages": [{"role": "user", "content": "Hi"}], "stream": True}

Source = Callable[[str], Observable[Any]]

SOURCES: dict[str, Source] = {
    "from_gemini (404)": lambda url: rxgem.from_gemini(
        GC, model="gpt-4o", api_key=KEY, base_url=url
    ),
    "from_interactions (404)": lambda url: from_interactions(
        {"model": "gpt-4o", "input": "Hi"}, api_key=KEY, base_url=url
    ),
    "from_gemini | gemini_to_openai": lambda url: rxgem.from_gemini(
        GC, model=MODEL, api_key=KEY, base_url=url
    ).pipe(rxgem.gemini_to_openai()),
    "from_interactions | interactions_to_openai": lambda url: from_interactions(
        {"model": MODEL, "input": "Hi"}, api_key=KEY, base_url=url
    ).pipe(interactions_to_openai()),
    "stream_chat": lambda url: rxgem.stream_chat(GC, model=MODEL, api_key=KEY, base_url=url),
    "chat_completions": lambda url: rxgem.chat_completions(CHAT, api_key=KEY, base_url=url),
    "responses": lambda url: rxgem.responses(
        {"model": MODEL, "input": "Hi", "stream": True}, api_key=KEY, base_url=url
    ),
}


def on_a_thread(source: Observable[Any], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    told: list[Any] = []
    heard = threading.Event()

    def hook(args: threading.ExceptHookArgs) -> None:
        told.append(args.exc_value)
        heard.set()

    monkeypatch.setattr(threading, "excepthook", hook)
    source.subscribe(lambda _: None)
    assert heard.wait(10), "the error vanished"
    return told


def on_a_loop(source: Observable[Any]) -> list[Any]:
    async def main() -> list[Any]:
        told: list[Any] = []
        asyncio.get_running_loop().set_exception_handler(
            lambda _, context: told.append(context.get("exception"))
        )
        source.subscribe(lambda _: None)
        for _ in range(500):  # at most 10 s
            if told:
                break
            await asyncio.sleep(0.02)
        return told

    return asyncio.run(main())


@pytest.mark.parametrize("name", list(SOURCES))
@pytest.mark.parametrize("where", ["thread", "loop"])
def test_an_error_without_on_error_is_raised_where_the_source_runs(
    name: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeGemini(scenario="error-mid-stream") as fake:
        source = SOURCES[name](fake.base_url)
        told = on_a_thread(source, monkeypatch) if where == "thread" else on_a_loop(source)
    assert [type(error) for error in told] == [GeminiAPIError]


def test_from_body_raises_it_at_subscribe_as_from_iterable() -> None:
    with FakeGemini(scenario="error-mid-stream") as fake:
        pieces = rxgem.from_gemini(GC, model=MODEL, api_key=KEY, base_url=fake.base_url)
        whole = b"".join(rxgem.iterate(pieces))
    with pytest.raises(GeminiAPIError):
        rxgem.from_body(whole).pipe(rxgem.gemini_to_openai()).subscribe(lambda _: None)
