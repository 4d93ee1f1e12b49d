"""Answering one ``POST /v1/responses`` over ASGI: Responses events, streamed or assembled.

:class:`ResponsesAnswer` is a :class:`~rxgem.server.stream.StreamedAnswer` (the
disconnect watch, the drain, the send timeout, backpressure) with the Responses framing:

- Streaming: each event is a named SSE frame (``event: response.output_text.delta``,
  ``data: {...}``), as OpenAI sends them, and the stream ends with the response's
  terminal event (``response.completed``, ``.incomplete`` or ``.failed``), with no
  ``data: [DONE]``. A failure before any event is an ordinary HTTP error reply; a
  failure after ``response.created`` arrives as ``response.failed`` (the pipeline sends
  it, with the output so far), and one the pipeline could not report so (it never
  started a response) as an ``error`` event. Keep-alives are SSE comments.
- Not streaming: the terminal event's ``response`` as JSON (with spaces before it
  while Gemini is silent, as for chat); an upstream failure is an error reply.

Before the terminal event (or the JSON) goes out, ``on_response`` runs (the server
stores the response there), so a client that read ``response.completed`` can continue
the conversation at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from reactivex import Observable

from ...bridge import FlowGate
from ...core.responses import Response, ResponsesEvent
from ...replies import ErrorReply
from ..stream import Answering, FrameBuffer, StreamedAnswer, error_event, event_frame

__all__ = ["ResponsesAnswer"]

_TERMINAL: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})

OnResponse = Callable[[Response], Awaitable[None]]


def _terminal(event: ResponsesEvent) -> Response | None:
    """The response of a terminal event (else ``None``)."""
    if event.__struct_config__.tag in _TERMINAL:
        response: Response = event.response  # type: ignore[union-attr]
        return response
    return None


class EventFrames(FrameBuffer[ResponsesEvent]):
    """The observer of a streamed response: each event framed at once, but the terminal
    one, which waits in :attr:`last` until the sender has run ``on_response``."""

    __slots__ = ("last", "next_sequence", "response")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.response: Response | None = None
        self.last: ResponsesEvent | None = None
        self.next_sequence = 0

    def on_next(self, event: ResponsesEvent) -> None:
        self.next_sequence = event.sequence_number + 1
        telemetry = self.record.telemetry
        if telemetry is not None:
            telemetry.chunk(time.perf_counter())
        response = _terminal(event)
        if response is None:
            self.push(event_frame(event))
            return
        self.response = response
        self.last = event
        if response.usage is not None:
            self.record.used(response.usage)
        self.finish_reasons[0] = response.status
        self._wake()


class ResponsesAnswer(StreamedAnswer):
    """The ASGI app answering one Responses request from its events' Observable.

    Args:
        source: the request's events (not subscribed yet).
        on_response: awaited with the final response before it is sent (never raises).
        others: as :class:`~rxgem.server.stream.StreamedAnswer`'s.
    """

    def __init__(
        self,
        source: Observable[ResponsesEvent],
        *,
        on_response: OnResponse,
        stream: bool,
        answering: Answering,
    ) -> None:
        super().__init__(source, stream=stream, answering=answering)
        self.on_response = on_response
        self._sequence = 0
        self._response: Response | None = None

    # streamed: named event frames, ending with the terminal event (stored first)

    def _frames(self, loop: asyncio.AbstractEventLoop, gate: FlowGate) -> EventFrames:
        return EventFrames(loop, gate, self.record, False, self.keep_alive)

    def _sending(self, frames: FrameBuffer[Any]) -> None:
        self._sequence = cast(EventFrames, frames).next_sequence

    def _started(self, frames: FrameBuffer[Any]) -> bool:
        return bool(frames.data) or cast(EventFrames, frames).last is not None

    async def _last_frame(self, frames: FrameBuffer[Any]) -> bytes:
        events = cast(EventFrames, frames)
        if events.last is not None and events.response is not None:
            if events.error is not None:
                self._reply(events.error)  # logged and counted; response.failed says it
            # the pipeline built the response scrubbed (its ``scrub`` option): sent as built
            await self.on_response(events.response)
            return event_frame(events.last)
        if events.error is not None:
            return error_event(self._reply(events.error), events.next_sequence)
        return b""

    def _stop_frame(self, reply: ErrorReply) -> bytes:
        return error_event(reply, self._sequence)

    # assembled: the terminal event's response

    def _collect(self, item: Any) -> bool:
        self._response = _terminal(item) or self._response
        return False

    async def _answer(self) -> bytes:
        response = self._response
        if response is None:  # the events ended without one: not a whole stream
            raise RuntimeError("the response ended without its last event")
        if response.usage is not None:
            self.record.used(response.usage)
        if self.record.telemetry is not None:
            self.record.telemetry.finish_reasons([response.status])
        await self.on_response(response)
        return response.to_json()
