"""Sans-IO Responses SSE framing: ``event: <type>\\ndata: <json>\\n\\n`` per event.

OpenAI's Responses stream names each event (``event: response.output_text.delta``)
and ends with the response's terminal event, without ``data: [DONE]``. A stream that
failed before its ``response.failed`` could be sent (nothing was started) ends with an
``error`` event instead.
"""

from __future__ import annotations

import msgspec

from ._mapping import error_of
from ._models import ResponseFailed, ResponsesEvent

__all__ = ["ResponsesSSEEncoder", "encode_event", "encode_stream_error"]


def encode_event(event: ResponsesEvent) -> bytes:
    """One event as a named SSE frame."""
    tag = event.__struct_config__.tag
    return f"event: {tag}\ndata: ".encode() + event.to_json() + b"\n\n"


def encode_stream_error(error: BaseException, sequence_number: int = 0) -> bytes:
    """An ``error`` event's frame: ``{"type": "error", "sequence_number", "code", "message"}``."""
    mapped = error_of(error)
    payload = {
        "type": "error",
        "sequence_number": sequence_number,
        "code": mapped.code,
        "message": mapped.message,
        "param": None,
    }
    return b"event: error\ndata: " + msgspec.json.encode(payload) + b"\n\n"


class ResponsesSSEEncoder:
    """Responses SSE framing as a core: a named frame per event; at a failure that no
    ``response.failed`` reported, an ``error`` event."""

    __slots__ = ("_failed", "_next")

    def __init__(self) -> None:
        self._next = 0  # the sequence number after the last event framed
        self._failed = False

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
        return [encode_stream_error(error, self._next)]
