"""The server's SSE wire vocabulary, chat and Responses alike.

Chat streams are ``data: {chunk}`` frames ending with ``data: [DONE]``, or with the
error reply's own frame (``ErrorReply.frame``); Responses streams name each event
(``event: response.output_text.delta``) and end with the terminal event, or an
``error`` event (:func:`rxgem.replies.error_event`). The chunk and event frames are the core's
(:func:`rxgem.core.encode_chunk`, :func:`rxgem.core.encode_event`); the keep-alive
comment and the response headers are here. Everything is encoded with msgspec.
"""

from __future__ import annotations

from typing import Final

from ...core.chat import DONE_FRAME, encode_chunk
from ...core.responses import encode_event
from ...replies import error_event

__all__ = [
    "DONE_FRAME",
    "KEEP_ALIVE_FRAME",
    "STREAM_HEADERS",
    "chunk_frame",
    "error_event",
    "event_frame",
]

KEEP_ALIVE_FRAME: Final = b": keep-alive\n\n"
"""An SSE comment: sent after ``keep_alive`` seconds of silence, skipped by clients."""

STREAM_HEADERS: Final = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


chunk_frame: Final = encode_chunk
"""A chat chunk's frame: ``data: {json}``."""

event_frame: Final = encode_event
"""A Responses event's frame: ``event: <type>`` and ``data: {json}``."""
