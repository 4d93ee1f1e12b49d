"""A private event loop on a thread of its own, for what a sync client needs of async-only
code (the model list, the response store): a sync client never needs a running loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["LoopThread"]

T = TypeVar("T")


class LoopThread:
    """An event loop running on a daemon thread, started on first use; :meth:`close` stops
    it. Coroutines run there one call at a time (the caller's thread waits)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, call: Coroutine[Any, Any, T]) -> T:
        """``call``'s result (or its exception), run on the loop."""
        return asyncio.run_coroutine_threadsafe(call, self._started()).result()

    def close(self) -> None:
        """Stop the loop and its thread (idempotent); a later :meth:`run` starts again."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
