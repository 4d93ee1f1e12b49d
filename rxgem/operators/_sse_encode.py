from __future__ import annotations

from collections.abc import Callable, Iterable

from reactivex import Observable

from .._chunks import ChatCompletionChunk
from .._encode import DONE_FRAME, encode_chunk, encode_error
from ._stage import Stage, stage_operator

__all__ = ["sse_encode"]


def _encode(value: ChatCompletionChunk) -> tuple[bytes]:
    return (encode_chunk(value),)


class _EncodeStage(Stage[ChatCompletionChunk, bytes]):
    def __init__(self) -> None:
        self.feed = _encode

    def close(self) -> tuple[Iterable[bytes], Exception | None]:
        return (DONE_FRAME,), None

    def abort(self, error: Exception) -> Iterable[bytes]:
        return (encode_error(error),)


def sse_encode() -> Callable[[Observable[ChatCompletionChunk]], Observable[bytes]]:
    """Frame OpenAI chunks as Server-Sent Events, the way OpenAI's API sends them.

    .. code::

        ---c1-----------c2-----------|
        [          sse_encode()          ]
        ---b"data: {c1}\\n\\n"---b"data: {c2}\\n\\n"---b"data: [DONE]\\n\\n"|

    On an upstream error it emits ``data: {"error": {"message", "type", "code"}}``
    (no ``[DONE]``) and then passes the error on, so a server can write the frame
    and the caller still learns that the stream failed.

    Returns:
        An operator from ``Observable[ChatCompletionChunk]`` to ``Observable[bytes]``.
    """
    return stage_operator(_EncodeStage)
