"""Whole SSE events of an Interactions stream, and what resuming it needs (no I/O).

:class:`EventFramer` holds back the event in progress, so that only complete events
go downstream: a stream cut in the middle of an event is resumed from the last
complete one, and the event that was cut arrives again, whole. It remembers the
interaction's id (from ``interaction.created``), the last complete event's
``event_id`` (the ``id:`` line, else the ``event_id`` of the JSON), and whether the
stream said it was over (``data: [DONE]``, ``interaction.completed`` or ``error``).

What Google sends is checked as it comes: an ``interaction.created`` whose id is not one
Google gives (``../models/x``, say) stops the stream with a
:class:`~rxgem.MalformedStreamError` (the id would otherwise go into the URL of the next
request), and an event whose ``event_id`` was already delivered (an upstream that repeats
itself when resumed) is dropped, so no event reaches the reader twice.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from ..core import MalformedStreamError
from ._http import is_google_interaction_id

__all__ = ["EventFramer"]

# A blank line ends an event: two line ends (a CR at the end of the buffer ends a line
# whether or not an LF follows it; a stray LF then starts the next block, an empty line).
_EVENT_END: Final = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)")
_LINE: Final = re.compile(rb"\r\n|\r|\n")
_TERMINAL: Final = frozenset({b"interaction.completed", b"error"})


class _Created(msgspec.Struct):
    id: str


class _Lifecycle(msgspec.Struct):
    interaction: _Created | None = None
    event_id: str | None = None
    event_type: str | None = None


def _too_long(limit: int) -> MalformedStreamError:
    return MalformedStreamError(
        f"an upstream event is longer than max_line_bytes={limit} bytes"
        " (the stream was stopped there)"
    )


def _bad_id(event: int) -> MalformedStreamError:
    return MalformedStreamError(
        "interaction.created gave an id that is not an interaction id (letters, digits and"
        " _ - . =, at most 256): the stream was stopped there",
        event=event,
    )


def _fields(block: bytes) -> tuple[bytes | None, bytes | None, bytes | None]:
    """An event's ``event``, ``id`` and ``data`` fields (``None`` when absent)."""
    if block.startswith(b"event: "):  # Google's frame: event, id, then one data line
        first = block.find(b"\n")
        second = block.find(b"\n", first + 1)
        if (
            second > 0
            and block.startswith(b"id: ", first + 1)
            and block.startswith(b"data: ", second + 1)
            and block.find(b"\n", second + 1) < 0
            and block.find(b"\r", 0, second) < 0
        ):
            return block[7:first], block[first + 5 : second], block[second + 7 :]
    kind = event_id = data = None
    for line in _LINE.split(block):
        name, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if name == b"event":
            kind = value
        elif name == b"id":
            event_id = value
        elif name == b"data":
            data = value if data is None else data + b"\n" + value
    return kind, event_id, data


class EventFramer:
    """Cuts an Interactions SSE body into whole events.

    Args:
        max_event_bytes: the largest event (or run of bytes without a blank line) to
            hold; a larger one is a :class:`MalformedStreamError`. ``None``: no limit.
    """

    def __init__(self, max_event_bytes: int | None = None) -> None:
        self.max_event_bytes = max_event_bytes
        self.interaction_id: str | None = None
        self.last_event_id: str | None = None
        self.finished = False
        self.events = 0
        """The complete events seen so far (comments not counted)."""
        self.failure: MalformedStreamError | None = None
        """Set once an event is longer than ``max_event_bytes`` or names the interaction
        with an id that is not one: the stream stops there."""
        self.repeated = 0
        """The events dropped because their ``event_id`` was already delivered."""
        self._delivered: set[bytes] = set()  # the event ids of the events let through
        self._buffer = bytearray()
        self._searched = 0  # bytes of the buffer searched for a blank line in vain

    @property
    def stream_id(self) -> str | None:
        """:attr:`interaction_id`, by the name the exchange machine reads."""
        return self.interaction_id

    @stream_id.setter
    def stream_id(self, value: str | None) -> None:
        self.interaction_id = value

    def feed(self, chunk: bytes) -> bytes:
        """The complete events ``chunk`` completes (``b""`` when none), as they came, but
        for those whose ``event_id`` was already delivered.

        An event longer than ``max_event_bytes`` (complete or not), or one that names the
        interaction with an id that is not one, sets :attr:`failure` and ends what this
        call returns: the events before it still come out.
        """
        if self.failure is not None:
            return b""
        buffer = self._buffer
        buffer += chunk
        limit = self.max_event_bytes
        end = 0
        kept = 0  # where the bytes to let through begin (those before were taken or dropped)
        out: list[bytes] = []
        # a blank line is at most 4 bytes: what was searched before needs no new look
        for match in _EVENT_END.finditer(buffer, max(0, self._searched - 3)):
            if limit is not None and match.start() - end > limit:
                self.failure = _too_long(limit)
                break
            keep = self._read(bytes(buffer[end : match.start()]))
            if self.failure is not None:
                break
            if not keep:
                out.append(bytes(buffer[kept:end]))
                kept = match.end()
            end = match.end()
        out.append(bytes(buffer[kept:end]))
        del buffer[:end]
        self._searched = len(buffer)
        if limit is not None and self.failure is None and len(buffer) > limit:
            self.failure = _too_long(limit)
        return out[0] if len(out) == 1 else b"".join(out)

    def restart(self) -> None:
        """Forget the event in progress (a new connection sends it again, whole)."""
        self._buffer.clear()
        self._searched = 0

    def _read(self, block: bytes) -> bool:
        """Note what one event's fields say; ``False`` for an event to drop (its
        ``event_id`` was delivered already)."""
        kind, event_id, data = _fields(block)
        if data is None:
            return True  # a comment or an empty event: not a step of the stream
        lifecycle = None
        if data != b"[DONE]" and (
            event_id is None or kind is None or kind == b"interaction.created"
        ):
            try:
                lifecycle = msgspec.json.decode(data, type=_Lifecycle)
            except msgspec.DecodeError:
                lifecycle = None  # the reader downstream says what is wrong with it
        if lifecycle is not None:
            if kind is None and lifecycle.event_type is not None:
                kind = lifecycle.event_type.encode()
            if event_id is None and lifecycle.event_id is not None:
                event_id = lifecycle.event_id.encode()
        if event_id:
            if event_id in self._delivered:
                self.repeated += 1
                return False
            self._delivered.add(event_id)
        self.events += 1
        if data == b"[DONE]":
            self.finished = True
            return True
        if kind == b"interaction.created" and lifecycle is not None and lifecycle.interaction:
            if not is_google_interaction_id(lifecycle.interaction.id):
                self.failure = _bad_id(self.events)
                return False
            self.interaction_id = lifecycle.interaction.id
        if event_id:
            self.last_event_id = event_id.decode("utf-8", "replace")
        if kind in _TERMINAL:
            self.finished = True
        return True
