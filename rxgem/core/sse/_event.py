"""One event of a ``text/event-stream`` body, as the SSE decoder dispatches it.

:class:`SSEEvent` is what :class:`~rxgem.core.SSEDecoder` hands a reader (Gemini's
:class:`~rxgem.core.ResponseParser`): the ``data`` of a Server-Sent Event with its type
and id, or one raw JSON block or JSON array element of the body.
"""

from __future__ import annotations

__all__ = ["SSEEvent"]


class SSEEvent:
    """One dispatched Server-Sent Event (or one raw JSON block).

    Attributes:
        data: the event's ``data`` lines joined by ``"\\n"`` (without a final
            ``"\\n"``); for a raw block, the block's text (for a JSON array, one
            element's). Invalid UTF-8 is replaced with U+FFFD, as WHATWG decodes
            event streams.
        payload: the same data as it arrived: UTF-8 ``bytes`` for events made by
            :class:`~rxgem.core.SSEDecoder` (a JSON parser can take them without a round trip
            through ``str``), or the ``str`` an event was built with.
        event: the event type: ``"message"`` unless an ``event`` field set it;
            ``"raw"`` for a raw JSON block.
        id: the last event id at dispatch time, ``None`` if no ``id`` field was
            ever seen (always ``None`` for a raw block). Given as ``bytes`` (as
            :class:`~rxgem.core.SSEDecoder` may give it), it is decoded when first read,
            like ``data``: most readers never read it (an Interactions event carries its
            own ``event_id``).
        retry: the value of a valid ``retry`` field of this event, else ``None``.

    Events compare equal when ``data``, ``event``, ``id`` and ``retry`` are equal.
    """

    __slots__ = ("_id", "_text", "event", "payload", "retry")
    __match_args__ = ("data", "event", "id", "retry")

    def __init__(
        self,
        data: str | bytes,
        event: str = "message",
        id: str | bytes | None = None,
        retry: int | None = None,
    ) -> None:
        self.payload: str | bytes = data
        self._text: str | None = data if isinstance(data, str) else None
        self.event = event
        self._id: str | bytes | None = id
        self.retry = retry

    @property
    def id(self) -> str | None:
        value = self._id
        if isinstance(value, bytes):
            value = self._id = value.decode("utf-8", "replace")
        return value

    @property
    def raw_id(self) -> str | bytes | None:
        """The id as given, not decoded: what a decoder carries on to the next event."""
        return self._id

    @property
    def data(self) -> str:
        text = self._text
        if text is None:
            payload = self.payload
            assert isinstance(payload, bytes)
            text = self._text = payload.decode("utf-8", "replace")
        return text

    def _key(self) -> tuple[str, str, str | None, int | None]:
        return (self.data, self.event, self.id, self.retry)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SSEEvent):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"SSEEvent(data={self.data!r}, event={self.event!r}, id={self.id!r},"
            f" retry={self.retry!r})"
        )
