"""Sans-IO OpenAI SSE framing: ``data: <json>\\n\\n`` … ``data: [DONE]\\n\\n``."""

from __future__ import annotations

from typing import Any

import msgspec

from .._errors import GeminiAPIError
from ._models import ChatCompletionChunk

__all__ = ["DONE_FRAME", "SSEEncoder", "encode_chunk", "encode_error", "error_payload"]

DONE_FRAME = b"data: [DONE]\n\n"


def encode_chunk(chunk: ChatCompletionChunk) -> bytes:
    """One chunk as an SSE frame."""
    return b"data: " + chunk.to_json() + b"\n\n"


def error_payload(error: BaseException) -> dict[str, Any]:
    """The OpenAI-style error object for a stream error.

    ``{"error": {"message", "type", "code"}}``: ``type`` names the error class,
    ``code`` is Gemini's numeric code when there is one (else ``null``).
    """
    code = error.code if isinstance(error, GeminiAPIError) else None
    return {"error": {"message": str(error), "type": type(error).__name__, "code": code}}


def encode_error(error: BaseException) -> bytes:
    """A stream error as an SSE frame (sent instead of ``[DONE]``)."""
    return b"data: " + msgspec.json.encode(error_payload(error)) + b"\n\n"


class SSEEncoder:
    """OpenAI SSE framing as a core: a frame per chunk, ``[DONE]`` or an error frame at the end."""

    __slots__ = ()

    error = None
    """Always ``None``: every chunk can be framed."""

    def feed(self, chunk: ChatCompletionChunk) -> list[bytes]:
        return [b"data: " + chunk.to_json() + b"\n\n"]

    def close(self, error: Exception | None = None) -> list[bytes]:
        """``data: [DONE]``, or the error frame when the stream failed with ``error``."""
        return [DONE_FRAME if error is None else encode_error(error)]
