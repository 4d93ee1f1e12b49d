"""The Interactions reader's typed events in a diagram: a one-line description, a few
words for a marble and a colour (``parse_interactions``' lane)."""

from __future__ import annotations

from typing import Any

from ..core.interactions import InteractionEvent

__all__ = ["describe_event", "event_category", "event_label", "is_event"]

_THOUGHT = frozenset({"thought", "thought_summary", "thought_signature"})
_CALL = frozenset({"function_call", "arguments_delta"})
_TEXT = frozenset({"model_output", "text", "text_annotation_delta"})
_SHORT = {
    "thought_signature": "signature",
    "thought_summary": "summary",
    "arguments_delta": "args",
    "text_annotation_delta": "annotation",
}
"""A marble's word for the delta types too long to show with their step's index."""


def is_event(value: Any) -> bool:
    """Whether ``value`` is one of ``parse_interactions``' typed events."""
    return isinstance(value, InteractionEvent)


def _kind(value: Any) -> str:
    """The event's type: its ``event_type`` (``step.start``), or its class for the others."""
    config = getattr(type(value), "__struct_config__", None)
    tag = getattr(config, "tag", None)
    if isinstance(tag, str):
        return tag
    return str(getattr(value, "event_type", None) or type(value).__name__)


def _part(value: Any) -> Any:
    """The step of a ``step.start``, the delta of a ``step.delta``, else ``None``."""
    return getattr(value, "step", None) or getattr(value, "delta", None)


def _status(value: Any) -> str | None:
    interaction = getattr(value, "interaction", None)
    return getattr(interaction, "status", None) or getattr(value, "status", None)


def describe_event(value: Any) -> str:
    """``step.start #1 function_call getWeather``, ``interaction.completed requires_action``."""
    words = [_kind(value)]
    index = getattr(value, "index", None)
    if index is not None:
        words.append(f"#{index}")
    part = _part(value)
    if part is not None:
        words.append(part.type)
        name = getattr(part, "name", None)
        text = getattr(part, "text", None)
        arguments = getattr(part, "arguments", None)
        if name:
            words.append(name)
        if text:
            words.append(repr(text[:40]))
        elif isinstance(arguments, str):
            words.append(repr(arguments[:40]))
    status = _status(value)
    if status:
        words.append(status)
    error = getattr(value, "error", None)
    if error is not None:
        words.append(str(getattr(error, "message", error)))
    return " ".join(words)


def event_label(value: Any) -> str:
    """``function_call#1``, ``args#1``, ``text#1``, ``stop#1``, ``completed``, ``[DONE]``…"""
    kind = _kind(value)
    part = _part(value)
    index = getattr(value, "index", None)
    if part is not None:
        return f"{_SHORT.get(part.type, part.type)}#{index}"
    if kind == "step.stop":
        return f"stop#{index}"
    if kind in ("interaction.completed", "interaction.status_update"):
        return _status(value) or kind.partition(".")[2]
    if kind == "Done":
        return "[DONE]"
    return kind.rpartition(".")[2]


def event_category(value: Any) -> str | None:
    """The colour of a marble: what the event carries (``None``: nothing of note)."""
    kind = _kind(value)
    part = _part(value)
    if kind == "error":
        return "error"
    if kind == "interaction.completed":
        return "finish"
    if part is None:
        return "raw" if kind != "step.stop" else None
    if part.type in _THOUGHT:
        return "thought"
    if part.type in _CALL:
        return "call"
    if part.type in _TEXT:
        return "text"
    return None
