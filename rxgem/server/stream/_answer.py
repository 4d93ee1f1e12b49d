"""One answer over ASGI from an Observable (:class:`StreamedAnswer`), and the chat
completion's (:class:`CompletionResponse`): streamed or assembled, watching the client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar, cast

from reactivex import Observable
from reactivex.scheduler.eventloop import AsyncIOScheduler
from starlette.types import Receive, Scope, Send

from ...bridge import FlowGate, aiterate, current_gate  # aiterate: the non-streaming answer
from ...core import ChatCompletion, ChatCompletionChunk
from ...replies import ErrorReply, error_reply, shutting_down
from ..guard import Drain
from ..observe import AccessRecord, log_failure
from ..run import ABORT_EXTENSION
from ._frames import FrameBuffer, Frames, WatchedFrames
from ._io import JSON_HEADERS, Sender, until_disconnect
from ._sse import DONE_FRAME, KEEP_ALIVE_FRAME, STREAM_HEADERS

__all__ = ["HEARTBEAT", "AnswerWatch", "Answering", "CompletionResponse", "StreamedAnswer"]

T = TypeVar("T")

HEARTBEAT: Final = b" "
"""What a non-streaming response sends while Gemini is silent: JSON allows leading blanks."""


class _Silence:
    """The sentinel of :func:`_next` for ``keep_alive`` seconds without an item."""


class _End:
    """The sentinel of :func:`_next` for the end of the items."""


_SILENCE: Final = _Silence()
_END: Final = _End()


async def _next(items: AsyncIterator[T], wait: float) -> T | _Silence | _End:
    """The next item, ``_SILENCE`` after ``wait`` seconds without one, or ``_END``.

    Cancelling the wait (the timeout does) loses nothing: ``aiterate`` leaves an item
    that arrived meanwhile queued for the next call.
    """
    scope = asyncio.timeout(wait)
    try:
        async with scope:
            return await anext(items)
    except StopAsyncIteration:
        return _END
    except TimeoutError:
        if scope.expired():
            return _SILENCE
        raise


@dataclass(frozen=True, slots=True)
class Answering:
    """How one request is answered, whatever its route.

    Attributes:
        record: the request's access record (tokens, errors, client gone).
        secrets: what to scrub from error messages.
        logger: where upstream errors are logged (at DEBUG, with their detail, scrubbed
            of secrets).
        keep_alive: seconds of silence before a keep-alive comment.
        send_timeout: seconds one send may wait for the client to take it in; after
            that the client is cut off (the connection dropped, where the server
            offers the ``rxgem.abort`` extension) and the upstream request cancelled.
        upstream: the upstream's base URL, whose address no error message shows.
        drain: the server's shutdown grace; when it expires, :meth:`StreamedAnswer.stop`
            ends the answer (an error frame, or a 503 if nothing was sent yet).
    """

    record: AccessRecord
    secrets: tuple[str, ...]
    logger: logging.Logger
    keep_alive: float
    send_timeout: float = 120.0
    upstream: str | None = None
    drain: Drain | None = None


class StreamedAnswer:
    """The ASGI app answering one request from its Observable, streamed or assembled:
    the disconnect watch, the drain, the send timeout, backpressure, keep-alives and the
    error replies. A subclass says how items are framed and what the answer is.

    Args:
        source: the request's Observable (not subscribed yet).
        stream: whether the request asked for ``stream``.
        answering: how the request is answered.
    """

    def __init__(self, source: Observable[Any], *, stream: bool, answering: Answering) -> None:
        self.source = source
        self.stream = stream
        self.upstream = answering.upstream
        self.keep_alive = answering.keep_alive
        self.record = answering.record
        self.secrets = answering.secrets
        self.logger = answering.logger
        self.drain = answering.drain
        self.send_timeout = answering.send_timeout
        self._worker: asyncio.Future[None] | None = None
        self._stopped = False
        self._abort: Callable[[], None] | None = None

    # -- what a subclass says ------------------------------------------------------------

    def _frames(self, loop: asyncio.AbstractEventLoop, gate: FlowGate) -> FrameBuffer[Any]:
        """The observer framing the streamed items."""
        raise NotImplementedError

    def _sending(self, frames: FrameBuffer[Any]) -> None:
        """Called before each send of a stream."""

    def _started(self, frames: FrameBuffer[Any]) -> bool:
        """Whether the stream has something to send (else an error is an HTTP reply)."""
        return bool(frames.data)

    async def _last_frame(self, frames: FrameBuffer[Any]) -> bytes:
        """What a stream ends with once its items are all sent (``frames.done``)."""
        raise NotImplementedError

    def _stop_frame(self, reply: ErrorReply) -> bytes:
        """What a started stream ends with when the server shuts down."""
        raise NotImplementedError

    def _collect(self, item: Any) -> bool:
        """Keep what the assembled answer needs of ``item``; true when it is whole."""
        raise NotImplementedError

    async def _answer(self) -> bytes:
        """The assembled answer as JSON, once the items ended (raises what went wrong)."""
        raise NotImplementedError

    # -- the ASGI app --------------------------------------------------------------------

    def _stalled(self) -> None:
        """The client took in nothing for ``send_timeout`` seconds: cut it off."""
        self.record.client_gone = True
        if self._abort is not None:
            self._abort()  # the send returns, receive() says disconnect, the work ends
        elif self._worker is not None:
            self._worker.cancel()

    def stop(self) -> None:
        """End the response now: the server is shutting down (see :class:`Drain`)."""
        self._stopped = True
        if self._worker is not None:
            self._worker.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._abort = scope.get("extensions", {}).get(ABORT_EXTENSION)
        sender = Sender(send)
        work = self._stream(sender) if self.stream else self._complete(sender)
        worker = self._worker = asyncio.ensure_future(work)
        if self.drain is not None:
            self.drain.add(self)
        try:
            cancelled = await until_disconnect(receive, worker)
        finally:
            if self.drain is not None:
                self.drain.discard(self)
        if not cancelled or sender.finished:
            return
        if self._stopped:
            await self._shut_down(sender)
        else:
            self.record.client_gone = True

    async def _shut_down(self, sender: Sender) -> None:
        reply = shutting_down()
        self.record.failed(reply)
        try:
            if not sender.started:
                await sender.reply(reply)
            else:
                await sender.body(self._stop_frame(reply) if self.stream else b"", more=False)
        except OSError:
            self.record.client_gone = True

    def _reply(self, error: Exception) -> ErrorReply:
        if self.record.telemetry is not None:
            self.record.telemetry.upstream_error(error)
        reply = error_reply(error, self.secrets, self.upstream)
        self.record.failed(reply)
        log_failure(self.logger, self.record.request_id, reply.message, error, self.secrets)
        return reply

    async def _complete(self, sender: Sender) -> None:
        results = aiterate(self.source)
        try:
            while True:
                try:
                    item = await _next(results, self.keep_alive)
                except Exception as exc:
                    await _fail(sender, self._reply(exc))
                    return
                if item is _SILENCE:
                    # a space before the JSON keeps idle-timing proxies from cutting us off
                    if not sender.started:
                        await sender.start(200, JSON_HEADERS)
                    await sender.body(HEARTBEAT)
                    continue
                if item is _END or self._collect(item):
                    break
            try:
                answer = await self._answer()
            except Exception as exc:
                await _fail(sender, self._reply(exc))
                return
            if not sender.started:
                await sender.start(200, JSON_HEADERS)
            await sender.body(answer, more=False)
        finally:
            results.close()

    async def _stream(self, sender: Sender) -> None:
        loop = asyncio.get_running_loop()
        gate = sender.gate = FlowGate()
        frames = self._frames(loop, gate)
        frames.watch(sender, self.send_timeout, self._stalled)
        # this task's context: the upstream read task, made at subscription, inherits it
        current_gate.set(gate)
        subscription = self.source.subscribe(frames, scheduler=AsyncIOScheduler(loop))
        try:
            await frames.wait()
            if frames.error is not None and not self._started(frames):
                await sender.reply(self._reply(frames.error))
                return
            await sender.start(200, STREAM_HEADERS)
            telemetry = self.record.telemetry
            if telemetry is not None:
                telemetry.stream_opened()
            while True:
                self._sending(frames)
                if frames.data:
                    await sender.body(frames.take())
                elif frames.done or frames.error is not None:
                    await sender.body(await self._last_frame(frames), more=False)
                    return
                else:
                    await sender.body(KEEP_ALIVE_FRAME)
                frames.sent(loop.time())
                await frames.wait()
        finally:
            frames.close()
            subscription.dispose()
            if self.record.telemetry is not None and frames.finish_reasons:
                reasons = frames.finish_reasons
                self.record.telemetry.finish_reasons(reasons[i] for i in sorted(reasons))


async def _fail(sender: Sender, reply: ErrorReply) -> None:
    """``reply`` as the answer: after a heartbeat the status is sent, the body says it."""
    if sender.started:
        await sender.body(reply.json(), more=False)
    else:
        await sender.reply(reply)


class AnswerWatch(Protocol):
    """What sees a chat answer go out (the server's signature memory)."""

    def chunk(self, chunk: ChatCompletionChunk) -> None:
        """A streamed chunk, before it is framed."""

    def completion(self, completion: ChatCompletion) -> None:
        """The whole completion, before it is encoded."""

    async def done(self) -> None:
        """The answer is whole: awaited before its end (``[DONE]``, the JSON) is sent."""


class CompletionResponse(StreamedAnswer):
    """The ASGI app answering one chat completion from its Observable.

    Args:
        source: what ``rxgem.chat_completions`` returned (not subscribed yet).
        send_usage: whether the client asked for the usage chunk (the server always
            asks the pipeline for it, to log the tokens).
        watch: what sees the answer go out, if anything; a failed answer is not
            ``done``.
        others: as :class:`StreamedAnswer`'s.
    """

    def __init__(
        self,
        source: Observable[ChatCompletionChunk] | Observable[ChatCompletion],
        *,
        stream: bool,
        send_usage: bool,
        answering: Answering,
        watch: AnswerWatch | None = None,
    ) -> None:
        super().__init__(cast(Observable[Any], source), stream=stream, answering=answering)
        self.send_usage = send_usage
        self.watch = watch
        self._completion: ChatCompletion | None = None

    def _frames(self, loop: asyncio.AbstractEventLoop, gate: FlowGate) -> Frames:
        if self.watch is not None:
            return WatchedFrames(
                self.watch.chunk, loop, gate, self.record, self.send_usage, self.keep_alive
            )
        return Frames(loop, gate, self.record, self.send_usage, self.keep_alive)

    async def _last_frame(self, frames: FrameBuffer[Any]) -> bytes:
        if frames.error is not None:
            return self._reply(frames.error).frame()
        if self.watch is not None:
            await self.watch.done()
        return DONE_FRAME

    def _stop_frame(self, reply: ErrorReply) -> bytes:
        return reply.frame()

    def _collect(self, item: Any) -> bool:
        self._completion = item
        return True

    async def _answer(self) -> bytes:
        item = self._completion
        assert isinstance(item, ChatCompletion)  # one item or an error, never _END first
        if item.usage is not None:
            self.record.used(item.usage)
        if self.record.telemetry is not None:
            self.record.telemetry.finish_reasons(c.finish_reason for c in item.choices)
        if self.watch is not None:
            self.watch.completion(item)
            await self.watch.done()
        return item.to_json()
