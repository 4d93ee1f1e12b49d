"""The conversation both readers make and both writers take: turns of typed parts.

The Chat Completions reader (``messages``) and the Responses reader (``input`` items, the
history before them) resolve an OpenAI conversation into a :class:`Conversation`: the
system texts, then ``user`` and ``model`` turns whose parts are texts, media, function
calls and their results, each with the thought signature it carries. The writers put it
on the wire: ``generateContent``'s ``contents`` (``write/generate_content``) and the
Interactions ``input`` steps (``write/interactions``).

The structs are not tracked by the garbage collector (``gc=False``): a request makes one
per part, and none of them can be part of a reference cycle.

What both writers ask of it is here too: adjacent turns of one role joined
(:func:`merge_turns`), and Gemini 3's rule that a step of the current turn carries its
signature on its first call (:func:`place_signatures`). Each is one pass over the parts.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec

from .._json import JSONObject
from .._policy import warn
from .._signatures import PLACEHOLDER, PlaceholderWarning

__all__ = [
    "Call",
    "Conversation",
    "Kept",
    "Media",
    "Part",
    "Result",
    "Text",
    "Turn",
    "merge_turns",
    "place_signatures",
    "signature_of",
]


class Text(msgspec.Struct, gc=False):
    """Text (``thought``: a thought's place, holding its signature; its text is not sent)."""

    text: str
    signature: str | None = None
    thought: bool = False


class Media(msgspec.Struct, gc=False):
    """An image, a clip or a file: inline (``data``, base64) or by reference (``uri``)."""

    mime: str | None
    data: str | None = None
    uri: str | None = None


class Call(msgspec.Struct, gc=False):
    """A function call the model made (``id``: ``None`` when the client kept none)."""

    name: str
    args: JSONObject
    id: str | None = None
    signature: str | None = None


class Result(msgspec.Struct, gc=False):
    """A function's result: ``response`` (always an object) and its images and files."""

    name: str
    response: JSONObject
    id: str | None = None
    media: list[Media] = msgspec.field(default_factory=list)


class Kept(msgspec.Struct, gc=False):
    """A Gemini part sent back as Gemini gave it, its signature in it: code Gemini ran,
    built-in tool records, images and clips of an answer (kept in ``extra_content``)."""

    part: JSONObject


Part: TypeAlias = Text | Media | Call | Result | Kept


class Turn(msgspec.Struct, gc=False):
    role: Literal["user", "model"]
    parts: list[Part]


class Conversation(msgspec.Struct, gc=False):
    """``system``: the system texts, in order; ``turns``: the conversation."""

    system: list[str]
    turns: list[Turn]


def signature_of(part: Part) -> str | None:
    """The thought signature a part carries, if any."""
    if isinstance(part, Kept):
        found = part.part.get("thoughtSignature")
        return found if type(found) is str else None
    if isinstance(part, Text | Call):
        return part.signature
    return None


def _signed(part: Part) -> bool:
    if isinstance(part, Kept):
        return "thoughtSignature" in part.part
    return signature_of(part) is not None


def _only_results(turn: Turn) -> bool:
    return all(isinstance(part, Result) for part in turn.parts)


def merge_turns(turns: list[Turn]) -> list[Turn]:
    """Join adjacent same-role turns, never human text with function results.

    Linear: each part is copied once, and whether a merged turn holds only results is
    kept beside it rather than scanned again per turn.
    """
    merged: list[Turn] = []
    results_only: list[bool] = []
    for turn in turns:
        only = _only_results(turn)
        if merged and merged[-1].role == turn.role and results_only[-1] == only:
            merged[-1].parts.extend(turn.parts)
        else:
            merged.append(Turn(turn.role, list(turn.parts)))
            results_only.append(only)
    return merged


def place_signatures(turns: list[Turn], *, in_place: bool = False) -> None:
    """Gemini 3: each step of the current turn must carry its signature on its first call.

    ``in_place`` (Interactions): a step whose signature stands before its first call, on a
    part of its own (a thought step, kept in its place), is signed too.
    """
    start = 0
    for i, turn in enumerate(turns):
        if turn.role == "user" and not _only_results(turn):
            start = i + 1
    for turn in turns[start:]:
        if turn.role != "model":
            continue
        at = next((n for n, part in enumerate(turn.parts) if isinstance(part, Call)), None)
        if at is None:
            continue
        first = turn.parts[at]
        assert isinstance(first, Call)
        if in_place and any(_signed(part) for part in turn.parts[:at]):
            continue
        if first.signature is None:
            first.signature = PLACEHOLDER
            warn(
                f"the call to {first.name!r} in the current turn came back without its thought"
                " signature; Gemini 3 refuses that, so Google's placeholder was sent",
                PlaceholderWarning,
            )
