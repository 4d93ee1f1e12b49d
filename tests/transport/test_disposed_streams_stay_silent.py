"""A stream disposed of says nothing more, whatever ends its connection afterwards: both
sources, on a sync client, where a failure that is not httpx's own (a transport of the
user's that raises its own exception) arrives after the disposal.

The observer here is reached without ``Observable.subscribe`` (no auto-detach), as an
operator's inner observer may be: only the source itself can keep it from hearing an
error after it was disposed of.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from reactivex import Observable, abc

import rxgem
from rxgem.transport import from_interactions

KEY = "test-key"
BASE = "http://127.0.0.1:9/v1beta"  # never reached: the transport below fails first


class FailsOnceDisposed(httpx.BaseTransport):
    """A transport whose request waits until the test disposed of the stream, then fails
    with an exception of its own (not an ``httpx.HTTPError``)."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.disposed = threading.Event()
        self.raised = threading.Event()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.entered.set()
        assert self.disposed.wait(10)
        self.raised.set()
        raise RuntimeError("the transport's own failure")


class Heard(abc.ObserverBase[Any]):
    def __init__(self) -> None:
        self.heard: list[str] = []

    def on_next(self, value: Any) -> None:
        self.heard.append("next")

    def on_error(self, error: Exception) -> None:
        self.heard.append(f"error: {error}")

    def on_completed(self) -> None:
        self.heard.append("completed")


SOURCES: dict[str, Callable[[httpx.Client], Observable[bytes]]] = {
    "from_gemini": lambda http: rxgem.from_gemini(
        {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]},
        model="gemini-2.5-flash",
        api_key=KEY,
        base_url=BASE,
        client=http,
    ),
    "from_interactions": lambda http: from_interactions(
        {"model": "gemini-2.5-flash", "input": "Hi"}, api_key=KEY, base_url=BASE, client=http
    ),
}


@pytest.mark.parametrize("name", list(SOURCES))
def test_an_error_after_the_disposal_is_not_heard(name: str) -> None:
    transport = FailsOnceDisposed()
    observer = Heard()
    workers = set(threading.enumerate())
    with httpx.Client(transport=transport) as http:
        subscription = SOURCES[name](http)._subscribe_core(observer)
        assert transport.entered.wait(10)
        subscription.dispose()
        transport.disposed.set()
        assert transport.raised.wait(10)
        for worker in set(threading.enumerate()) - workers:
            worker.join(10)
    assert observer.heard == []
