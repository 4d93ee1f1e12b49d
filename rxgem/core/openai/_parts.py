"""Gemini data parts → the pieces of an OpenAI delta that show them.

- ``executableCode`` / ``codeExecutionResult`` → Markdown fenced blocks
  (:func:`render_code`): the code under its language lower-cased, the result
  under ``output`` (with the outcome when it is not ``OUTCOME_OK``);
- each data part → one entry of ``extra_content.google.parts`` (:func:`part_entry`):
  the part as Gemini sent it, its ``thoughtSignature`` included, so that it can be
  sent back; bulky data that an OpenAI field already carries (an image's or an
  audio clip's base64) is left out of the entry, which says where it went;
- ``inlineData`` audio → ``delta.audio.data`` pieces (:class:`AudioStream`): the
  ``openai`` SDK concatenates them, and a concatenation of base64 strings is
  valid base64 only if every piece but the last encodes a multiple of 3 bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import msgspec

from .._errors import MalformedStreamError
from ..gemini import Part

__all__ = ["ID_MARK", "AudioStream", "part_entry", "render_code", "without_data"]

ID_MARK = "__thought__"
"""What separates a tool-call id from a thought signature carried in it."""

_BACKTICKS = re.compile("`{3,}")
_UNSPECIFIED = frozenset({"LANGUAGE_UNSPECIFIED", "OUTCOME_UNSPECIFIED", "OUTCOME_OK"})


def _fence(body: str, info: str) -> str:
    """``body`` in a fenced block longer than any backtick run inside it (CommonMark)."""
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=2)
    fence = "`" * max(3, longest + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}\n"


def render_code(part: Part, *, first: bool) -> str | None:
    """The Markdown of a code or code-result part (``None`` for other parts).

    ``first``: what was written before it is empty or ends with a line break, so
    no newline is needed to start the fence on a line of its own.
    """
    lead = "" if first else "\n"
    code = part.executable_code
    if code is not None:
        language = code.get("language")
        info = language.lower() if type(language) is str and language not in _UNSPECIFIED else ""
        body = code.get("code")
        return lead + _fence(body if type(body) is str else "", info)
    result = part.code_execution_result
    if result is not None:
        output = result.get("output")
        body = output if type(output) is str else ""
        outcome = result.get("outcome")
        if type(outcome) is str and outcome not in _UNSPECIFIED:
            newline = "\n" if body and not body.endswith("\n") else ""
            body = f"{body}{newline}[{outcome}]"
        return lead + _fence(body, "output")
    return None


def part_entry(part: Part, index: int, **where: Any) -> dict[str, Any]:
    """One ``extra_content.google.parts`` entry: ``index``, ``where`` it went, and ``part``."""
    wire: dict[str, Any] = msgspec.to_builtins(part)
    return {"index": index, **where, "part": wire}


def without_data(part: Part) -> Part:
    """``part`` with its ``inlineData.data`` left out (an OpenAI field carries it)."""
    inline = part.inline_data
    if inline is None or "data" not in inline:
        return part
    return msgspec.structs.replace(
        part, inline_data={key: value for key, value in inline.items() if key != "data"}
    )


class AudioStream:
    """Re-chunks base64 audio so that concatenated pieces stay valid base64."""

    __slots__ = ("_rest", "size")

    def __init__(self) -> None:
        self._rest = b""
        self.size = 0  # the bytes of the last clip fed

    def feed(self, data: str) -> str:
        """The base64 of every whole 3-byte group so far; the remainder waits."""
        try:
            clip = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise MalformedStreamError(f"inlineData audio is not valid base64 ({exc})") from None
        self.size = len(clip)
        raw = self._rest + clip
        cut = len(raw) - len(raw) % 3
        self._rest = raw[cut:]
        return base64.b64encode(raw[:cut]).decode("ascii")

    def close(self) -> str:
        """The base64 of the remainder (padded), ``""`` when none."""
        rest, self._rest = self._rest, b""
        return base64.b64encode(rest).decode("ascii")
