"""Sans-IO Responses SSE framing: ``event: <type>\\ndata: <json>\\n\\n`` per event.

OpenAI's Responses stream names each event (``event: response.output_text.delta``)
and ends with the response's terminal event, without ``data: [DONE]``. A stream that
failed before its ``response.failed`` could be sent (nothing was started) ends with an
``error`` event instead.
"""

from __future__ import annotations

import msgspec

from ..openai import OpenAIError, Scrub, openai_error
from ._models import ResponseFailed, ResponsesEvent

__all__ = ["ResponsesSSEEncoder", "encode_event", "encode_stream_error"]


def encode_event(event: ResponsesEvent) -> bytes:
    """One event as a named SSE frame."""
    tag = event.__struct_config__.tag
    return f"event: {tag}\ndata: ".encode() + event.to_json() + b"\n\n"


class _ErrorEvent(msgspec.Struct, tag="error", tag_field="type"):
    sequence_number: int
    code: str
    message: str
    param: str | None


def encode_stream_error(
    error: BaseException | OpenAIError, sequence_number: int = 0, scrub: Scrub | None = None
) -> bytes:
    """An ``error`` event's frame: ``{"type": "error", "sequence_number", "code",
    "message", "param"}``, the error in the one vocabulary of
    :func:`~rxgem.core.openai_error` (its ``code``, else its ``type``; what Gemini said
    goes through ``scrub``), or as already mapped."""
    mapped = error if isinstance(error, OpenAIError) else openai_error(error, scrub)
    event = _ErrorEvent(sequence_number, mapped.code or mapped.type, mapped.message, mapped.param)
    return b"event: error\ndata: " + msgspec.json.encode(event) + b"\n\n"


class ResponsesSSEEncoder:
    """Responses SSE framing as a core: a named frame per event; at a failure that no
    ``response.failed`` reported, an ``error`` event.

    Args:
        scrub: what a message from Gemini goes through before it is framed (default:
            nothing is removed).
    """

    __slots__ = ("_failed", "_next", "_scrub")

    def __init__(self, scrub: Scrub | None = None) -> None:
        self._next = 0  # the sequence number after the last event framed
        self._failed = False
        self._scrub = scrub

    error = None
    """Always ``None``: every event can be framed."""

    def feed(self, event: ResponsesEvent) -> list[bytes]:
        self._next = event.sequence_number + 1
        if type(event) is ResponseFailed:
            self._failed = True
        return [encode_event(event)]

    def close(self, error: Exception | None = None) -> list[bytes]:
        """Nothing; or, when the stream failed with ``error`` and no ``response.failed``
        was framed, the ``error`` event."""
        if error is None or self._failed:
            return []
        self._failed = True
        return [encode_stream_error(error, self._next, self._scrub)]
