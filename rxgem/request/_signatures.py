"""Thought signatures in OpenAI-shaped history: where clients keep them, and the placeholder.

Gemini 3 validates the signatures of the current turn (everything since the last
user text): each ``functionCall`` part that came with a ``thoughtSignature`` must go
back with it, or the request is refused with a 400. Clients keep the signature
where their library put it:

- ``tool_calls[i].extra_content.google.thought_signature``: what rxgem emits, and
  Google's own OpenAI-compatible endpoint (AI Studio);
- ``tool_calls[i].extra_content.vertex.thought_signature``: Vertex's compatible endpoint;
- ``tool_calls[i].provider_specific_fields.thought_signature``: LiteLLM;
- a ``__thought__<signature>`` suffix of the tool-call id: LiteLLM's histories
  (the suffix is not part of the id Gemini gave, so it is cut off).

A text part's signature is the message's own ``extra_content.google.thought_signature``.
"""

from __future__ import annotations

from typing import Any

from ..core.openai import ID_MARK

__all__ = [
    "ID_MARK",
    "PLACEHOLDER",
    "PlaceholderWarning",
    "SignatureWarning",
    "call_signature",
    "calls_signatures",
    "message_signature",
    "split_id",
]


class SignatureWarning(UserWarning):
    """A thought signature could not be sent back as Gemini gave it."""


class PlaceholderWarning(SignatureWarning):
    """A Gemini 3 request lacked a thought signature; Google's placeholder was sent instead."""


PLACEHOLDER = "skip_thought_signature_validator"
"""The literal string Google accepts in place of a lost signature (base64 of it is refused)."""


def _google(holder: Any, vendor: str = "google") -> str | None:
    extra = holder.get("extra_content") if type(holder) is dict else None
    inner = extra.get(vendor) if type(extra) is dict else None
    signature = inner.get("thought_signature") if type(inner) is dict else None
    return signature if type(signature) is str and signature else None


def split_id(call_id: str) -> tuple[str, str | None]:
    """A tool-call id without an embedded signature, and that signature (if any)."""
    head, mark, tail = call_id.partition(ID_MARK)
    return (head, tail or None) if mark else (call_id, None)


def call_signature(call: dict[str, Any]) -> str | None:
    """The thought signature a client kept for a tool call, wherever it kept it."""
    signature = _google(call) or _google(call, "vertex")
    if signature is not None:
        return signature
    fields = call.get("provider_specific_fields")
    if type(fields) is dict:
        value = fields.get("thought_signature")
        if type(value) is str and value:
            return value
    call_id = call.get("id")
    return split_id(call_id)[1] if type(call_id) is str else None


def message_signature(message: dict[str, Any]) -> str | None:
    """The signature of an assistant message's text parts."""
    return _google(message) or _google(message, "vertex")


def calls_signatures(message: dict[str, Any]) -> set[str]:
    """The signatures an assistant message's tool calls carry. One of them found on the
    message itself is a copy (the Agents SDK for JS copies a call's ``extra_content``
    onto its message), not a text part's own: Gemini signs the first call, not the text."""
    calls = message.get("tool_calls")
    if type(calls) is not list:
        return set()
    found = (call_signature(call) for call in calls if type(call) is dict)
    return {signature for signature in found if signature is not None}
