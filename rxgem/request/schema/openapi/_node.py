"""Target ``openapi``: the schema as Gemini's ``Schema`` object, subschema by subschema.

For ``FunctionDeclaration.parameters`` and ``generationConfig.responseSchema`` on the Gemini
API, and everywhere on Vertex AI's ``v1``. Each node has its ``$ref`` inlined
(``_refs``) and its ``allOf`` merged
(``_all_of``), and is then a union or a plain schema. A
union (``anyOf``, ``oneOf``) loses its ``null`` branch to ``nullable``, is merged into the
node when one branch is left, or stays an ``anyOf`` with the node's constraints distributed
into each branch. A plain schema has its type (several become an ``anyOf``), its own
keywords (``_keywords``), and an array's ``items`` (a
tuple folded into it) or an object's ``properties``, walked in turn. What the ``Schema``
cannot say is approximated or dropped, each time with a note (the README's table lists
every approximation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeAlias

from ....core import InvalidRequestError
from ..._json import at as _at
from ..._json import fingerprint
from .._walk import JSONObject, Walk
from ._all_of import merge_all_of
from ._keywords import (
    as_string,
    copied_annotations,
    copy_counts,
    declared_types,
    free_form,
    gemini_enum,
    inferred_type,
    known_names,
    note_dropped,
    own_size,
    write_number,
    write_string,
)
from ._refs import inline_ref, pop_refs
from ._vocabulary import (
    ANNOTATIONS,
    DISTRIBUTED,
    NO_EXTRA_KEYS,
    SILENT,
    TYPES,
    as_schema,
)

__all__ = ["openapi_node"]


def openapi_node(walk: Walk, node: Any, where: str, depth: int) -> JSONObject:
    """One subschema → Gemini's ``Schema`` (counted against the budget)."""
    walk.enter(where, depth)
    return _schema(walk, as_schema(node, where), where, depth)


def _schema(walk: Walk, raw: JSONObject, where: str, depth: int) -> JSONObject:
    pushed = len(walk.refs)
    try:
        raw = inline_ref(walk, raw, where)
        raw = merge_all_of(walk, raw, where)
        if "anyOf" in raw or "oneOf" in raw:
            return _union(walk, raw, where, depth)
        return _plain(walk, raw, where, depth)
    finally:
        pop_refs(walk, pushed)


def _is_null(branch: Any) -> bool:
    """Whether a union branch only admits ``null``."""
    if type(branch) is not dict or "$ref" in branch:
        return False
    kind = branch.get("type")
    if type(kind) is str:
        return kind.lower() == "null"
    if type(kind) is list:
        return len(kind) > 0 and all(type(k) is str and k.lower() == "null" for k in kind)
    return ("const" in branch and branch["const"] is None) or branch.get("enum") == [None]


def _union(walk: Walk, raw: JSONObject, where: str, depth: int) -> JSONObject:
    """``anyOf`` / ``oneOf``: a ``null`` branch becomes ``nullable``; one branch left is merged
    into the node; several stay an ``anyOf`` (``oneOf`` is sent as ``anyOf``).

    Gemini wants ``anyOf`` alone (no ``type`` beside it), so the node's own constraints are
    distributed into every branch (``A and (B or C)`` is ``(A and B) or (A and C)``).
    """
    key = "anyOf" if "anyOf" in raw else "oneOf"
    at = _at(where, key)
    if "anyOf" in raw and "oneOf" in raw:
        walk.note(_at(where, "oneOf"), "dropped beside anyOf (Gemini's Schema has one union)")
    branches = raw[key]
    if type(branches) is not list or not branches:
        raise InvalidRequestError("must be a non-empty list of schemas", where=at)
    rest = {k: v for k, v in raw.items() if k not in ("anyOf", "oneOf")}
    nullable = any(_is_null(b) for b in branches)
    others = [(i, b) for i, b in enumerate(branches) if not _is_null(b)]
    if not others:
        return _plain(walk, {**rest, "type": "null"}, where, depth)
    if len(others) == 1:
        i, only = others[0]
        merged = {**as_schema(only, _at(at, i)), **rest}
        if nullable:
            merged["nullable"] = True
        return _schema(walk, merged, where, depth)
    if key == "oneOf":
        walk.note(at, "sent as anyOf: Gemini does not enforce that exactly one branch matches")
    walk.spend(where, own_size(raw))
    out = copied_annotations(walk, rest, where)
    if nullable or rest.get("nullable") is True:
        out["nullable"] = True
    shared = {}
    for k, v in rest.items():
        if k in DISTRIBUTED and k != "nullable":
            shared[k] = v
        elif k not in ANNOTATIONS and k not in SILENT and k != "nullable" and k[:2] != "x-":
            walk.note(_at(where, k), "dropped: not in Gemini's Schema")  # once, not per branch
    out["anyOf"] = [
        openapi_node(walk, {**shared, **as_schema(b, _at(at, i))}, _at(at, i), depth + 1)
        for i, b in others
    ]
    return out


def _plain(walk: Walk, raw: JSONObject, where: str, depth: int) -> JSONObject:
    """A schema without union or ``$ref``: its type, its enum, its type's keywords."""
    declared = declared_types(raw, where)
    if "nullable" in raw and type(raw["nullable"]) is not bool:
        walk.note(_at(where, "nullable"), "dropped: must be a boolean")
    types = [t for t in declared if t != "null"]
    enum, null_in_enum = gemini_enum(walk, raw, where, types)
    nullable = len(types) < len(declared) or raw.get("nullable") is True or null_in_enum
    if enum is not None:
        types = ["string"]
    elif declared and not types:
        walk.note(where, "a null-only schema is sent untyped and nullable")
    if len(types) > 1:
        return _split_types(walk, raw, where, depth, types, nullable)
    kind = TYPES[types[0]] if types else inferred_type(raw)
    walk.spend(where, own_size(raw))
    out = copied_annotations(walk, raw, where)
    if nullable:
        out["nullable"] = True
    if enum is not None:
        out["enum"] = enum
        if out.get("default") is not None and type(out["default"]) is not str:
            out["default"] = as_string(out["default"])
    handled = _typed(walk, raw, where, depth, kind, out)
    if kind == "OBJECT" and "properties" not in out and depth > 0:
        free_form(walk, where, out)
        kind = None
    note_dropped(walk, raw, where, kind, handled)
    return out


def _split_types(
    walk: Walk,
    raw: JSONObject,
    where: str,
    depth: int,
    types: list[str],
    nullable: bool,
) -> JSONObject:
    """``type: ["string", "integer"]`` → ``anyOf`` of one branch per type (Gemini's ``type``
    names one type); each branch keeps the keywords of its type."""
    out = copied_annotations(walk, raw, where)
    if nullable:
        out["nullable"] = True
    shared = {k: v for k, v in raw.items() if k not in ANNOTATIONS and k != "nullable"}
    out["anyOf"] = [openapi_node(walk, {**shared, "type": t}, where, depth + 1) for t in types]
    return out


def _typed(
    walk: Walk,
    raw: JSONObject,
    where: str,
    depth: int,
    kind: str | None,
    out: JSONObject,
) -> frozenset[str]:
    """Write ``type`` and its own keywords into ``out``; the keywords consumed."""
    if kind is None:
        return frozenset()
    out["type"] = kind
    writer = _WRITERS.get(kind)
    if writer is None:
        return frozenset()
    return writer(walk, raw, where, depth, out)


def _write_array(
    walk: Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
) -> frozenset[str]:
    """``items`` (always written: Gemini refuses an ARRAY without it; a bare array gets
    ``{}``, any value), a tuple's positions folded into it, ``minItems``, ``maxItems``."""
    items, prefix, prefix_key = raw.get("items"), raw.get("prefixItems"), "prefixItems"
    if type(items) is list:  # draft 4 tuple: items is the positions, additionalItems the rest
        prefix, items, prefix_key = items, raw.get("additionalItems"), "items"
    branches: list[JSONObject] = []
    if prefix is not None:
        at = _at(where, prefix_key)
        if type(prefix) is not list:
            raise InvalidRequestError("must be a list of schemas", where=at)
        branches += [openapi_node(walk, p, _at(at, i), depth + 1) for i, p in enumerate(prefix)]
    if items is not None and not (items is False and branches):
        rest_key = "additionalItems" if prefix_key == "items" else "items"
        branches.append(openapi_node(walk, items, _at(where, rest_key), depth + 1))
    seen: set[tuple[Any, ...]] = set()
    distinct: list[JSONObject] = []
    for branch in branches:
        key = fingerprint(branch)
        if key not in seen:
            seen.add(key)
            distinct.append(branch)
    if len(distinct) > 1:
        walk.note(_at(where, prefix_key), "a tuple is sent as items: anyOf of its positions")
        out["items"] = {"anyOf": distinct}
    else:
        out["items"] = distinct[0] if distinct else {}
    copy_counts(walk, raw, where, ("minItems", "maxItems"), out)
    return frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems"})


def _write_object(
    walk: Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
) -> frozenset[str]:
    """``properties`` (written only if non-empty: Gemini refuses an empty one), ``required``
    and ``propertyOrdering`` cut to the properties (Gemini refuses unknown names)."""
    properties = raw.get("properties", {})
    at = _at(where, "properties")
    if type(properties) is not dict:
        raise InvalidRequestError("must be an object of schemas", where=at)
    converted = {
        name: openapi_node(walk, value, _at(at, name), depth + 1)
        for name, value in properties.items()
    }
    if converted:
        out["properties"] = converted
    for key in ("required", "propertyOrdering"):
        known_names(walk, raw, where, key, converted, out)
    copy_counts(walk, raw, where, ("minProperties", "maxProperties"), out)
    if raw.get("additionalProperties") not in (None, True, False, {}):
        walk.note(_at(where, "additionalProperties"), NO_EXTRA_KEYS)
    return frozenset(
        {
            "properties",
            "required",
            "propertyOrdering",
            "minProperties",
            "maxProperties",
            "additionalProperties",
        }
    )


_Writer: TypeAlias = Callable[[Walk, JSONObject, str, int, JSONObject], frozenset[str]]
_WRITERS: Final[dict[str, _Writer]] = {
    "STRING": write_string,
    "NUMBER": write_number,
    "INTEGER": write_number,
    "ARRAY": _write_array,
    "OBJECT": _write_object,
}
