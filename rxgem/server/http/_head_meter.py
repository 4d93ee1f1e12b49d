"""Where each request head on a connection begins and ends, from the bytes as they arrive.

The HTTP parsers uvicorn runs (httptools, h11) cap nothing, or cap only a head that is
still incomplete: a whole head of any size that arrives in one read, or pipelined behind
another request, is parsed. :class:`HeadMeter` follows the framing of HTTP/1.1 requests
(the heads, ``Content-Length`` bodies, chunked bodies and their trailers) over the bytes
received, and says how many of them may reach the parser before a head (or a trailer
section) grows past the limit. Sans-IO; every byte is looked at once (``find`` from where
the last look stopped), a body's bytes only counted.

When it cannot follow the framing (a length or a chunk size that is not a number), it
stops metering: the parser refuses such input and closes the connection. (A connection
upgraded to WebSocket leaves this protocol, and the meter, altogether.)
"""

from __future__ import annotations

from typing import Final

__all__ = ["HeadMeter"]

_HEAD: Final = 0  # a request head (or blank lines before it)
_BODY: Final = 1  # a Content-Length body
_CHUNK_SIZE: Final = 2  # a chunk's size line
_CHUNK_DATA: Final = 3  # a chunk's data
_CHUNK_END: Final = 4  # the line break after a chunk's data
_TRAILER: Final = 5  # the trailer section after the last chunk
_OVER: Final = 6  # a head grew past the limit: nothing more is let through
_LOST: Final = 7  # the framing cannot be followed: everything is let through

_FRAMING: Final = (b"content-length", b"transfer-encoding")


def _framing(lines: list[bytes]) -> tuple[int, bool]:
    """The body's length and whether it is chunked, from the head's framing header lines
    (``-1``: a length that is not a number)."""
    length, chunked = 0, False
    for line in lines:
        name, _, value = line.partition(b":")
        name, value = name.strip().lower(), value.strip().lower()
        if name == b"transfer-encoding":
            chunked = value.rsplit(b",", 1)[-1].strip() == b"chunked"
        elif name == b"content-length":
            length = int(value) if value.isdigit() else -1
    return length, chunked


class HeadMeter:
    """The bytes of a connection's request heads, counted as they arrive.

    Args:
        limit: the most bytes a head (request line, headers, the blank lines before
            it) or a trailer section may take.
    """

    __slots__ = ("_count", "_framing", "_left", "_line", "_started", "_state", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._state = _HEAD
        self._count = 0  # bytes of the current head or trailer section so far
        self._started = False  # whether the current head has a non-blank line yet
        self._framing: list[bytes] = []  # the current head's framing header lines
        self._line = bytearray()  # a line not ended yet (a chunk size line)
        self._left = 0  # bytes of a body or a chunk still to come

    @property
    def over(self) -> bool:
        """Whether a head grew past the limit."""
        return self._state == _OVER

    def feed(self, data: bytes) -> int:
        """How many leading bytes of ``data`` may reach the parser: ``len(data)`` unless a
        head grows past the limit (then where that head began in ``data``, or 0)."""
        if self._state == _LOST:
            return len(data)
        if self._state == _OVER:
            return 0
        size = len(data)
        pos = 0
        head_at = 0  # where the head being read began in data
        while pos < size:
            state = self._state
            if state in (_BODY, _CHUNK_DATA):
                take = min(self._left, size - pos)
                pos += take
                self._left -= take
                if self._left == 0:
                    self._state = _HEAD if state == _BODY else _CHUNK_END
                continue
            if state == _HEAD and self._count == 0:
                head_at = pos
                whole = self._whole_head(data, pos)
                if whole:
                    pos = whole
                    continue
            end = data.find(b"\n", pos)
            stop = size if end < 0 else end + 1
            if state in (_HEAD, _TRAILER):
                self._count += stop - pos
                if self._count > self.limit:
                    self._state = _OVER
                    return head_at
            elif len(self._line) + stop - pos > self.limit:  # an endless chunk size line
                self._state = _OVER
                return head_at
            if end < 0:
                self._line += data[pos:size]
                return size
            line = self._taken(data, pos, end)
            pos = stop
            if state in (_HEAD, _TRAILER):
                self._head_line(line)
            elif state == _CHUNK_SIZE:
                self._chunk_size(line)
            else:
                self._state = _CHUNK_SIZE
            if self._state == _LOST:
                return size
        return size

    def _whole_head(self, data: bytes, pos: int) -> int:
        """The end of a head that lies whole in ``data`` from ``pos``, ending with the first
        CRLF CRLF and no other blank line (the usual case, found at C speed); 0 if not."""
        if data[pos] in (10, 13):
            return 0
        end = data.find(b"\r\n\r\n", pos, pos + self.limit)
        if end < 0 or data.find(b"\n\n", pos, end + 3) >= 0:
            return 0
        if data.find(b"\n\r\n", pos, end + 3) >= 0:
            return 0
        head = data[pos:end]
        lowered = head.lower()
        framing: list[bytes] = []
        if (
            b"\ncontent-length" in lowered
            or b"\ntransfer-encoding" in lowered
            or (b"\nupgrade" in lowered)
        ):
            framing = [
                line for line in head.split(b"\n")[1:] if line[:20].lower().startswith(_FRAMING)
            ]
        self._framing = framing
        self._started = True
        self._end_head()
        return end + 4

    def _taken(self, data: bytes, start: int, end: int) -> bytes:
        """The line ending at ``end`` (its ``\\r`` and ``\\n`` left out), with what an
        earlier read brought of it."""
        line = data[start:end]
        if self._line:
            line = bytes(self._line) + line
            self._line.clear()
        return line[:-1] if line.endswith(b"\r") else line

    def _head_line(self, line: bytes) -> None:
        if line:
            if self._started and line[:20].lower().startswith(_FRAMING):
                self._framing.append(line)
            self._started = True
            return
        if not self._started and self._state == _HEAD:
            return  # a blank line before the request line (the parsers skip it)
        if self._state == _TRAILER:
            self._next_head()
            return
        self._end_head()

    def _end_head(self) -> None:
        """The head ended: what comes next is its body, or the next head."""
        length, chunked = _framing(self._framing)
        self._next_head()
        if length < 0:
            self._state = _LOST
        elif chunked:
            self._state = _CHUNK_SIZE
        elif length:
            self._state = _BODY
            self._left = length

    def _next_head(self) -> None:
        self._state = _HEAD
        self._count = 0
        self._started = False
        self._framing = []

    def _chunk_size(self, line: bytes) -> None:
        digits = line.partition(b";")[0].strip()
        if not digits or len(digits) > 16 or digits.strip(b"0123456789abcdefABCDEF"):
            self._state = _LOST
            return
        length = int(digits, 16)
        if length == 0:
            self._state = _TRAILER
            self._count = 0
            self._started = True
        else:
            self._state = _CHUNK_DATA
            self._left = length
