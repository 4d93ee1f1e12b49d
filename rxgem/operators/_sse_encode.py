from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core import ChatCompletionChunk, SSEEncoder
from ._own_operator import core_operator

__all__ = ["sse_encode"]


def sse_encode() -> Callable[[Observable[ChatCompletionChunk]], Observable[bytes]]:
    """Frame OpenAI chunks as Server-Sent Events, the way OpenAI's API sends them.

    .. code::

        ---c1-----------c2-----------|
        [          sse_encode()          ]
        ---b"data: {c1}\\n\\n"---b"data: {c2}\\n\\n"---b"data: [DONE]\\n\\n"|

    On an upstream error it emits ``data: {"error": {"message", "type", "param", "code"}}``
    (OpenAI's words: :func:`rxgem.core.openai_error`)
    (no ``[DONE]``) and then passes the error on, so a server can write the frame
    and the caller still learns that the stream failed.

    Returns:
        An operator from ``Observable[ChatCompletionChunk]`` to ``Observable[bytes]``.
    """
    return core_operator(SSEEncoder, name="sse_encode")()
