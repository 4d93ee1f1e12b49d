"""Where a producer waits for a slow consumer: two gates, one per way of waiting.

The transport pushes each piece of the body through the pipeline as soon as it is
read; alone, a consumer slower than Gemini would let the whole body pile up in
memory. So the consumer makes the producer wait, and how depends on where the
producer runs:

- :class:`FlowGate`, for a producer that is an asyncio task (``from_gemini`` with an
  ``httpx.AsyncClient``). Whoever consumes sets one in :data:`current_gate` before
  subscribing; ``from_gemini``'s task is created in that context and, while the gate
  is held, awaits :meth:`FlowGate.ready` before reading the next piece of the body.
  Holds are counted, so several holders share one gate: :func:`rxgem.aiterate` while
  more than :data:`MAX_BUFFERED` items wait for the consumer, ``rxgem serve`` while a
  send to its client is in progress. A gate belongs to one event loop: hold, release
  and wait on that loop only.
- :class:`ThreadGate`, for a producer on a thread of its own (``from_gemini`` with an
  ``httpx.Client``, or any source emitting on another thread). The thread is blocked
  inside ``on_next`` until the consumer, on another thread or loop, wakes it.

Why two and not one: a :class:`FlowGate` is awaited, and a thread with no event loop
cannot await; a :class:`ThreadGate` blocks its caller, and blocking an event loop's
thread would stop the very consumer that is to release it. The FlowGate is touched by
one loop only and needs no lock; the ThreadGate is woken from another thread, so it
rests on a ``threading.Event`` and re-checks the backlog itself rather than trusting a
count of holds kept on the other side.

Either way the body is not read meanwhile: the socket's kernel buffer fills, and TCP
slows Gemini down.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable
from typing import Final

__all__ = ["MAX_BUFFERED", "RESUME_AT", "FlowGate", "ThreadGate", "current_gate"]

MAX_BUFFERED: Final = 64
"""Items a bridge queues before it pushes back on the producer.

A chunk is typically well under 1 KB, so a stalled consumer holds tens of KB per
stream, under what the socket buffers hold anyway; and a consumer that keeps up
never gets this far behind, so the reader is never stopped for nothing.
"""
RESUME_AT: Final = 16
"""The producer resumes once the consumer is down to this many: one wake-up per 48
items rather than one per item when the consumer is steadily slower."""


class FlowGate:
    """A gate the transport's async reads wait at while anyone holds it (holds are counted)."""

    __slots__ = ("_holds", "_waiter")

    def __init__(self) -> None:
        self._holds = 0
        # made only when a reader has to wait: most gates never close
        self._waiter: asyncio.Future[None] | None = None

    @property
    def is_open(self) -> bool:
        """Whether nobody holds the gate (a read may go ahead)."""
        return self._holds == 0

    def hold(self) -> None:
        """Close the gate until a matching :meth:`release`."""
        self._holds += 1

    def release(self) -> None:
        """Undo one :meth:`hold`; the last one lets waiting readers go."""
        if self._holds > 1:
            self._holds -= 1
            return
        self._holds = 0
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def ready(self) -> None:
        """Return once nobody holds the gate."""
        while self._holds:
            waiter = self._waiter
            if waiter is None or waiter.done():
                waiter = self._waiter = asyncio.get_running_loop().create_future()
            # shielded: one reader cancelled must not cancel the others' wait
            await asyncio.shield(waiter)


current_gate: Final[contextvars.ContextVar[FlowGate | None]] = contextvars.ContextVar(
    "rxgem_flow_gate", default=None
)
"""The gate that ``from_gemini``'s async reads honour, taken at subscription."""


class ThreadGate:
    """Where a producer thread waits while the consumer is too far behind."""

    __slots__ = ("event", "waiting")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.waiting = False

    def wait_while(
        self,
        backlog: Callable[[], int],
        stopped: Callable[[], bool],
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        """Block until ``backlog()`` is below :data:`MAX_BUFFERED` or ``stopped()``.

        The consumer calls :meth:`wake` once it is down to :data:`RESUME_AT`, and
        when it stops (after setting what ``stopped`` reads). Clearing the event
        before checking again means a wake-up is never lost. ``loop``: the
        consumer's event loop, if it has one; the wait ends if that loop closes.
        """
        event = self.event
        while True:
            event.clear()
            self.waiting = True
            if stopped() or backlog() < MAX_BUFFERED:
                break
            # the timeout only matters if the consumer's loop closes under us
            woken = event.wait(None if loop is None else 1.0)
            if not woken and loop is not None and loop.is_closed():
                break
        self.waiting = False

    def wake(self) -> None:
        """Let the waiting thread check again."""
        self.event.set()
