"""The ``error`` event a Responses stream ends with when no ``response.failed`` could say
it (the pipeline never started a response)."""

from __future__ import annotations

import msgspec

from ._errors import ErrorReply

__all__ = ["error_event"]


class _ErrorEvent(msgspec.Struct, tag="error", tag_field="type"):
    sequence_number: int
    code: str
    message: str
    param: str | None


def error_event(reply: ErrorReply, sequence_number: int) -> bytes:
    """``reply`` as a Responses stream's ``error`` event frame."""
    event = _ErrorEvent(sequence_number, reply.code or reply.type, reply.message, reply.param)
    return b"event: error\ndata: " + msgspec.json.encode(event) + b"\n\n"
