"""Target ``openapi``: a node's own keywords in Gemini's ``Schema``, those holding no subschema.

``type``, ``enum`` and ``const``, the annotations, the keywords of strings and numbers, the
counts (``minItems`` ...), ``required`` and ``propertyOrdering``: each is copied, or
approximated with a note that says how (an exclusive bound made inclusive, an enum of
numbers sent as strings), or dropped with a note that says why (:func:`note_dropped`). The
subschemas (``properties``, ``items``, unions) are walked by
``_node``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from ....core import InvalidRequestError
from ..._json import at as _at
from ..._json import copy_json, json_size, quoted
from .._walk import JSONObject, Walk
from ._vocabulary import (
    ANNOTATIONS,
    ANY_TYPE_KEYWORDS,
    FORMATS,
    NO_EXTRA_KEYS,
    SILENT,
    TYPE_KEYWORDS,
    TYPES,
)

__all__ = [
    "as_string",
    "copied_annotations",
    "copy_counts",
    "declared_types",
    "free_form",
    "gemini_enum",
    "inferred_type",
    "known_names",
    "note_dropped",
    "own_size",
    "write_number",
    "write_string",
]


def copied_annotations(walk: Walk, raw: JSONObject, where: str) -> JSONObject:
    """``title``, ``description`` (strings), ``default``, ``example`` (any JSON), copied."""
    out: JSONObject = {}
    for key in ANNOTATIONS:
        if key not in raw:
            continue
        value = raw[key]
        if key in ("title", "description") and type(value) is not str:
            walk.note(_at(where, key), "dropped: must be a string")
            continue
        out[key] = copy_json(value, _at(where, key))
    return out


def declared_types(raw: JSONObject, where: str) -> list[str]:
    """The JSON types ``type`` names, lower-case, in order (``[]`` when absent)."""
    kind = raw.get("type")
    if kind is None:
        return []
    names = [kind] if type(kind) is str else kind
    at = _at(where, "type")
    if type(names) is not list or not names:
        raise InvalidRequestError("must be a type name or a non-empty list of them", where=at)
    out: list[str] = []
    for name in names:
        if type(name) is not str or (name.lower() not in TYPES and name.lower() != "null"):
            raise InvalidRequestError(f"unknown type {quoted(name)}", where=at)
        if name.lower() not in out:
            out.append(name.lower())
    return out


def own_size(raw: JSONObject) -> int:
    """What the walk reads and writes on a node, about in characters: its keywords, its
    strings, the names of its properties, its ``enum``, ``const``, ``default``, ``example``."""
    size = len(raw)
    for key, value in raw.items():
        kind = type(value)
        if kind is str:
            size += len(value)
        elif key == "properties" and kind is dict:
            size += sum(len(name) + 1 for name in value)
        elif key in _VALUES and (kind is list or kind is dict):
            size += json_size(value)
    return size


_VALUES: Final = frozenset({"enum", "const", "default", "example", "required", "propertyOrdering"})


def inferred_type(raw: JSONObject) -> str | None:
    """The type a type-less schema implies: ``properties`` an object, ``items`` an array."""
    if "properties" in raw or "required" in raw:
        return "OBJECT"
    if "items" in raw or "prefixItems" in raw:
        return "ARRAY"
    return None


def as_string(value: Any) -> str:
    """A JSON value as the string Gemini's enum holds (``1`` → ``"1"``, ``true`` → ``"true"``)."""
    return value if type(value) is str else json.dumps(value, ensure_ascii=False)


def gemini_enum(
    walk: Walk, raw: JSONObject, where: str, types: list[str]
) -> tuple[list[str] | None, bool]:
    """``enum`` / ``const`` as Gemini's enum (non-empty strings), and whether ``null`` was one.

    Gemini's ``enum`` is a list of strings for a STRING: other values are sent as their JSON
    text (``1`` → ``"1"``) with the type STRING, so the model answers ``"1"``, not ``1``.
    """
    key = "const" if "const" in raw else "enum" if "enum" in raw else None
    if key is None:
        return None, False
    at = _at(where, key)
    values = [raw["const"]] if key == "const" else raw["enum"]
    if type(values) is not list:
        walk.note(at, "dropped: must be a list")
        return None, False
    nullable = None in values
    values = [v for v in values if v is not None]
    if any(type(v) in (dict, list) for v in values):
        walk.note(at, "dropped: Gemini's enum cannot hold objects or arrays")
        return None, nullable
    if not values:
        if not nullable:
            walk.note(at, "dropped: an empty enum (no value is valid) cannot be sent")
        return None, nullable
    if any(type(v) is not str for v in values) or (types and types != ["string"]):
        walk.note(at, "sent as strings with type STRING: Gemini's enum holds strings only")
    strings = list(dict.fromkeys(map(as_string, values)))
    if "" in strings:
        walk.note(at, "the empty string is dropped: Gemini refuses an empty enum value")
        strings.remove("")
    return (strings or None), nullable


def write_string(
    walk: Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
) -> frozenset[str]:
    _format(walk, raw, where, "STRING", out)
    copy_counts(walk, raw, where, ("minLength", "maxLength"), out)
    if "pattern" in raw:
        if type(raw["pattern"]) is str:
            out["pattern"] = raw["pattern"]
        else:
            walk.note(_at(where, "pattern"), "dropped: must be a string")
    return frozenset({"format", "minLength", "maxLength", "pattern"})


def write_number(
    walk: Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
) -> frozenset[str]:
    kind = out["type"]
    _format(walk, raw, where, kind, out)
    for key in ("minimum", "maximum"):
        if key in raw:
            if _is_number(raw[key]):
                out[key] = raw[key]
            else:
                walk.note(_at(where, key), "dropped: must be a number")
    _exclusive(walk, raw, where, kind, "exclusiveMinimum", "minimum", out)
    _exclusive(walk, raw, where, kind, "exclusiveMaximum", "maximum", out)
    return frozenset({"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


def _exclusive(
    walk: Walk, raw: JSONObject, where: str, kind: str, key: str, bound: str, out: JSONObject
) -> None:
    """An exclusive bound (not in Gemini's ``Schema``) as an inclusive one: exact for an
    INTEGER (``> 1.5`` is ``>= 2``), noted for a NUMBER (``> 0`` becomes ``>= 0``)."""
    if key not in raw:
        return
    value = raw[key]
    lower = bound == "minimum"
    if value is True and bound in out:  # draft 4: a flag on minimum / maximum
        value = out.pop(bound)
    elif value is False:
        return
    if not _is_number(value):
        walk.note(_at(where, key), "dropped: must be a number")
        return
    if kind == "INTEGER":
        value = math.floor(value) + 1 if lower else math.ceil(value) - 1
    else:
        walk.note(_at(where, key), f"sent as {bound} {value}: the bound becomes inclusive")
    if bound in out:
        value = max(value, out[bound]) if lower else min(value, out[bound])
    out[bound] = value


def known_names(
    walk: Walk, raw: JSONObject, where: str, key: str, properties: JSONObject, out: JSONObject
) -> None:
    if key not in raw:
        return
    names = raw[key]
    at = _at(where, key)
    if type(names) is not list or any(type(n) is not str for n in names):
        walk.note(at, "dropped: must be a list of property names")
        return
    kept = list(dict.fromkeys(n for n in names if n in properties))
    unknown = [n for n in names if n not in properties]
    if unknown and key == "required":
        walk.note(at, f"names without a property dropped: {', '.join(map(repr, unknown))}")
    if kept:
        out[key] = kept


def free_form(walk: Walk, where: str, out: JSONObject) -> None:
    """An object without properties is sent untyped: Gemini refuses an OBJECT without
    properties, and an untyped schema still lets the model send an object.

    Not at the root: there it stays ``{"type": "OBJECT"}`` for the caller to judge (a
    function without parameters leaves ``parameters`` out).
    """
    for key in ("type", "minProperties", "maxProperties"):
        out.pop(key, None)
    walk.note(where, "an object without properties is sent untyped (Gemini refuses such an OBJECT)")


def copy_counts(
    walk: Walk, raw: JSONObject, where: str, keys: tuple[str, ...], out: JSONObject
) -> None:
    """Copy non-negative integer keywords (``minItems`` ...); ``2.0`` counts as ``2``."""
    for key in keys:
        if key not in raw:
            continue
        value = raw[key]
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is int and value >= 0:
            out[key] = value
        else:
            walk.note(_at(where, key), "dropped: must be a non-negative integer")


def _format(walk: Walk, raw: JSONObject, where: str, kind: str, out: JSONObject) -> None:
    """Keep ``format`` only where both APIs take it (Gemini API: ``enum``, ``date-time``
    for strings; ``float``, ``double``; ``int32``, ``int64``)."""
    if "format" not in raw:
        return
    value = raw["format"]
    allowed = FORMATS.get(kind, ())
    if value in allowed:
        out["format"] = value
    else:
        listed = ", ".join(allowed) or "none"
        walk.note(_at(where, "format"), f"{value!r} dropped: Gemini takes only {listed} here")


def note_dropped(
    walk: Walk, raw: JSONObject, where: str, kind: str | None, handled: frozenset[str]
) -> None:
    """Note every keyword left out that constrained something here.

    Silent: annotations, ``x-`` extensions, keywords of another type (they constrain nothing
    on this node), ``additionalProperties`` when ``true``/``false``/``{}`` (``false`` is not
    enforced, but Gemini fills in the declared properties).
    """
    if walk.full:
        return  # nothing more would be listed
    if kind is None:
        own = ANY_TYPE_KEYWORDS
    else:
        own = TYPE_KEYWORDS.get("NUMBER" if kind == "INTEGER" else kind, frozenset())
    skip = {"type", "nullable", "enum", "const", *ANNOTATIONS, *SILENT, *handled}
    for key in raw:
        if key in skip or key.startswith("x-"):
            continue
        if key in ANY_TYPE_KEYWORDS and key not in own:
            continue  # another type's keyword
        if key == "additionalProperties":
            if raw[key] not in (True, False, {}):
                walk.note(_at(where, key), NO_EXTRA_KEYS)
            continue
        if kind is None and key in own:
            walk.note(_at(where, key), "dropped: Gemini applies it only with a type")
        else:
            walk.note(_at(where, key), "dropped: not in Gemini's Schema")
