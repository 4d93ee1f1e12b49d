"""Where a streamed request runs: a worker thread (sync client) or an asyncio task (async).

Both exchanges (:func:`~rxgem.from_gemini`, :func:`~rxgem.transport.from_interactions`)
give :func:`start` their two loops over the connections; this module picks one by the
client and the scheduler, runs it, and makes the subscription's disposal stop it at once:
the socket shut down under a blocked read, or the task cancelled. An exception of a loop's
own that escapes it reaches the subscriber as the stream's error (:class:`Outlet`): no
thread or task ends without the subscriber hearing of it. One the subscriber raised goes
on up as the exchanges say.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import httpx
from reactivex import abc
from reactivex.disposable import Disposable
from reactivex.scheduler.eventloop import AsyncIOScheduler

from ..bridge import FlowGate, current_gate, refuse_deadlock
from ._http import DEFAULT_TIMEOUT

__all__ = ["AsyncWork", "Outlet", "Run", "SyncWork", "observer_raised", "start"]

T = TypeVar("T")


class Outlet(abc.ObserverBase[T], Generic[T]):
    """The subscriber of one stream, as the loops see it: told its end once, and whether
    it raised (:attr:`raised`), so that an exception escaping a loop is known as the
    subscriber's own or the loop's."""

    __slots__ = ("ended", "observer", "raised")

    def __init__(self, observer: abc.ObserverBase[T]) -> None:
        self.observer = observer
        self.ended = False
        self.raised = False

    def on_next(self, value: T) -> None:
        try:
            self.observer.on_next(value)
        except BaseException:
            self.raised = True
            raise

    def on_error(self, error: Exception) -> None:
        if self.ended:
            return
        self.ended = True
        try:
            self.observer.on_error(error)
        except BaseException:
            self.raised = True
            raise

    def on_completed(self) -> None:
        if self.ended:
            return
        self.ended = True
        try:
            self.observer.on_completed()
        except BaseException:
            self.raised = True
            raise


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
    outlet: Outlet[Any],
) -> abc.DisposableBase:
    """Run one subscription's connections where ``client`` and the schedulers say;
    ``outlet`` (what the loops emit to) is told the error of a loop that raises."""
    chosen = scheduler or default
    if isinstance(client, httpx.Client):
        return _run_sync(sync_work, client, scheduler, name, outlet)
    loop = _loop_of(chosen, required=client is not None)
    if loop is None:
        return _run_sync(sync_work, None, scheduler, name, outlet)
    # before the task: a consumer blocking this loop's thread would never see it run
    refuse_deadlock(loop, default, name.removeprefix("rxgem-").replace("-", "_"))
    return _run_async(async_work, client, loop, name, outlet)


def _run_sync(
    sync_work: SyncWork,
    client: httpx.Client | None,
    scheduler: abc.SchedulerBase | None,
    name: str,
    outlet: Outlet[Any],
) -> abc.DisposableBase:
    run = Run()

    def work(*_: Any) -> None:
        own = client is None
        try:
            http = httpx.Client(timeout=DEFAULT_TIMEOUT) if client is None else client
            try:
                sync_work(http, run)
            finally:
                if own:
                    http.close()
        except Exception as error:
            if outlet.raised or outlet.ended:  # the subscriber's own: it goes on up
                raise
            if not run.cancelled.is_set():
                outlet.on_error(error)

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
    outlet: Outlet[Any],
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
            failed: Exception | None = error
            if not (outlet.raised or outlet.ended):  # the loop's own: the stream's error
                try:
                    outlet.on_error(error)
                    failed = None
                except Exception as raised:
                    failed = raised
            if failed is not None:
                # told now: a task's error is reported only when (if) the task is collected
                loop.call_exception_handler(
                    {"message": f"{name}: the stream's task failed", "exception": failed}
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
