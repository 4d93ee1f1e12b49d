"""Every fault FakeGemini can inject, sync and async: the documented error, the data that
arrived before it, and nothing left behind (threads, asyncio tasks, sockets, files)."""

from __future__ import annotations

import asyncio
import gc
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import rxgem
from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse
from rxgem.transport import AiohttpTransport

MODEL = "gemini-2.5-flash"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}
TEXT = samples.read("text")
FIRST_EVENT = TEXT.split(b"\r\n\r\n")[0] + b"\r\n\r\n"
FIRST_TEXT = samples.expected()["text.sse"]["choices"][0]["content"][:5]
QUOTA = {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}


class Fault:
    def __init__(
        self,
        response: FakeResponse,
        error: type[Exception] | None,
        delivers_text: bool,
        timeout: float = 5.0,
    ) -> None:
        self.response = response
        self.error = error
        self.delivers_text = delivers_text
        self.timeout = timeout


FAULTS = {
    "http-error": Fault(FakeResponse(status=429, error=QUOTA), rxgem.GeminiAPIError, False),
    "non-json-error": Fault(
        FakeResponse(status=502, body=b"<html>Bad Gateway</html>", content_type="text/html"),
        rxgem.GeminiAPIError,
        False,
    ),
    "delay-then-timeout": Fault(
        FakeResponse(body=TEXT, delay=1.5), rxgem.GeminiTransportError, False, timeout=0.3
    ),
    "slow-trickle": Fault(FakeResponse(body=TEXT, chunk_size=50, pause=0.005), None, True),
    "connection-drop": Fault(
        FakeResponse(body=TEXT, split_at=[len(FIRST_EVENT)], drop_after=len(FIRST_EVENT) + 40),
        rxgem.GeminiTransportError,
        True,
    ),
    "raw-error-appended": Fault(
        FakeResponse(body=FIRST_EVENT, raw_error={"code": 499, "status": "CANCELLED"}),
        rxgem.GeminiAPIError,
        True,
    ),
    "keep-alive-comments": Fault(
        FakeResponse(body=TEXT, split_at=[len(FIRST_EVENT)], pause=0.05, keepalive=0.01),
        None,
        True,
    ),
}


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def settle(condition: Callable[[], bool], seconds: float = 3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        gc.collect()
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def check_outcome(fault: Fault, chunks: list[Any], error: BaseException | None) -> None:
    if fault.error is None:
        assert error is None, repr(error)
    else:
        assert isinstance(error, fault.error), repr(error)
    content = rxgem.assemble(chunks)["choices"][0]["message"].get("content") if chunks else None
    if fault.delivers_text:
        assert content is not None
        assert content.startswith(FIRST_TEXT)
    else:
        assert chunks == []


@pytest.mark.parametrize("name", list(FAULTS))
def test_sync_fault_leaves_nothing_behind(name: str) -> None:
    fault = FAULTS[name]
    with FakeGemini(fault.response) as fake:
        threads, fds = threading.active_count(), open_fds()
        chunks: list[Any] = []
        error: BaseException | None = None
        try:
            for chunk in rxgem.iterate(
                rxgem.stream_chat(
                    REQUEST, model=MODEL, api_key="k", base_url=fake.base_url, timeout=fault.timeout
                )
            ):
                chunks.append(chunk)
        except rxgem.RxGemError as exc:
            error = exc
        check_outcome(fault, chunks, error)
        assert settle(lambda: threading.active_count() <= threads), "a thread was left running"
        assert settle(lambda: open_fds() <= fds), "a socket or file was left open"


@pytest.mark.parametrize("name", list(FAULTS))
@pytest.mark.parametrize("transport", ["httpx", "aiohttp"])
def test_async_fault_leaves_nothing_behind(name: str, transport: str) -> None:
    """Also through the server's aiohttp transport (its upstream client by default)."""
    fault = FAULTS[name]

    async def main() -> None:
        async with FakeGemini(fault.response) as fake:
            fds = open_fds()
            tasks = len(asyncio.all_tasks())
            chunks: list[Any] = []
            error: BaseException | None = None
            chosen = AiohttpTransport() if transport == "aiohttp" else None
            async with httpx.AsyncClient(timeout=fault.timeout, transport=chosen) as client:
                source = rxgem.stream_chat(
                    REQUEST, model=MODEL, api_key="k", base_url=fake.base_url, client=client
                )
                try:
                    async for chunk in rxgem.aiterate(source):
                        chunks.append(chunk)
                except rxgem.RxGemError as exc:
                    error = exc
            check_outcome(fault, chunks, error)
            await asyncio.sleep(0.05)
            assert len(asyncio.all_tasks()) <= tasks, "an asyncio task was left running"
            assert await asyncio.to_thread(settle, lambda: open_fds() <= fds)

    threads = threading.active_count()
    asyncio.run(main())
    assert settle(lambda: threading.active_count() <= threads), "a thread was left running"


def test_cancelled_streams_leave_nothing_behind() -> None:
    slow = FakeResponse(body=TEXT, split_at=[len(FIRST_EVENT)], pause=5.0)
    with FakeGemini(slow) as fake:
        threads, fds = threading.active_count(), open_fds()
        for _ in range(5):
            for _chunk in rxgem.iterate(
                rxgem.stream_chat(REQUEST, model=MODEL, api_key="k", base_url=fake.base_url)
            ):
                break
        assert fake.wait_for_disconnect(2.0, count=5)
        assert settle(lambda: threading.active_count() <= threads), "a thread was left running"
        assert settle(lambda: open_fds() <= fds), "a socket or file was left open"
