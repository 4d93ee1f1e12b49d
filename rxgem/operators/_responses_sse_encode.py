from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core.responses import ResponsesEvent, ResponsesSSEEncoder
from ._own_operator import core_operator

__all__ = ["responses_sse_encode"]


def responses_sse_encode() -> Callable[[Observable[ResponsesEvent]], Observable[bytes]]:
    """Frame Responses events as named Server-Sent Events, the way OpenAI sends them.

    .. code::

        ---e0(response.created)--------------e9(response.completed)|
        [                  responses_sse_encode()                    ]
        ---b"event: response.created\\ndata: {e0}\\n\\n"---b"event: response.completed…"|

    No ``data: [DONE]`` follows (Responses streams end with their terminal event). On
    an upstream error that no ``response.failed`` event reported, it emits an ``error``
    event (``{"type": "error", "code", "message", "param"}``, in OpenAI's words:
    :func:`rxgem.core.openai_error`) and then passes the error on.

    Returns:
        An operator from ``Observable[ResponsesEvent]`` to ``Observable[bytes]``.
    """
    return core_operator(ResponsesSSEEncoder, name="responses_sse_encode")()
