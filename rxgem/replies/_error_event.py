"""The ``error`` event a Responses stream ends with when no ``response.failed`` could say
it (the pipeline never started a response)."""

from __future__ import annotations

from ..core.openai import OpenAIError
from ..core.responses import encode_stream_error
from ._errors import ErrorReply

__all__ = ["error_event"]


def error_event(reply: ErrorReply, sequence_number: int) -> bytes:
    """``reply`` as a Responses stream's ``error`` event frame (the core's, for the one
    vocabulary: the reply's ``code``, else its ``type``)."""
    mapped = OpenAIError(reply.status, reply.type, reply.message, reply.param, reply.code)
    return encode_stream_error(mapped, sequence_number)
