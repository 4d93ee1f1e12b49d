"""The fast path of :class:`~rxgem.core.SSEDecoder` for one whole named event.

The Interactions API names every event (``event:``, ``id:``, one ``data:`` line, a blank
line, LF only), and its transport hands the decoder one whole event at a time: such a
chunk is read with byte searches instead of the decoder's general line loop, as a lone
``data:`` event already is. The general path gives the same event for the same bytes
(``tests/core/test_sse_decoder.py`` compares them).
"""

from __future__ import annotations

from ._event import SSEEvent

__all__ = ["named_event"]

_LF = 0x0A
_CR = 0x0D
_SPACE = 0x20
_DONE_MAX = 64
_DONE_BYTES = b"[DONE]"


def named_event(data: bytes, last_id: str | bytes | None) -> SSEEvent | None:
    """The event of ``data``, a chunk that starts with ``event:`` and ends with LF LF, read
    between events (``last_id``: the last event id so far, maybe not decoded); ``None``
    when the chunk is not exactly an ``event:`` line, an ``id:`` line or none, one
    ``data:`` line and the blank line (or is ``[DONE]``): the general path reads it then."""
    if _CR in data:
        return None
    end = data.find(_LF)
    start = end + 1
    if data.startswith(b"id:", start):
        id_end = data.find(_LF, start)
        skip = 4 if data[start + 3] == _SPACE else 3
        # kept as bytes: the event decodes it if read (U+0000 is the byte 0 in UTF-8)
        value = data[start + skip : id_end]
        start = id_end + 1
        if 0 not in value:
            last_id = value
    if not data.startswith(b"data:", start) or data.find(_LF, start) != len(data) - 2:
        return None
    payload = data[start + 6 : -2] if data[start + 5] == _SPACE else data[start + 5 : -2]
    if len(payload) < _DONE_MAX and payload.strip() == _DONE_BYTES:
        return None  # the general path ends the stream
    name = data[7:end] if data[6] == _SPACE else data[6:end]
    return SSEEvent(payload, name.decode("utf-8", "replace") or "message", last_id)
