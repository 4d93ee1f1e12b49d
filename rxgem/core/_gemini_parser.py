"""Sans-IO parsing of SSE payloads into typed Gemini responses."""

from __future__ import annotations

import msgspec

from ._errors import GeminiAPIError, MalformedStreamError, snippet
from ._gemini_models import ErrorBody, GenerateContentResponse
from ._gemini_sse import SSEEvent

__all__ = ["ResponseParser", "api_error"]

_DECODER = msgspec.json.Decoder(GenerateContentResponse)
_ARRAY_DECODER = msgspec.json.Decoder(list[GenerateContentResponse])


def api_error(body: ErrorBody, *, event: int | None = None) -> GeminiAPIError:
    """Build a :class:`GeminiAPIError` from Google's ``error`` object."""
    return GeminiAPIError(
        body.message or "(no message)",
        code=body.code,
        status=body.status,
        details=body.details,
        event=event,
    )


class ResponseParser:
    """Turns SSE events into :class:`GenerateContentResponse` objects, one event at a time.

    ``feed(event)`` returns the responses the event holds (usually one; none for an
    empty payload; several for a JSON array of responses). It raises
    :class:`GeminiAPIError` for an ``{"error": {...}}`` payload (also inside a
    one-element array) and :class:`MalformedStreamError` for invalid JSON or a
    payload of the wrong shape, naming the 1-based event number.
    """

    __slots__ = ("_events",)

    def __init__(self) -> None:
        self._events = 0

    @property
    def events(self) -> int:
        """How many events were fed so far."""
        return self._events

    error = None
    """Always ``None``: bad input raises at once (one unit of input gives one result)."""

    def close(self, error: Exception | None = None) -> list[GenerateContentResponse]:
        """The end of input: nothing is held back, so nothing to return."""
        return []

    def feed(self, event: SSEEvent) -> list[GenerateContentResponse]:
        self._events += 1
        try:
            # the payload as it arrived (UTF-8 bytes from SSEDecoder): no str round trip
            response = _DECODER.decode(event.payload)
        except msgspec.DecodeError:
            return self._slow(event)
        except RecursionError:
            raise MalformedStreamError(
                "JSON nested too deeply", event=self._events, snippet=snippet(event.data)
            ) from None
        if response.error is not None:
            raise api_error(response.error, event=self._events)
        return [response]

    def _slow(self, event: SSEEvent) -> list[GenerateContentResponse]:
        """The payload did not decode as one response: an array, blank, bad UTF-8, or bad."""
        data = event.data  # invalid UTF-8 replaced, as WHATWG decodes event streams
        try:
            response = _DECODER.decode(data)
        except msgspec.ValidationError as exc:
            if data.lstrip().startswith("["):
                return self._feed_array(data)
            raise MalformedStreamError(
                f"payload has the wrong shape ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        except msgspec.DecodeError as exc:
            if not data.strip():
                return []
            raise MalformedStreamError(
                f"invalid JSON ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        if response.error is not None:
            raise api_error(response.error, event=self._events)
        return [response]

    def _feed_array(self, data: str) -> list[GenerateContentResponse]:
        try:
            responses = _ARRAY_DECODER.decode(data)
        except msgspec.ValidationError as exc:
            raise MalformedStreamError(
                f"payload has the wrong shape ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        except msgspec.DecodeError as exc:
            raise MalformedStreamError(
                f"invalid JSON ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        for response in responses:
            if response.error is not None:
                raise api_error(response.error, event=self._events)
        return responses
