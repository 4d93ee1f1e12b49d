"""Sans-IO parsing of an Interactions SSE stream into typed events.

Each event's JSON is decoded once, straight into the event model its ``event_type``
names. What does not decode takes a careful path that says what it is:

- the pre-June-2026 schema (``interaction.start``, ``content.delta``,
  ``interaction.complete``), which Google no longer serves: refused, saying so;
- an OpenAI ``chat.completion.chunk`` or a Gemini ``generateContent`` response (a stream
  read with the wrong upstream): refused, saying what it is;
- an event type Google added: an :class:`~rxgem.core.interactions.UnknownEvent`, passed on;
- anything else (invalid JSON, a known event of the wrong shape, no ``event_type``): a
  :class:`~rxgem.MalformedStreamError` naming the 1-based event number and its type.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .._errors import GeminiAPIError, MalformedStreamError, snippet
from ..sse import SSEEvent
from ._models import Done, InteractionEvent, StepDelta, StepStart, TaggedEvent, UnknownEvent
from ._parts import KNOWN_DELTAS, KNOWN_STEPS

__all__ = ["OLD_SCHEMA", "InteractionsParser", "not_interactions"]

_DECODER = msgspec.json.Decoder(TaggedEvent)
_JSON_DECODER = msgspec.json.Decoder()
_DONE = Done()

OLD_SCHEMA = frozenset(
    {
        "interaction.start",
        "interaction.complete",
        "content.start",
        "content.delta",
        "content.stop",
    }
)
"""The event types of the Interactions schema before June 2026."""

_GEMINI_KEYS = frozenset(
    {"candidates", "promptFeedback", "usageMetadata", "modelVersion", "responseId"}
)
_OPENAI_OBJECTS = frozenset({"chat.completion.chunk", "chat.completion", "response"})


def not_interactions(value: dict[str, Any]) -> str | None:
    """What ``value`` is when it is another API's JSON (``None``: not one rxgem knows)."""
    kind = value.get("object")
    if type(kind) is str and kind in _OPENAI_OBJECTS:
        return f"an OpenAI {kind}, not an Interactions event"
    if not value.keys().isdisjoint(_GEMINI_KEYS):
        return (
            "a Gemini generateContent response, not an Interactions event"
            " (read it with the generate-content upstream)"
        )
    return None


def old_schema(event_type: str) -> str:
    return (
        f"event type {event_type!r} is of the Interactions schema from before June 2026"
        " (interaction.start, content.delta, outputs[]), which Google no longer serves;"
        " rxgem reads the step.* schema"
    )


def _with_id(parsed: TaggedEvent, event: SSEEvent) -> TaggedEvent:
    """``parsed`` with the SSE ``id`` as its ``event_id`` when it has none of its own."""
    if parsed.event_id is None and event.id:
        return msgspec.structs.replace(parsed, event_id=event.id)
    return parsed


def _with_raw(parsed: StepStart | StepDelta, event: SSEEvent) -> TaggedEvent:
    """``parsed`` (of a step or delta type not known here) with its step or delta as sent."""
    value = _JSON_DECODER.decode(event.payload)
    key = "delta" if type(parsed) is StepDelta else "step"
    raw = value.get(key) if type(value) is dict else None
    return _with_id(msgspec.structs.replace(parsed, raw=raw), event)


def _complete(parsed: TaggedEvent, event: SSEEvent) -> TaggedEvent:
    """``parsed`` with its SSE ``id`` and, for a type not known here, what was sent."""
    if type(parsed) is StepDelta:
        if parsed.delta.type not in KNOWN_DELTAS:
            return _with_raw(parsed, event)
    elif type(parsed) is StepStart and parsed.step.type not in KNOWN_STEPS:
        return _with_raw(parsed, event)
    return _with_id(parsed, event)


class InteractionsParser:
    """Turns SSE events of an Interactions stream into typed events, one at a time.

    ``feed(event)`` returns the event's model (one; none for a blank payload):
    :class:`InteractionCreated`, :class:`InteractionStatusUpdate`, :class:`StepStart`,
    :class:`StepDelta`, :class:`StepStop`, :class:`InteractionCompleted`,
    :class:`ErrorEvent`, :class:`Done` (``[DONE]``) or :class:`UnknownEvent` (a type
    Google added). An event without its own ``event_id`` gets the SSE ``id``, if any.

    Raises :class:`MalformedStreamError` for invalid JSON, a known event of the wrong
    shape, an event without ``event_type``, the pre-June-2026 schema, or another API's
    JSON; :class:`GeminiAPIError` for a bare ``{"error": {...}}`` body. Each names the
    1-based event number (and the event's type when it has one).
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

    def close(self, error: Exception | None = None) -> list[InteractionEvent]:
        """The end of input: nothing is held back."""
        return []

    def feed(self, event: SSEEvent) -> list[InteractionEvent]:
        self._events += 1
        try:
            parsed: TaggedEvent = _DECODER.decode(event.payload)
        except (msgspec.DecodeError, RecursionError):
            return self._slow(event)
        if type(parsed) is StepDelta:
            if parsed.delta.type not in KNOWN_DELTAS:
                return [_with_raw(parsed, event)]
        elif type(parsed) is StepStart and parsed.step.type not in KNOWN_STEPS:
            return [_with_raw(parsed, event)]
        # the event's own id first: Google sends one, and reading the SSE id decodes it
        if parsed.event_id is None and event.id is not None:
            return [_with_id(parsed, event)]
        return [parsed]

    def _slow(self, event: SSEEvent) -> list[InteractionEvent]:
        """The payload is not one known event: say what it is."""
        data = event.data
        stripped = data.strip()
        if not stripped:
            return []
        if stripped == "[DONE]":
            return [_DONE]
        try:
            value = _JSON_DECODER.decode(data)
        except msgspec.DecodeError as exc:
            raise self._malformed(f"invalid JSON ({exc})", data) from None
        except RecursionError:
            raise self._malformed("JSON nested too deeply", data) from None
        if type(value) is not dict:
            raise self._malformed(f"a JSON {type(value).__name__}, not an event object", data)
        event_type = value.get("event_type")
        if event_type is None and event.event not in ("message", "raw"):
            event_type = value["event_type"] = event.event  # named by the SSE `event:` line
            try:
                named: TaggedEvent = msgspec.convert(value, TaggedEvent)
            except msgspec.ValidationError:
                pass
            else:
                return [_complete(named, event)]
        if type(event_type) is not str:
            other = not_interactions(value)
            if other is not None:
                raise self._malformed(other, data)
            error = value.get("error")
            if type(error) is dict and len(value) == 1:
                raise self._api_error(error)
            raise self._malformed("an object without an event_type", data)
        if event_type in OLD_SCHEMA:
            raise self._malformed(old_schema(event_type), data)
        try:
            parsed: TaggedEvent = msgspec.convert(value, TaggedEvent)
        except msgspec.ValidationError as exc:
            if f"'{event_type}'" in str(exc) and "$.event_type" in str(exc):
                event_id = value.get("event_id")
                return [
                    UnknownEvent(event_type, value, event_id if type(event_id) is str else event.id)
                ]
            raise self._malformed(f"{event_type} event of the wrong shape ({exc})", data) from None
        return [parsed]

    def _api_error(self, error: dict[str, Any]) -> GeminiAPIError:
        code, message, status = error.get("code"), error.get("message"), error.get("status")
        return GeminiAPIError(
            message if type(message) is str else "(no message)",
            code=code if type(code) is int else None,
            status=status if type(status) is str else None,
            event=self._events,
        )

    def _malformed(self, reason: str, data: str) -> MalformedStreamError:
        return MalformedStreamError(
            f"Interactions stream: {reason}", event=self._events, snippet=snippet(data)
        )
