"""What differs between Gemini's two streaming APIs, for the exchange machine (no I/O).

Each is an :class:`~rxgem.transport._machine.ExchangeStrategy` with no state of a stream's
own, so one object serves every stream of its upstream:

- :data:`GENERATE_CONTENT` (``streamGenerateContent``, on the Gemini API and Vertex AI):
  the body's chunks go out as they come (:class:`LineFramer`, a line limit), its end is the
  stream's end, and Google keeps nothing to read again.
- :data:`INTERACTIONS`: whole SSE events go out (:class:`EventFramer`), the body says when
  the stream is over, and a run Google keeps is read again with ``GET
  {base_url}/interactions/{id}?stream=true&last_event_id=...``.
"""

from __future__ import annotations

from typing import Final

from ._cassette import Upstream
from ._http import interactions_url
from ._interaction_frames import EventFramer
from ._line_framer import LineFramer
from ._machine import Request, Target

__all__ = ["GENERATE_CONTENT", "INTERACTIONS", "GenerateContentStrategy", "InteractionsStrategy"]


class GenerateContentStrategy:
    """``streamGenerateContent?alt=sse``: bytes through, the end of the body is the end."""

    __slots__ = ()

    @property
    def kind(self) -> Upstream:
        return "generate-content"

    @property
    def label(self) -> str:
        return "generateContent"

    @property
    def says_done(self) -> bool:
        return False

    def framer(self, max_bytes: int | None) -> LineFramer:
        return LineFramer(max_bytes)

    def reread(self, target: Target, stream_id: str, last_event_id: str | None) -> Request:
        raise RuntimeError("generateContent keeps no stream to read again")


class InteractionsStrategy:
    """The Interactions API's streams: whole events, resumed from the last one when cut."""

    __slots__ = ()

    @property
    def kind(self) -> Upstream:
        return "interactions"

    @property
    def label(self) -> str:
        return "Interactions"

    @property
    def says_done(self) -> bool:
        return True

    def framer(self, max_bytes: int | None) -> EventFramer:
        return EventFramer(max_bytes)

    def reread(self, target: Target, stream_id: str, last_event_id: str | None) -> Request:
        params = {"stream": "true"}
        if last_event_id is not None:
            params["last_event_id"] = last_event_id
        headers = {k: v for k, v in target.headers.items() if k != "content-type"}
        return Request("GET", interactions_url(target.base_url, stream_id), None, headers, params)


GENERATE_CONTENT: Final = GenerateContentStrategy()
INTERACTIONS: Final = InteractionsStrategy()
