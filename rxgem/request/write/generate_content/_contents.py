"""The conversation (``rxgem.request.form``) as ``generateContent`` writes it:
``systemInstruction`` and ``contents``, camelCase as on the wire.

Call ids go on ``functionCall``/``functionResponse`` parts only for Gemini 3 (Gemini 2.x
refuses the field); each part's thought signature beside it (``thoughtSignature``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..._json import JSONObject
from ...form import Call, Conversation, Kept, Media, Result, Text, place_signatures

__all__ = ["gemini_contents", "gemini_media"]


def gemini_media(media: Media) -> JSONObject:
    """An ``inlineData`` or ``fileData`` part."""
    if media.data is not None:
        return {"inlineData": {"mimeType": media.mime, "data": media.data}}
    data: JSONObject = {"fileUri": media.uri}
    if media.mime is not None:
        data["mimeType"] = media.mime
    return {"fileData": data}


def _text(part: Text, call_ids: bool) -> JSONObject:
    out: JSONObject = {"text": part.text}
    if part.thought:
        out["thought"] = True
    if part.signature is not None:
        out["thoughtSignature"] = part.signature
    return out


def _call(part: Call, call_ids: bool) -> JSONObject:
    body: JSONObject = {"name": part.name, "args": part.args}
    if call_ids and part.id:
        body["id"] = part.id
    out: JSONObject = {"functionCall": body}
    if part.signature is not None:
        out["thoughtSignature"] = part.signature
    return out


def _result(part: Result, call_ids: bool) -> JSONObject:
    response: JSONObject = {"name": part.name, "response": part.response}
    if part.media:
        response["parts"] = [gemini_media(media) for media in part.media]
    if call_ids and part.id is not None:
        response["id"] = part.id
    return {"functionResponse": response}


def _media(part: Media, call_ids: bool) -> JSONObject:
    return gemini_media(part)


def _kept(part: Kept, call_ids: bool) -> JSONObject:
    return part.part


_WRITERS: Final[dict[type, Callable[[Any, bool], JSONObject]]] = {
    Text: _text,
    Call: _call,
    Result: _result,
    Media: _media,
    Kept: _kept,
}


def gemini_contents(
    conversation: Conversation, *, call_ids: bool, strict_signatures: bool
) -> tuple[JSONObject | None, list[JSONObject]]:
    """``(systemInstruction, contents)`` of a conversation.

    Args:
        call_ids: put call ids on ``functionCall``/``functionResponse`` (Gemini 3).
        strict_signatures: Gemini 3 rules: a step of the current turn whose calls lost
            their signature gets Google's placeholder on its first call (with a
            :class:`~rxgem.request.PlaceholderWarning`).
    """
    if strict_signatures:
        place_signatures(conversation.turns)
    contents = [
        {"role": turn.role, "parts": [_WRITERS[type(part)](part, call_ids) for part in turn.parts]}
        for turn in conversation.turns
    ]
    system = conversation.system
    instruction = {"parts": [{"text": text} for text in system]} if system else None
    return instruction, contents
