"""Request translation off the event loop: a large body's is done in a worker thread.

Translating a request (messages, input items, tools) is one synchronous pass, linear in
the body and bounded by ``max_request_bytes`` and ``max_json_values``; but for a large
body it is long (a second for 200,000 messages), and on the event loop it would hold
every other request, ``/healthz`` included. A body above :data:`INLINE_BYTES` is
translated in a worker thread, one at a time per process (the GIL runs one at a time
anyway; the others wait their turn without holding the loop), and the loop keeps
answering between the thread's slices of the GIL. A small body is translated in place,
where handing it to a thread would cost more than the work.

A Responses translation collects its warnings with :func:`warnings.catch_warnings`,
which is process-wide: one such translation must not overlap another, so a small one
(``alone``) waits while a thread translates.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable
from functools import partial
from typing import Final, ParamSpec, TypeVar

__all__ = ["INLINE_BYTES", "Offload"]

INLINE_BYTES: Final = 16 * 1024
"""The largest body translated on the event loop (about a millisecond of work)."""

P = ParamSpec("P")
T = TypeVar("T")


class Offload:
    """Where a request's translation runs: in place for a small body, else in a worker
    thread, one at a time.

    Args:
        inline_bytes: the largest body translated in place.
    """

    def __init__(self, inline_bytes: int = INLINE_BYTES) -> None:
        self.inline_bytes = inline_bytes
        self._turn = asyncio.Lock()

    async def run(
        self,
        size: int,
        work: Callable[P, T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """``work(*args, **kwargs)`` for a body of ``size`` bytes; what it returns or raises.

        The turn is held until the thread ends, even if the caller is cancelled meanwhile
        (a thread cannot be stopped), so no two threads ever translate at once.
        """
        if size <= self.inline_bytes:
            return work(*args, **kwargs)
        async with self._turn:
            thread = asyncio.ensure_future(
                asyncio.to_thread(_uncollected, partial(work, *args, **kwargs))
            )
            try:
                return await asyncio.shield(thread)
            except asyncio.CancelledError:
                await asyncio.wait([thread])
                raise

    async def run_alone(self, size: int, work: Callable[[], T]) -> T:
        """:meth:`run` for work that must not overlap another translation (one that
        catches warnings): a small body's waits while a thread translates."""
        if size <= self.inline_bytes and self._turn.locked():
            async with self._turn:
                return work()
        return await self.run(size, work)


def _uncollected(work: Callable[[], T]) -> T:
    """``work`` with the cyclic collector paused, what it made moved to the oldest
    generation unscanned (``freeze`` then ``unfreeze``: two list splices).

    The work makes plain trees (no cycles), millions of objects for a large body: left to
    the collector, each full collection on the way would scan them all, and a young
    generation that big scanned at once would be a pause of a quarter second; either
    holds the GIL, so the event loop too. In the oldest generation they wait for the
    next full collection, as any long-lived object does (refcounting frees them when the
    request ends)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return work()
    finally:
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()
