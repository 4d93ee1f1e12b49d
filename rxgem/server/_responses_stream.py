"""Answering one ``POST /v1/responses`` over ASGI: Responses events, streamed or assembled.

:class:`ResponsesAnswer` is :class:`~rxgem.server._stream.CompletionResponse` (the
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
import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final, cast

from reactivex import Observable
from reactivex.scheduler.eventloop import AsyncIOScheduler

from ..bridge import FlowGate, aiterate, current_gate
from ..core import Response, ResponsesEvent, encode_event
from ._access import AccessRecord
from ._admission import Drain
from ._errors import ErrorReply, redact
from ._response_io import JSON_HEADERS, Sender
from ._stream import _END, _SILENCE, HEARTBEAT, CompletionResponse, _next
from ._stream_frames import KEEP_ALIVE_FRAME, STREAM_HEADERS, FrameBuffer

__all__ = ["ResponsesAnswer", "error_event"]

_TERMINAL: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})

OnResponse = Callable[[Response], Awaitable[None]]


def error_event(reply: ErrorReply, sequence_number: int) -> bytes:
    """The ``error`` event a stream ends with when no ``response.failed`` could say it."""
    payload = {
        "type": "error",
        "sequence_number": sequence_number,
        "code": reply.code or reply.type,
        "message": reply.message,
        "param": reply.param,
    }
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return b"event: error\ndata: " + data + b"\n\n"


def _note_usage(record: AccessRecord, response: Response) -> None:
    usage = response.usage
    if usage is None:
        return
    record.tokens = usage.total_tokens
    if record.telemetry is not None:
        record.telemetry.usage(
            usage.input_tokens,
            usage.output_tokens,
            usage.output_tokens_details.get("reasoning_tokens"),
            usage.input_tokens_details.get("cached_tokens"),
        )


def _terminal(event: ResponsesEvent) -> Response | None:
    """The response of a terminal event (else ``None``)."""
    if event.__struct_config__.tag in _TERMINAL:
        response: Response = event.response  # type: ignore[union-attr]
        return response
    return None


class EventFrames(FrameBuffer[ResponsesEvent]):
    """The observer of a streamed response: each event framed at once, but the terminal
    one, which waits in :attr:`last` until the sender has run ``on_response`` (and
    scrubbed its error message)."""

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
            self.push(encode_event(event))
            return
        self.response = response
        self.last = event
        _note_usage(self.record, response)
        self.finish_reasons[0] = response.status
        self._wake()


class ResponsesAnswer(CompletionResponse):
    """The ASGI app answering one Responses request from its events' Observable.

    Args:
        source: the request's events (not subscribed yet).
        on_response: awaited with the final response before it is sent (never raises).
        others: as :class:`~rxgem.server._stream.CompletionResponse`'s.
    """

    def __init__(
        self,
        source: Observable[ResponsesEvent],
        *,
        on_response: OnResponse,
        stream: bool,
        keep_alive: float,
        record: AccessRecord,
        secrets: tuple[str, ...],
        logger: logging.Logger,
        drain: Drain | None = None,
        send_timeout: float = 120.0,
    ) -> None:
        super().__init__(
            cast(Any, source),  # read back as `events`, typed
            stream=stream,
            send_usage=False,
            keep_alive=keep_alive,
            record=record,
            secrets=secrets,
            logger=logger,
            drain=drain,
            send_timeout=send_timeout,
        )
        self.events = source
        self.on_response = on_response
        self._sequence = 0

    async def _finish(self, response: Response) -> None:
        """``on_response``, with the response's error message scrubbed of secrets first
        (an upstream message may quote one); the client gets the response after this."""
        error = response.error
        if error is not None:
            error.message = redact(error.message, self.secrets)
        await self.on_response(response)

    async def _shut_down(self, sender: Sender) -> None:
        reply = ErrorReply(
            503, "server_error", "the server is shutting down; retry", code="server_shutdown"
        )
        self.record.failed(reply)
        try:
            if not sender.started:
                await sender.reply(reply)
            else:
                last = error_event(reply, self._sequence) if self.stream else b""
                await sender.body(last, more=False)
        except OSError:
            self.record.client_gone = True

    async def _complete(self, sender: Sender) -> None:
        results = aiterate(self.events)
        response: Response | None = None
        try:
            while True:
                try:
                    item = await _next(results, self.keep_alive)
                except Exception as exc:
                    reply = self._reply(exc)
                    if sender.started:  # after a heartbeat the status is sent: the body says
                        await sender.body(reply.json(), more=False)
                    else:
                        await sender.reply(reply)
                    return
                if item is _SILENCE:
                    if not sender.started:
                        await sender.start(200, JSON_HEADERS)
                    await sender.body(HEARTBEAT)
                    continue
                if item is _END:
                    break
                event = cast(ResponsesEvent, item)
                response = _terminal(event) or response
            if response is None:  # the events ended without one: not a whole stream
                reply = self._reply(RuntimeError("the response ended without its last event"))
                await (
                    sender.body(reply.json(), more=False) if sender.started else sender.reply(reply)
                )
                return
            _note_usage(self.record, response)
            if self.record.telemetry is not None:
                self.record.telemetry.finish_reasons([response.status])
            await self._finish(response)
            if not sender.started:
                await sender.start(200, JSON_HEADERS)
            await sender.body(response.to_json(), more=False)
        finally:
            results.close()

    async def _stream(self, sender: Sender) -> None:
        loop = asyncio.get_running_loop()
        gate = sender.gate = FlowGate()
        frames = EventFrames(loop, gate, self.record, False, self.keep_alive)
        frames.watch(sender, self.send_timeout, self._stalled)
        # this task's context: the upstream read task, made at subscription, inherits it
        current_gate.set(gate)
        subscription = self.events.subscribe(frames, scheduler=AsyncIOScheduler(loop))
        try:
            await frames.wait()
            if frames.error is not None and not frames.data and frames.last is None:
                await sender.reply(self._reply(frames.error))
                return
            await sender.start(200, STREAM_HEADERS)
            telemetry = self.record.telemetry
            if telemetry is not None:
                telemetry.stream_opened()
            while True:
                self._sequence = frames.next_sequence
                if frames.data:
                    await sender.body(frames.take())
                elif frames.done and frames.last is not None and frames.response is not None:
                    if frames.error is not None:
                        self._reply(frames.error)  # logged and counted; response.failed says it
                    await self._finish(frames.response)
                    await sender.body(encode_event(frames.last), more=False)
                    return
                elif frames.error is not None:
                    reply = self._reply(frames.error)
                    await sender.body(error_event(reply, frames.next_sequence), more=False)
                    return
                elif frames.done:
                    await sender.body(b"", more=False)
                    return
                else:
                    await sender.body(KEEP_ALIVE_FRAME)
                frames.sent(loop.time())
                await frames.wait()
        finally:
            frames.close()
            subscription.dispose()
            if self.record.telemetry is not None and frames.finish_reasons:
                self.record.telemetry.finish_reasons(frames.finish_reasons.values())
