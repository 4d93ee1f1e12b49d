"""Answering one request over ASGI from its Observable: streaming or not, watching the client.

:class:`CompletionResponse` (a chat completion) is an ASGI app (a Starlette ``Response``
stand-in) for one request. The work runs in a task, and ``receive()`` is watched for
``http.disconnect`` in another (Starlette's ``StreamingResponse`` does not on ASGI ≥
2.4). When the client goes away first, the work is cancelled: the subscription is
disposed of, which cancels the upstream request and closes its connection, whether
Gemini had sent its first byte or not.

All of that is :class:`StreamedAnswer`, which also serves the Responses API
(:class:`~rxgem.server.responses.ResponsesAnswer`): a subclass says how items
are framed, what a stream ends with, and what the assembled answer is.

Streaming (one observer, :class:`Frames`, subscribed to
the ``chat_completions`` Observable on the event loop):

- Each chunk is encoded to its SSE frame as it arrives (``data: {json}``; every frame,
  chat and Responses, is made in ``_sse``); the frames that wait while a send is in
  progress go out together in the next write. At the
  end, ``data: [DONE]``; an error after the 200 is one ``data: {"error": {...}}``
  frame, and the body ends there.
- The status is decided by the first thing the pipeline gives: an error before any
  chunk is an ordinary HTTP error reply (429 with ``Retry-After``, ...). When Gemini
  stays silent for ``keep_alive`` seconds, the 200 headers are sent anyway, with a
  ``: keep-alive`` comment, and then one every ``keep_alive`` seconds of silence: one
  timer per stream, re-armed when it fires, never per chunk.
- Backpressure: the response holds its :class:`~rxgem.bridge.FlowGate`
  (in :data:`rxgem.bridge.current_gate` when it subscribes, so ``from_gemini``'s read task
  inherits it) while a send is in progress, and while more than 256 KiB of frames
  wait. The upstream socket is then not read, its kernel buffer fills, and TCP slows
  Gemini down.

A chat answer's ``watch`` (the server's signature memory) sees each chunk, or the
assembled completion, and is awaited before ``[DONE]`` (or the JSON) goes out.

Not streaming: the assembled ``chat.completion`` as JSON, or an error reply. While
Gemini is silent for ``keep_alive`` seconds, the 200 headers and then a space every
``keep_alive`` seconds are sent (JSON parsers skip leading blanks), so a proxy that
cuts idle responses (often at 60 s) does not cut a long answer. An error after that
can no longer change the status: the body is then the OpenAI error object, with 200.

When the server drains (``Drain``) and its grace
expires, :meth:`CompletionResponse.stop` cancels the work: a stream ends with an
error frame (``server_shutdown``), a response not started yet is a 503.

Modules: ``_answer`` (the ASGI answers), ``_frames`` (the stream's observer: the frames
waiting, the keep-alive timer, the high-water mark), ``_sse`` (the one SSE framing of
chat and Responses), ``_io`` (the sends, error replies and the disconnect watch).
"""

from ._answer import HEARTBEAT, Answering, AnswerWatch, CompletionResponse, StreamedAnswer
from ._frames import FrameBuffer, Frames
from ._sse import error_event, event_frame

__all__ = [
    "HEARTBEAT",
    "AnswerWatch",
    "Answering",
    "CompletionResponse",
    "FrameBuffer",
    "Frames",
    "StreamedAnswer",
    "error_event",
    "event_frame",
]
