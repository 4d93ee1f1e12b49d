"""A stream through ``rxgem.OpenAITransport`` flows as Gemini's bytes arrive, and stops
when the client stops: the first chunk reaches the ``openai`` SDK while Gemini is still
sending, and closing the SDK's stream early cancels the upstream request (FakeGemini
sees the client go away), sync and async, chat and Responses."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
from server_harness import event_ends

import rxgem
from rxgem.testing import FakeGemini, FakeResponse, event, finish, text, usage

MODEL = "gemini-2.5-flash"
WORDS = [f"word{i} " for i in range(8)]


def _slow(pause: float) -> FakeResponse:
    last = len(WORDS) - 1
    body = b"".join(
        event(text(w), finish("STOP"), usage(5, 8)) if i == last else event(text(w))
        for i, w in enumerate(WORDS)
    )
    return FakeResponse(body=body, split_at=event_ends(body), pause=pause)


def _clients(fake: FakeGemini) -> tuple[openai.OpenAI, openai.AsyncOpenAI]:
    transport = rxgem.OpenAITransport(api_key="k", base_url=fake.base_url)
    common: dict[str, Any] = {
        "api_key": "unused",
        "base_url": "http://rxgem.local/v1",
        "max_retries": 0,
        "_strict_response_validation": True,
    }
    return (
        openai.OpenAI(http_client=httpx.Client(transport=transport), **common),
        openai.AsyncOpenAI(http_client=httpx.AsyncClient(transport=transport), **common),
    )


def _open_sync(client: openai.OpenAI, kind: str) -> Any:
    if kind == "chat":
        messages = [{"role": "user", "content": "Count."}]
        return client.chat.completions.create(model=MODEL, messages=messages, stream=True)  # type: ignore[arg-type]
    return client.responses.create(model=MODEL, input="Count.", stream=True, store=False)


async def _open_async(client: openai.AsyncOpenAI, kind: str) -> Any:
    if kind == "chat":
        messages = [{"role": "user", "content": "Count."}]
        return await client.chat.completions.create(model=MODEL, messages=messages, stream=True)  # type: ignore[arg-type]
    return await client.responses.create(model=MODEL, input="Count.", stream=True, store=False)


def _has_text(item: Any) -> bool:
    if hasattr(item, "choices"):
        return bool(item.choices and item.choices[0].delta.content)
    return bool(getattr(item, "type", "") == "response.output_text.delta")


@pytest.mark.parametrize("kind", ["chat", "responses"])
def test_the_first_text_arrives_while_gemini_is_still_sending(kind: str) -> None:
    # a second between Gemini's events: the whole answer takes 7 s to send
    with FakeGemini(_slow(1.0)) as fake:
        client, aclient = _clients(fake)
        with _open_sync(client, kind) as stream:
            first = next(item for item in stream if _has_text(item))
            assert fake.completed == 0  # Gemini had not finished: nothing was buffered
        assert first is not None

        async def main() -> None:
            async with await _open_async(aclient, kind) as stream:
                async for item in stream:
                    if _has_text(item):
                        break
                assert fake.completed == 0
            await aclient.close()

        asyncio.run(main())


@pytest.mark.parametrize("kind", ["chat", "responses"])
def test_closing_the_sdk_stream_cancels_the_upstream_request(kind: str) -> None:
    # 2 s between events (14 s in all): only a cancelled request ends within the wait below
    with FakeGemini(_slow(2.0)) as fake:
        client, aclient = _clients(fake)
        with _open_sync(client, kind) as stream:
            next(item for item in stream if _has_text(item))
        assert fake.wait_for_disconnect(timeout=5.0)

        async def main() -> None:
            stream = await _open_async(aclient, kind)
            async for item in stream:
                if _has_text(item):
                    break
            await stream.close()
            assert await fake.await_for_disconnect(5.0, count=2)
            await aclient.close()

        asyncio.run(main())
        assert fake.completed == 0


def test_an_async_client_never_blocks_its_event_loop() -> None:
    # Gemini takes 0.3 s between events: a loop blocked while the transport waits would
    # not run the ticker at all until the stream ended
    with FakeGemini(_slow(0.3)) as fake:
        _, aclient = _clients(fake)

        async def main() -> tuple[int, int]:
            ticks = 0
            done = asyncio.Event()

            async def ticker() -> None:
                nonlocal ticks
                while not done.is_set():
                    await asyncio.sleep(0.02)
                    ticks += 1

            task = asyncio.create_task(ticker())
            seen_at: list[int] = []
            async with await _open_async(aclient, "chat") as stream:
                async for item in stream:
                    if _has_text(item):
                        seen_at.append(ticks)
            done.set()
            await task
            await aclient.close()
            return seen_at[0], seen_at[-1]

        first, last = asyncio.run(main())
    assert last - first >= 10  # the loop ran between Gemini's events
