"""Sans-IO parsing of SSE payloads into typed Gemini responses.

The common payload (one ``GenerateContentResponse`` with string enums) is decoded
once, straight into the models. Two other shapes take a careful path, found
only when the typed decode fails or gives an empty response:

- **integer enums** (``$alt=json;enum-encoding=int``): ``"finishReason": 1``.
  The payload is decoded as plain JSON, each integer of an enum-typed field is
  replaced by its name in the ``api``'s table (``_enums``),
  and the result is validated against the models.
- **the Code Assist envelope** (``cloudcode-pa.googleapis.com``, gemini-cli's
  sign-in): ``{"response": {...}, "traceId": "..."}``. An object whose only
  known key is ``response``, holding an object, is replaced by that object;
  ``traceId`` and any other key beside it are dropped.

Once a stream has shown either shape, the parser goes straight to the path that
reads it for the rest of the stream.

A JSON object with none of ``GenerateContentResponse``'s keys is not Gemini's: an
OpenAI ``chat.completion.chunk`` (a converted stream fed back) is reported at once;
any other such object is skipped, and reported at the end if the stream never
held a Gemini response at all (``{"hello": "world"}``, another service's body).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .._errors import GeminiAPIError, MalformedStreamError, snippet
from ..sse import SSEEvent
from ._enums import ENUM_TABLES, GeminiApi, normalize_carried, normalize_enums
from ._models import ErrorBody, GenerateContentResponse

__all__ = ["ResponseParser", "api_error", "check_api"]


def check_api(api: object) -> None:
    """``api``: ``"gemini"`` or ``"vertex"`` (whose enum numbers are read)."""
    if not isinstance(api, str) or api not in ENUM_TABLES:
        raise ValueError(f"api must be 'gemini' or 'vertex', not {api!r}")


class _Envelope(msgspec.Struct, frozen=True, gc=False):
    """Gemini Code Assist's ``{"response": {...}, "traceId": "..."}``."""

    response: GenerateContentResponse | None = None


_DECODER = msgspec.json.Decoder(GenerateContentResponse)
_ARRAY_DECODER = msgspec.json.Decoder(list[GenerateContentResponse])
_ENVELOPE_DECODER = msgspec.json.Decoder(_Envelope)
_JSON_DECODER = msgspec.json.Decoder()
_EMPTY = GenerateContentResponse()
_KNOWN_KEYS = frozenset(GenerateContentResponse.__struct_encode_fields__)
_OPENAI_OBJECTS = frozenset({"chat.completion.chunk", "chat.completion"})
_KEYS_SHOWN = 5

# what the stream has shown so far: where ``feed`` starts
_PLAIN = 0  # typed responses with string enums
_WRAPPED = 1  # Code Assist envelopes with string enums
_LENIENT = 2  # integer enums (maybe in envelopes): plain JSON first


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

    Enums sent as integers (``enum-encoding=int``) become their names, numbered
    as the ``api`` numbers them (``"gemini"``: the Gemini API, ``"vertex"``:
    Vertex AI; unknown numbers become ``FINISH_REASON_<n>`` and the like). A
    Code Assist envelope ``{"response": {...}, "traceId": ...}`` is unwrapped.

    Raises:
        ValueError: at construction, for an ``api`` other than ``"gemini"`` or ``"vertex"``.
    """

    __slots__ = ("_api", "_events", "_gemini", "_mode", "_stray", "_tables")

    def __init__(self, *, api: GeminiApi = "gemini") -> None:
        check_api(api)
        self._api: GeminiApi = api
        self._tables = ENUM_TABLES[api]
        self._events = 0
        self._mode = _PLAIN
        self._gemini = False  # a payload with a known key (or an envelope) came
        self._stray: MalformedStreamError | None = None  # the first object not Gemini's

    @property
    def api(self) -> GeminiApi:
        """Whose enum numbers integer enums are read with: ``"gemini"`` or ``"vertex"``."""
        return self._api

    @property
    def events(self) -> int:
        """How many events were fed so far."""
        return self._events

    error = None
    """Always ``None``: bad input raises at once (one unit of input gives one result)."""

    def close(self, error: Exception | None = None) -> list[GenerateContentResponse]:
        """The end of input: nothing is held back, so nothing to return.

        Raises:
            MalformedStreamError: no payload was a Gemini response, and one was a
                JSON object with none of its keys (named with its event number).
        """
        stray = self._stray
        if error is None and stray is not None and not self._gemini:
            raise stray
        return []

    def feed(self, event: SSEEvent) -> list[GenerateContentResponse]:
        self._events += 1
        if self._mode:
            return self._feed_other(event)
        try:
            # the payload as it arrived (UTF-8 bytes from SSEDecoder): no str round trip
            response = _DECODER.decode(event.payload)
        except msgspec.DecodeError:
            return self._slow(event)
        except RecursionError:
            raise self._too_deep(event.data) from None
        if response.error is not None:
            raise api_error(response.error, event=self._events)
        candidates = response.candidates
        if candidates is None and response == _EMPTY:
            return self._lenient(event.data)  # only unknown keys: maybe an envelope
        if candidates and (
            candidates[0].safety_ratings is not None
            or candidates[0].url_context_metadata is not None
            or len(candidates) > 1
        ):
            normalize_carried(response, self._tables)  # numbers the typed decode let through
        elif response.prompt_feedback is not None:
            normalize_carried(response, self._tables)
        self._gemini = True
        return [response]

    def _slow(self, event: SSEEvent) -> list[GenerateContentResponse]:
        """The payload did not decode as one response: an array, blank, bad UTF-8,
        integer enums, or bad."""
        data = event.data  # invalid UTF-8 replaced, as WHATWG decodes event streams
        try:
            response = _DECODER.decode(data)
        except msgspec.ValidationError:
            if data.lstrip().startswith("["):
                return self._feed_array(data)
            return self._lenient(data)
        except msgspec.DecodeError as exc:
            if not data.strip():
                return []
            raise MalformedStreamError(
                f"invalid JSON ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        if response.error is not None:
            raise api_error(response.error, event=self._events)
        if response.candidates is None and response == _EMPTY:
            return self._lenient(data)
        self._gemini = True
        return [response]

    def _feed_array(self, data: str) -> list[GenerateContentResponse]:
        try:
            responses = _ARRAY_DECODER.decode(data)
        except msgspec.ValidationError:
            return self._lenient(data)
        except msgspec.DecodeError as exc:
            raise MalformedStreamError(
                f"invalid JSON ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        if _EMPTY in responses:
            return self._lenient(data)
        self._gemini = True
        return self._checked(responses)

    def _feed_other(self, event: SSEEvent) -> list[GenerateContentResponse]:
        """A stream that has shown envelopes or integer enums."""
        if self._mode == _WRAPPED:
            try:
                response = _ENVELOPE_DECODER.decode(event.payload).response
            except msgspec.DecodeError:
                response = None
            except RecursionError:
                raise self._too_deep(event.data) from None
            if response is not None:
                self._gemini = True
                return self._checked([response])
        return self._lenient(event.data)

    def _lenient(self, data: str) -> list[GenerateContentResponse]:
        """Plain JSON first: unwrap envelopes, name integer enums, then validate."""
        try:
            value = _JSON_DECODER.decode(data)
            if type(value) is list:
                value = [self._unwrap(item, data) for item in value]
                responses = msgspec.convert(value, list[GenerateContentResponse])
            else:
                responses = [msgspec.convert(self._unwrap(value, data), GenerateContentResponse)]
        except msgspec.ValidationError as exc:
            raise MalformedStreamError(
                f"payload has the wrong shape ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        except msgspec.DecodeError as exc:
            if not data.strip():
                return []
            raise MalformedStreamError(
                f"invalid JSON ({exc})", event=self._events, snippet=snippet(data)
            ) from None
        except RecursionError:
            raise self._too_deep(data) from None
        return self._checked(responses)

    def _unwrap(self, value: Any, data: str) -> Any:
        """``value`` without its Code Assist envelope, its integer enums named;
        ``data``: the payload it came in (for the error that is not Gemini's)."""
        if type(value) is not dict:
            return value
        wrapped = False
        if value.keys().isdisjoint(_KNOWN_KEYS):
            inner = value.get("response")
            if type(inner) is not dict:
                if value:
                    self._not_gemini(value, data)
                return value
            value = inner
            wrapped = True
        self._gemini = True
        if normalize_enums(value, self._tables):
            self._mode = _LENIENT
        elif wrapped and self._mode == _PLAIN:
            self._mode = _WRAPPED
        return value

    def _not_gemini(self, value: dict[str, Any], data: str) -> None:
        """An object with none of the known keys: an OpenAI chunk raises at once,
        the first other one is kept for :meth:`close`."""
        kind = value.get("object")
        if type(kind) is str and kind in _OPENAI_OBJECTS:
            raise MalformedStreamError(
                f"an OpenAI {kind}, not a Gemini GenerateContentResponse",
                event=self._events,
                snippet=snippet(data),
            )
        if self._stray is None:
            keys = ", ".join(snippet(key, 40) for key in list(value)[:_KEYS_SHOWN])
            more = ", …" if len(value) > _KEYS_SHOWN else ""
            self._stray = MalformedStreamError(
                f"JSON that is not a Gemini GenerateContentResponse (keys: {keys}{more})",
                event=self._events,
                snippet=snippet(data),
            )

    def _checked(self, responses: list[GenerateContentResponse]) -> list[GenerateContentResponse]:
        for response in responses:
            if response.error is not None:
                raise api_error(response.error, event=self._events)
        return responses

    def _too_deep(self, data: str) -> MalformedStreamError:
        return MalformedStreamError(
            "JSON nested too deeply", event=self._events, snippet=snippet(data)
        )
