"""A ``code_interpreter_call`` input item → the model turn's ``executableCode`` and
``codeExecutionResult`` parts.

rxgem's Responses output makes such an item of Gemini's code execution and keeps the
parts as Gemini sent them in its ``extra_content.google.parts`` (each with its thought
signature); a stateless client sends the item back, so those parts go back as they
were. An item without them (a client that keeps only OpenAI's fields, or OpenAI's own
code interpreter) is rebuilt from its fields: ``code`` → ``executableCode``
(``PYTHON``, the language Gemini's code execution runs), its ``logs`` outputs →
``codeExecutionResult`` (``OUTCOME_OK``, or ``OUTCOME_FAILED`` for a ``failed`` item),
with no signature; an item that has not finished (no outputs) gives its code only.
"""

from __future__ import annotations

from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject, check_depth, quoted
from ..._policy import Unsupported, unsupported
from ...form import Kept

__all__ = ["code_parts"]


_CODE_KEYS = ("executableCode", "codeExecutionResult")


def _kept_parts(item: JSONObject, where: str) -> list[JSONObject] | None:
    """The parts rxgem kept in the item's ``extra_content.google.parts``, if any."""
    extra = item.get("extra_content")
    google = extra.get("google") if type(extra) is dict else None
    entries = google.get("parts") if type(google) is dict else None
    if type(entries) is not list or not entries:
        return None
    parts: list[JSONObject] = []
    for n, entry in enumerate(entries):
        at = f"{where}.extra_content.google.parts[{n}].part"
        part = entry.get("part") if type(entry) is dict else None
        if type(part) is not dict or not any(type(part.get(key)) is dict for key in _CODE_KEYS):
            raise InvalidRequestError(
                "an entry needs its Gemini executableCode or codeExecutionResult part", where=at
            )
        check_depth(part, at)
        parts.append(part)
    return parts


def _logs(outputs: list[Any], where: str, policy: Unsupported) -> str:
    pieces: list[str] = []
    for n, output in enumerate(outputs):
        at = f"{where}[{n}]"
        kind = output.get("type") if type(output) is dict else None
        if kind == "logs":
            logs = output.get("logs")
            if type(logs) is not str:
                raise InvalidRequestError("must be a string", where=f"{at}.logs")
            pieces.append(logs)
        elif type(kind) is str:
            unsupported(
                policy,
                f"a code interpreter output of type {quoted(kind)} has no Gemini counterpart",
                f"{at}.type",
                f"drop {at}",
            )
        else:
            raise InvalidRequestError("an output needs a type", where=at)
    return "".join(pieces)


def code_parts(item: JSONObject, where: str, policy: Unsupported) -> list[Kept]:
    """The Gemini parts of a ``code_interpreter_call`` item at ``where``, in order."""
    kept = _kept_parts(item, where)
    if kept is not None:
        return [Kept(part) for part in kept]
    code = item.get("code")
    if code is not None and type(code) is not str:
        raise InvalidRequestError("must be a string or null", where=f"{where}.code")
    outputs = item.get("outputs")
    if outputs is not None and type(outputs) is not list:
        raise InvalidRequestError("must be a list or null", where=f"{where}.outputs")
    parts: list[Kept] = []
    if code is not None:
        parts.append(Kept({"executableCode": {"language": "PYTHON", "code": code}}))
    if outputs is not None and item.get("status") in ("completed", "failed"):
        outcome = "OUTCOME_FAILED" if item.get("status") == "failed" else "OUTCOME_OK"
        output = _logs(outputs, f"{where}.outputs", policy)
        parts.append(Kept({"codeExecutionResult": {"outcome": outcome, "output": output}}))
    return parts
