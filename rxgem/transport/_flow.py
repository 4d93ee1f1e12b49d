"""Backpressure for the async transport: a gate its body reads wait at.

The transport pushes each piece of the body through the pipeline as soon as it is
read; alone, a consumer slower than Gemini would let the whole body pile up in
memory. So whoever consumes can set a :class:`FlowGate` in :data:`current_gate`
before subscribing: ``from_gemini``'s task is created in that context, and when
the gate is held it waits before reading the next piece of the body. Meanwhile the
socket is not read, its kernel buffer fills, and TCP slows Gemini down.

Who holds the gate: :func:`rxgem.aiterate` while more than its bound of items wait
for the consumer, and ``rxgem serve`` while a send to its client is in progress.
Holds are counted, so both can share one gate. A gate belongs to one event loop:
hold, release and wait on that loop only.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Final

__all__ = ["FlowGate", "current_gate"]


class FlowGate:
    """A gate the transport's reads wait at while anyone holds it (holds are counted)."""

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
