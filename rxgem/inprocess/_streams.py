"""A streamed answer's body as httpx reads it: a :class:`SyncFrames` or an
:class:`AsyncFrames` that pulls the pipeline's items (``rxgem.iterate`` /
``rxgem.aiterate``) and frames each as it comes, never a buffered body.

Closing the body early (the SDK leaving a stream, ``response.close()``) disposes of the
subscription, which cancels the upstream request: the worker thread's socket is shut
down, the read task cancelled. The bridges' bounds hold back Gemini's reads while the
client reads slowly.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx

from ._answers import Answer

__all__ = ["AsyncFrames", "SyncFrames"]

T = TypeVar("T")


class SyncFrames(httpx.SyncByteStream):
    """A streamed answer for a sync client: ``first`` already taken from ``items``."""

    def __init__(
        self,
        answer: Answer,
        items: Iterator[Any],
        first: list[Any],
        run: Callable[[Awaitable[None]], None],
        close: Callable[[], None],
    ) -> None:
        self.answer = answer
        self.items = items
        self.first = first
        self.run = run
        self._close = close

    def __iter__(self) -> Iterator[bytes]:
        answer = self.answer
        for item in self.first:
            frame = answer.frame(item)
            if frame:
                yield frame
        self.first = []
        error: Exception | None = None
        try:
            for item in self.items:
                frame = answer.frame(item)
                if frame:
                    yield frame
        except Exception as exc:
            error = exc
        pending = answer.finish(error)
        if pending is not None:
            self.run(pending)
        last = answer.last_frame(error)
        if last:
            yield last

    def close(self) -> None:
        self._close()


class AsyncFrames(httpx.AsyncByteStream):
    """A streamed answer for an async client: ``first`` already taken from ``items``."""

    def __init__(
        self,
        answer: Answer,
        items: AsyncIterator[Any],
        first: list[Any],
        close: Callable[[], None],
    ) -> None:
        self.answer = answer
        self.items = items
        self.first = first
        self._close = close

    async def __aiter__(self) -> AsyncIterator[bytes]:
        answer = self.answer
        for item in self.first:
            frame = answer.frame(item)
            if frame:
                yield frame
        self.first = []
        error: Exception | None = None
        try:
            async for item in self.items:
                frame = answer.frame(item)
                if frame:
                    yield frame
        except Exception as exc:
            error = exc
        pending = answer.finish(error)
        if pending is not None:
            await pending
        last = answer.last_frame(error)
        if last:
            yield last

    async def aclose(self) -> None:
        self._close()
