"""Sans-IO OpenAI SSE framing: ``data: <json>\\n\\n`` … ``data: [DONE]\\n\\n``."""

from __future__ import annotations

from typing import Any

import msgspec

from ..openai import Scrub, openai_error
from ._models import ChatCompletionChunk

__all__ = ["DONE_FRAME", "SSEEncoder", "encode_chunk", "encode_error", "error_payload"]

DONE_FRAME = b"data: [DONE]\n\n"


def encode_chunk(chunk: ChatCompletionChunk) -> bytes:
    """One chunk as an SSE frame."""
    return b"data: " + chunk.to_json() + b"\n\n"


def error_payload(error: BaseException, scrub: Scrub | None = None) -> dict[str, Any]:
    """The OpenAI error object for a stream error: ``{"error": {"message", "type",
    "param", "code"}}``, in the one vocabulary of :func:`~rxgem.core.openai_error`
    (what Gemini said goes through ``scrub``)."""
    return openai_error(error, scrub).body()


def encode_error(error: BaseException, scrub: Scrub | None = None) -> bytes:
    """A stream error as an SSE frame (sent instead of ``[DONE]``)."""
    return b"data: " + msgspec.json.encode(error_payload(error, scrub)) + b"\n\n"


class SSEEncoder:
    """OpenAI SSE framing as a core: a frame per chunk, ``[DONE]`` or an error frame at the end.

    Args:
        scrub: what a message from Gemini goes through before it is framed (default:
            nothing is removed).
    """

    __slots__ = ("_scrub",)

    def __init__(self, scrub: Scrub | None = None) -> None:
        self._scrub = scrub

    error = None
    """Always ``None``: every chunk can be framed."""

    def feed(self, chunk: ChatCompletionChunk) -> list[bytes]:
        return [b"data: " + chunk.to_json() + b"\n\n"]

    def close(self, error: Exception | None = None) -> list[bytes]:
        """``data: [DONE]``, or the error frame when the stream failed with ``error``."""
        return [DONE_FRAME if error is None else encode_error(error, self._scrub)]
