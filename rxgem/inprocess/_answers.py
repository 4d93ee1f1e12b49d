"""How one request's items become its answer's bytes, sans-IO: the chat and the Responses
framing, as ``rxgem serve`` frames them (:mod:`rxgem.core`'s chunk and event frames, the
error replies of :mod:`rxgem.replies`).

An answer is fed its items in order; a stream ends with :meth:`Answer.last_frame` after
:meth:`Answer.finish` (a Responses answer stores its response there, before the terminal
event goes out, so that a client that read it can continue the conversation at once).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

from ..core import ChatCompletion, ChatCompletionChunk
from ..core.chat import DONE_FRAME, encode_chunk
from ..core.responses import Response, ResponsesEvent, encode_event
from ..replies import ErrorReply, error_event, error_reply

__all__ = ["Answer", "ChatAnswer", "OnResponse", "ResponsesAnswer"]

OnResponse = Callable[[Response], Awaitable[None]]

_TERMINAL: Final = frozenset({"response.completed", "response.incomplete", "response.failed"})


class Answer:
    """One request's answer: its items framed (streamed) or assembled.

    Args:
        stream: whether the request asked for ``stream``.
        secrets: what no error message may show (the Gemini key, the access token).
        upstream: Gemini's base URL, whose address no error message shows.
    """

    def __init__(self, *, stream: bool, secrets: Sequence[str], upstream: str | None) -> None:
        self.stream = stream
        self.secrets = tuple(s for s in secrets if s)
        self.upstream = upstream

    def reply(self, error: BaseException) -> ErrorReply:
        """The OpenAI error reply of ``error``, as ``rxgem serve`` gives it."""
        return error_reply(error, self.secrets, self.upstream)

    def frame(self, item: Any) -> bytes:
        """``item``'s SSE frame (``b""``: nothing now)."""
        raise NotImplementedError

    def finish(self, error: Exception | None) -> Awaitable[None] | None:
        """What must run before the last frame or the assembled body (``None``: nothing)."""
        return None

    def last_frame(self, error: Exception | None) -> bytes:
        """What a stream ends with: its end, or its error (``error``)."""
        raise NotImplementedError

    def collect(self, item: Any) -> None:
        """Keep what the assembled answer needs of ``item``."""
        raise NotImplementedError

    def body(self) -> bytes:
        """The assembled answer as JSON (after :meth:`finish`)."""
        raise NotImplementedError


class ChatAnswer(Answer):
    """A chat completion: ``data: {chunk}`` frames and ``data: [DONE]``, or the error
    object's frame; assembled, the ``chat.completion``.

    Args:
        watch: what sees the answer go out (the gateway's signature memory), if anything.
        others: as :class:`Answer`'s.
    """

    def __init__(self, *, watch: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.watch = watch
        self._completion: ChatCompletion | None = None

    def frame(self, item: Any) -> bytes:
        assert isinstance(item, ChatCompletionChunk)
        if self.watch is not None:
            self.watch.chunk(item)
        return encode_chunk(item)

    def finish(self, error: Exception | None) -> Awaitable[None] | None:
        if error is not None or self.watch is None:
            return None
        if self._completion is not None:
            self.watch.completion(self._completion)
        done: Awaitable[None] = self.watch.done()
        return done

    def last_frame(self, error: Exception | None) -> bytes:
        return DONE_FRAME if error is None else self.reply(error).frame()

    def collect(self, item: Any) -> None:
        assert isinstance(item, ChatCompletion)
        self._completion = item

    def body(self) -> bytes:
        if self._completion is None:
            raise RuntimeError("the completion ended without its answer")
        return self._completion.to_json()


def _terminal(event: ResponsesEvent) -> Response | None:
    if event.__struct_config__.tag in _TERMINAL:
        response: Response = event.response  # type: ignore[union-attr]
        return response
    return None


class ResponsesAnswer(Answer):
    """A Responses answer: named event frames ending with the terminal event (held until
    :meth:`finish` ran ``on_response``), or an ``error`` event when the pipeline could not
    end the response itself; assembled, the terminal event's response.

    Args:
        on_response: awaited with the final response before it goes out (it stores it).
        others: as :class:`Answer`'s.
    """

    def __init__(self, *, on_response: OnResponse | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_response = on_response
        self.response: Response | None = None
        self._held: ResponsesEvent | None = None
        self._next_sequence = 0

    def frame(self, item: Any) -> bytes:
        self._next_sequence = item.sequence_number + 1
        response = _terminal(item)
        if response is None:
            return encode_event(item)
        self.response, self._held = response, item
        return b""

    def collect(self, item: Any) -> None:
        self.frame(item)  # the terminal event's response is the answer

    def finish(self, error: Exception | None) -> Awaitable[None] | None:
        # the response is sent as the pipeline built it, scrubbed (its ``scrub`` option)
        if self.response is None or self.on_response is None:
            return None
        return self.on_response(self.response)

    def last_frame(self, error: Exception | None) -> bytes:
        if self._held is not None:
            return encode_event(self._held)
        if error is not None:
            return error_event(self.reply(error), self._next_sequence)
        return b""

    def body(self) -> bytes:
        if self.response is None:
            raise RuntimeError("the response ended without its last event")
        return self.response.to_json()
