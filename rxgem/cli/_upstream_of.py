"""Which Gemini API a capture comes from, told from its first event (``rxgem convert``
without ``--from``).

- An Interactions stream: an SSE event whose ``event:`` is ``interaction.*`` or
  ``step.*``, or whose JSON (SSE ``data:`` or a JSON line) has an ``event_type``.
- An Interaction object (a non-streamed answer): one JSON object with ``steps`` or
  ``"object": "interaction"``.
- OpenAI output (what ``convert`` writes, not what it reads): an SSE event whose
  ``event:`` is ``response.*``, or whose JSON has ``"object": "chat.completion.chunk"``
  or a ``type`` of ``response.*`` (a Responses event).
- A ``generateContent`` stream: anything else (its first response has ``candidates``,
  ``usageMetadata``…; an input that is neither is left to its reader to refuse).

Only the first object's top-level keys count (a function's arguments may well have a
``steps`` key), read from the first bytes without decoding the whole: a first event
can be a megabyte of arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["Found", "Source", "upstream_of"]

Source = Literal["generate-content", "interactions", "interaction-object", "openai"]
"""What a capture is: a ``generateContent`` stream, an Interactions stream, an Interaction
object, or OpenAI output (chat chunks or Responses events, which ``convert`` refuses)."""

LOOK: Final = 64 * 1024
"""The bytes read at most before deciding, past any leading blanks (a first event longer
than this is not read to its end: what its first bytes show decides)."""

_GENERATE_KEYS: Final = frozenset(
    {"candidates", "usageMetadata", "promptFeedback", "modelVersion", "responseId"}
)
_EVENT_LINE: Final = re.compile(r"^event:[ ]?(interaction\.|step\.)", re.MULTILINE)
_SSE_FIELD: Final = re.compile(r"^(data|event|id|retry)(:|$)|^:")
_BLANK_LINE: Final = re.compile(r"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")
_OBJECT_INTERACTION: Final = re.compile(r'"object"\s*:\s*"interaction"')
_OPENAI_EVENT_LINE: Final = re.compile(r"^event:[ ]?response\.", re.MULTILINE)
_OPENAI_JSON: Final = re.compile(
    r'"object"\s*:\s*"chat\.completion(?:\.chunk)?"|"type"\s*:\s*"response\.'
)


@dataclass(frozen=True, slots=True)
class Found:
    """What :func:`upstream_of` found: the kind of capture, and whether its first event
    says so (``sure``) rather than only failing to say otherwise."""

    source: Source
    sure: bool
    why: str
    """What showed it, for a message: ``'its first event is event: step.start'``."""


def _key_end(text: str, start: int) -> int:
    """The index of the quote ending the JSON string opened at ``start`` (-1 if cut)."""
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i
        else:
            i += 1
    return -1


def _first_keys(text: str) -> tuple[set[str], bool]:
    """The top-level keys of the first JSON object in ``text`` (of an array's first
    element), and whether that object ended within ``text``."""
    keys: set[str] = set()
    depth = 0
    level = 0  # the depth of the first object's keys, once it opened
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            end = _key_end(text, i)
            if end < 0:
                return keys, False
            if depth == level and text[end + 1 :].lstrip()[:1] == ":":
                keys.add(text[i + 1 : end])
            i = end + 1
            continue
        if c in "{[":
            depth += 1
            if c == "{" and not level:
                level = depth
        elif c in "}]":
            if depth == level:
                return keys, True
            depth -= 1
        i += 1
    return keys, False


def _json(text: str, ended: bool, where: str) -> Found | None:
    keys, whole = _first_keys(text)
    if "event_type" in keys:
        return Found("interactions", True, f"{where} has an event_type")
    if "steps" in keys or ("object" in keys and _OBJECT_INTERACTION.search(text)):
        return Found("interaction-object", True, f"{where} is an Interaction object (steps)")
    if keys & {"object", "type"} and not keys & _GENERATE_KEYS and _OPENAI_JSON.search(text):
        return Found("openai", True, f"{where} is OpenAI output")
    if keys & _GENERATE_KEYS:
        shown = sorted(keys & _GENERATE_KEYS)[0]
        return Found("generate-content", True, f"{where} has {shown} and no event_type")
    if whole or ended or len(text) >= LOOK:
        return Found("generate-content", False, f"{where} is not an Interactions event")
    return None


def upstream_of(head: bytes, ended: bool) -> Found | None:
    """What the capture whose first bytes are ``head`` is; ``None`` while its first event
    is not all there (``ended``: ``head`` is the whole input)."""
    text = head[:LOOK].decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not text:
        return Found("generate-content", False, "it is empty") if ended else None
    if text[0] in "{[":
        return _json(text, ended or len(head) >= LOOK, "its first JSON value")
    if not _SSE_FIELD.match(text):
        return Found("generate-content", False, "it is neither SSE nor JSON")
    blank = _BLANK_LINE.search(text)
    event = text[: blank.start()] if blank else text
    while blank is not None and all(line.startswith(":") for line in event.splitlines()):
        text = text[blank.end() :].lstrip("\r\n")  # a comment (keep-alive) is no event
        blank = _BLANK_LINE.search(text)
        event = text[: blank.start()] if blank else text
    if not event:
        return None if not ended else Found("generate-content", False, "it holds no event")
    complete = blank is not None or ended or len(head) >= LOOK
    if _OPENAI_EVENT_LINE.search(event):
        return Found("openai", True, "its first event is a Responses event")
    if _EVENT_LINE.search(event):
        kind = next(line for line in event.splitlines() if line.startswith("event:"))
        return Found("interactions", True, f"its first event is {kind.strip()}")
    data = "\n".join(
        line[5:].removeprefix(" ") for line in event.splitlines() if line.startswith("data:")
    )
    if data.lstrip()[:1] in ("{", "["):
        return _json(data.lstrip(), complete, "its first event's data")
    return Found("generate-content", False, "its first event is no JSON") if complete else None
