"""Where a streamed request runs: a worker thread (sync client) or an asyncio task (async).

Both exchanges (:func:`~rxgem.from_gemini`, :func:`~rxgem.transport.from_interactions`)
give :func:`start` their two loops over the connections; this module picks one by the
client and the scheduler, runs it, and makes the subscription's disposal stop it at once:
the socket shut down under a blocked read, or the task cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.scheduler.eventloop import AsyncIOScheduler

from ..bridge import FlowGate, current_gate
from ._http import DEFAULT_TIMEOUT

__all__ = ["AsyncWork", "Run", "SyncWork", "observer_raised", "start"]


class Run:
    """One subscription's request: its cancellation state and the open response."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.response: httpx.Response | None = None
        self.lock = threading.Lock()

    def settle(self) -> None:
        """The body was read to its end: a disposal from now on (a consumer that stops
        at the completion it is handed) must not shut down a socket that goes back to
        the client's pool for the next request."""
        with self.lock:
            self.response = None


SyncWork = Callable[[httpx.Client, Run], None]
"""The connections of one subscription on a sync client (checks ``run.cancelled``)."""
AsyncWork = Callable[[httpx.AsyncClient, FlowGate | None], Awaitable[None]]
"""The connections of one subscription on an async client (waits on the gate if any)."""


def observer_raised(error: Exception, source: str) -> None:
    """Tell the running loop's exception handler what an observer of ``source`` raised.

    On a task, the observer's own error is told here rather than raised: the subscription's
    disposal (which an error reaching an ``AutoDetachObserver`` does) cancels the task at its
    next ``await``, and that ``CancelledError`` would replace the error before anyone saw it.
    """
    asyncio.get_running_loop().call_exception_handler(
        {"message": f"an observer of {source} raised", "exception": error}
    )


def _shutdown(response: httpx.Response | None) -> None:
    """Wake a thread blocked reading ``response`` by shutting its socket down.

    Not over HTTP/2: the socket carries the client's other streams too. The worker
    then stops at the next piece of the body (it checks for cancellation).
    """
    if response is None or response.http_version == "HTTP/2":
        return
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _loop_of(
    scheduler: abc.SchedulerBase | None, *, required: bool
) -> asyncio.AbstractEventLoop | None:
    if isinstance(scheduler, AsyncIOScheduler):
        return scheduler._loop  # reactivex keeps the loop private
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        if required:
            raise RuntimeError(
                "an httpx.AsyncClient needs an event loop: subscribe from async code, or pass"
                " scheduler=AsyncIOScheduler(loop)"
            ) from None
        return None


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def start(
    sync_work: SyncWork,
    async_work: AsyncWork,
    *,
    client: httpx.Client | httpx.AsyncClient | None,
    scheduler: abc.SchedulerBase | None,
    default: abc.SchedulerBase | None,
    name: str,
) -> abc.DisposableBase:
    """Run one subscription's connections where ``client`` and the schedulers say."""
    chosen = scheduler or default
    if isinstance(client, httpx.AsyncClient):
        return _run_async(async_work, client, _loop_of(chosen, required=True), name)
    if client is None:
        loop = _loop_of(chosen, required=False)
        if loop is not None:
            return _run_async(async_work, None, loop, name)
    return _run_sync(sync_work, client, scheduler, name)


def _run_sync(
    sync_work: SyncWork,
    client: httpx.Client | None,
    scheduler: abc.SchedulerBase | None,
    name: str,
) -> abc.DisposableBase:
    run = Run()

    def work(*_: Any) -> None:
        own = client is None
        http = httpx.Client(timeout=DEFAULT_TIMEOUT) if client is None else client
        try:
            sync_work(http, run)
        finally:
            if own:
                http.close()

    if scheduler is not None:
        scheduled = scheduler.schedule(work)
    else:
        threading.Thread(target=work, name=name, daemon=True).start()
        scheduled = None

    def cancel() -> None:
        run.cancelled.set()
        with run.lock:
            _shutdown(run.response)
        if scheduled is not None:
            scheduled.dispose()

    return Disposable(cancel)


def _run_async(
    async_work: AsyncWork,
    client: httpx.AsyncClient | None,
    loop: asyncio.AbstractEventLoop | None,
    name: str,
) -> abc.DisposableBase:
    assert loop is not None
    on_loop = _on_loop(loop)
    # a gate set by a subscriber on another loop or thread is not this loop's
    gate = current_gate.get() if on_loop else None

    async def work() -> None:
        # the gate is for this read alone: tasks started downstream do not inherit it
        current_gate.set(None)
        own = client is None
        http = httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) if client is None else client
        try:
            await async_work(http, gate)
        except Exception as error:
            # told now: a task's error is reported only when (if) the task is collected
            loop.call_exception_handler(
                {"message": f"{name}: the stream's task failed", "exception": error}
            )
        finally:
            if own:
                await http.aclose()

    task = asyncio.run_coroutine_threadsafe(work(), loop) if not on_loop else None
    local = loop.create_task(work(), name=name) if task is None else None

    def cancel() -> None:
        # cancelling a finished task or future does nothing
        if local is not None:
            if local.done():
                return
            if _on_loop(loop):
                local.cancel()
            else:
                loop.call_soon_threadsafe(local.cancel)
        elif task is not None:
            task.cancel()

    return Disposable(cancel)
