from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core import SSEEvent
from ._stage_operator import stage_operator

__all__ = ["decode_sse"]


def decode_sse() -> Callable[[Observable[bytes]], Observable[SSEEvent]]:
    """Decode a byte stream into Server-Sent Events.

    .. code::

        ---b"data: {…}\\r\\n\\r\\nda"---b"ta: {…}\\r\\n"---b"\\r\\n"---|
        [                      decode_sse()                            ]
        ---SSEEvent({…})-------------------------------SSEEvent({…})-|

    Byte chunks may split lines, CRLF pairs and UTF-8 sequences anywhere; the
    events do not depend on the split. CR, LF and CRLF line ends, a leading BOM,
    ``:`` comments and ``event``/``id``/``retry`` fields are handled as WHATWG
    specifies. A raw (unframed) JSON block, such as the pretty-printed error
    object Gemini appends after the events, becomes one event with
    ``event == "raw"``. ``data: [DONE]`` completes the stream and disposes of the
    source; at the end of input an event that lacks its blank line is still
    emitted. A body without a single event but with lines that are not SSE at
    all (an HTML error page served with status 200, say) ends with
    :class:`~rxgem.MalformedStreamError` quoting its first such line.

    Returns:
        An operator from ``Observable[bytes]`` to ``Observable[SSEEvent]``.
    """
    return stage_operator("decode_sse", {})
