"""The bytes of a generateContent body, let through as they come but for a line too long
(no I/O).

Each Gemini event is one ``data:`` line, and the SSE decoder downstream holds a line until
its end: an endless one would grow in memory until the process dies. :class:`LineFramer`
stops at the chunk that takes a line past the limit, before any of it goes out. Each chunk
costs one ``rfind`` (in C); a closer look happens only when the chunk could take a line
past the limit.
"""

from __future__ import annotations

from ..core import MalformedStreamError

__all__ = ["LineFramer", "line_after", "line_too_long"]


def line_after(chunk: bytes, line: int, limit: int) -> int:
    """The length of the line in progress after ``chunk``, which follows a line in progress
    of ``line`` bytes; ``-1`` when a line (bytes between two ``\\n``) gets longer than
    ``limit`` within ``chunk``.

    One ``rfind`` when the whole chunk fits in what the line in progress may still grow;
    else a search of ``limit + 1``-byte windows, each from its last ``\\n`` on (at most two
    per ``limit`` bytes of the chunk).
    """
    size = len(chunk)
    position = 0
    while size - position > limit - line:  # the rest could hold a line too long
        newline = chunk.rfind(b"\n", position, position + limit - line + 1)
        if newline < 0:
            return -1
        position, line = newline + 1, 0
    newline = chunk.rfind(b"\n", position)
    return line + size - position if newline < 0 else size - newline - 1


def line_too_long(limit: int) -> MalformedStreamError:
    return MalformedStreamError(
        f"an upstream line is longer than max_line_bytes={limit} bytes"
        " (the stream was stopped there)"
    )


class LineFramer:
    """A generateContent body's chunks, each let through whole as it comes.

    It keeps nothing an upstream could resume from (:attr:`stream_id` stays ``None``) and
    never says the stream is over: the end of the body is.

    Args:
        max_line_bytes: the longest line (bytes between two ``\\n``); a chunk that makes
            one longer sets :attr:`failure` and none of it is let through. ``None``: no
            limit.
    """

    __slots__ = ("events", "failure", "finished", "last_event_id", "limit", "line", "stream_id")

    def __init__(self, max_line_bytes: int | None = None) -> None:
        self.limit = max_line_bytes
        self.line = 0  # bytes since the last b"\n"
        self.events = 0
        """The chunks let through so far."""
        self.failure: MalformedStreamError | None = None
        self.finished = False
        self.stream_id: str | None = None
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> bytes:
        """``chunk``, or ``b""`` once a line is too long (then :attr:`failure` is set).

        A chunk that cannot take a line past the limit costs one ``rfind`` and no call:
        this runs once per chunk of every stream."""
        limit = self.limit
        if limit is not None:
            if self.failure is not None:
                return b""
            line = self.line
            size = len(chunk)
            if size <= limit - line:  # fits whatever it holds: line_after's one rfind, here
                newline = chunk.rfind(b"\n")
                line = line + size if newline < 0 else size - newline - 1
            else:
                line = line_after(chunk, line, limit)
                if line < 0:
                    self.failure = line_too_long(limit)
                    return b""
            self.line = line
        self.events += 1
        return chunk

    def restart(self) -> None:
        """A new connection: no line in progress."""
        self.line = 0
