"""The exchange machine driven over httpx: one loop for a sync client, one for an async one,
and the ``Observable[bytes]`` that runs them.

Each loop makes the connections the :class:`~rxgem.transport._machine.ExchangeMachine`
asks for, feeds it what happens on them, emits what it lets through and waits as it says;
the cassette of each connection is recorded here. Where a loop runs, backpressure, disposal
and what an observer raises are as :func:`~rxgem.from_gemini`'s docstring says: a sync loop
checks for cancellation before each piece and before each signal, and says nothing once
the stream was disposed of; an async loop is cancelled at its next ``await``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT
from reactivex import Observable, abc

from ..bridge import FlowGate
from ._cassette import Tape, Upstream
from ._machine import Done, ExchangeMachine, Fail, Outcome, Request
from ._runners import Outlet, Run, observer_raised, start

__all__ = ["Timeout", "drive_async", "drive_sync", "exchange_source"]

Timeout = httpx.Timeout | float | UseClientDefault | None
Sink = Callable[[dict[str, Any]], None]


def _tape(
    sink: Sink | None, kind: Upstream, request: Request, response: httpx.Response
) -> Tape | None:
    """A recording of this connection, when recording."""
    if sink is None:
        return None
    url = str(response.request.url)
    tape = Tape(sink, kind, request.method, url, request.content, request.headers)
    tape.open(response.status_code, response.headers)
    return tape


def drive_sync(
    machine: ExchangeMachine,
    observer: abc.ObserverBase[bytes],
    http: httpx.Client,
    run: Run,
    timeout: Timeout,
    sink: Sink | None = None,
) -> None:
    """Run ``machine``'s connections on ``http`` until the stream ends or ``run`` is
    cancelled, emitting to ``observer`` on this thread."""
    kind = machine.strategy.kind
    while not run.cancelled.is_set():
        request = machine.connect()
        outcome: Outcome
        tape: Tape | None = None
        observing = False  # in a call of the observer's
        try:
            with http.stream(
                request.method,
                request.url,
                content=request.content,
                headers=request.headers,
                params=request.params or None,
                timeout=timeout,
            ) as response:
                with run.lock:
                    run.response = response
                if run.cancelled.is_set():
                    return
                tape = _tape(sink, kind, request, response)
                machine.response(response.status_code, response.headers, response.reason_phrase)
                for chunk in response.iter_bytes():
                    if tape is not None:
                        tape.add(chunk)
                    if run.cancelled.is_set():
                        return
                    out = machine.data(chunk)
                    if tape is not None and machine.complete:
                        tape.complete = True  # the consumer may stop at the end event
                    if out:
                        observing = True
                        observer.on_next(out)
                        observing = False
                    if machine.stopped:
                        break  # leaving the block closes the response
                outcome = machine.end()
                if tape is not None:
                    tape.complete = machine.complete
                if isinstance(outcome, Done):
                    if tape is not None:
                        tape.close()  # before the consumer hears the end
                    if not run.cancelled.is_set():
                        run.settle()
                        observing = True
                        observer.on_completed()
                    return
        except httpx.HTTPError as exc:
            if run.cancelled.is_set():
                return
            outcome = machine.transport_error(exc)
        except Exception as exc:
            if observing:  # the observer's own error propagates
                raise
            if not run.cancelled.is_set():
                observer.on_error(exc)
            return
        finally:
            with run.lock:
                run.response = None
            if tape is not None:
                tape.close()
        if run.cancelled.is_set():
            return
        if isinstance(outcome, Fail):
            observer.on_error(outcome.error)
            return
        if isinstance(outcome, Done):  # the connection failed after the stream said done
            observer.on_completed()
            return
        if run.cancelled.wait(outcome.delay):
            return


async def drive_async(
    machine: ExchangeMachine,
    observer: abc.ObserverBase[bytes],
    http: httpx.AsyncClient,
    gate: FlowGate | None,
    timeout: Timeout,
    sink: Sink | None = None,
    source: str = "the exchange",
) -> None:
    """Run ``machine``'s connections on ``http`` until the stream ends, emitting to
    ``observer`` on the loop; before each read, wait while ``gate`` is held. What the
    observer raises is told to the loop's exception handler as an observer of ``source``'s."""
    kind = machine.strategy.kind
    while True:
        request = machine.connect()
        outcome: Outcome
        tape: Tape | None = None
        try:
            async with http.stream(
                request.method,
                request.url,
                content=request.content,
                headers=request.headers,
                params=request.params or None,
                timeout=timeout,
            ) as response:
                tape = _tape(sink, kind, request, response)
                machine.response(response.status_code, response.headers, response.reason_phrase)
                data = machine.data  # once per connection: this loop runs per chunk
                async for chunk in response.aiter_bytes():
                    if tape is not None:
                        tape.add(chunk)
                    out = data(chunk)
                    if tape is not None and machine.complete:
                        tape.complete = True  # the consumer may stop at the end event
                    if out:
                        try:
                            observer.on_next(out)
                        except Exception as raised:  # the observer's own
                            observer_raised(raised, source)
                            return
                        if machine.stopped:
                            break
                        if gate is not None and not gate.is_open:
                            await gate.ready()  # before the next read
                    elif machine.stopped:
                        break  # leaving the block closes the response
                outcome = machine.end()
                if tape is not None:
                    tape.complete = machine.complete
                if isinstance(outcome, Done):
                    if tape is not None:
                        tape.close()
                    try:
                        observer.on_completed()
                    except Exception as raised:
                        observer_raised(raised, source)
                    return
        except httpx.HTTPError as exc:
            outcome = machine.transport_error(exc)
        except Exception as exc:
            observer.on_error(exc)
            return
        finally:
            if tape is not None:
                tape.close()  # a cancelled task too
        if isinstance(outcome, Fail):
            observer.on_error(outcome.error)
            return
        if isinstance(outcome, Done):  # the connection failed after the stream said done
            observer.on_completed()
            return
        await asyncio.sleep(outcome.delay)


def exchange_source(
    machine: Callable[[], ExchangeMachine],
    *,
    client: httpx.Client | httpx.AsyncClient | None,
    scheduler: abc.SchedulerBase | None,
    timeout: Timeout,
    sink: Sink | None,
    source: str,
) -> Observable[bytes]:
    """The stream of one exchange per subscription (``machine`` makes each one's machine),
    run where :func:`~rxgem.transport._runners.start` says; ``source`` names it in
    threads and messages (``from_gemini``)."""

    def subscribe(
        observer: abc.ObserverBase[bytes], default: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        exchange = machine()
        outlet = Outlet(observer)
        return start(
            lambda http, run: drive_sync(exchange, outlet, http, run, timeout, sink),
            lambda http, gate: drive_async(exchange, outlet, http, gate, timeout, sink, source),
            client=client,
            scheduler=scheduler,
            default=default,
            name="rxgem-" + source.replace("_", "-"),
            outlet=outlet,
        )

    return Observable(subscribe)
