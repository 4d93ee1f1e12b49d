"""OpenAI's JSON Schemas (tool parameters, ``response_format``) → the schemas Gemini accepts.

Gemini takes a schema in one of two shapes, and :func:`to_gemini_schema` writes either:

- ``target="json_schema"``: JSON Schema, for the Gemini API's (``v1beta``)
  ``FunctionDeclaration.parametersJsonSchema`` and ``generationConfig.responseJsonSchema``.
  Google documents the keywords it uses (``$id $defs $ref $anchor type format title
  description enum items prefixItems minItems maxItems minimum maximum anyOf oneOf properties
  additionalProperties required`` and ``propertyOrdering``) and that a node holding ``$ref``
  may hold nothing else but ``$``-keywords; the API's own error says ``description`` and
  ``default`` are tolerated there too. So the schema passes through as a deep copy, with only
  this fixed: the root ``$schema`` goes, a ``$ref`` loses its other siblings (noted), and a
  same-document ``$ref`` that points nowhere is refused here rather than by Google.
- ``target="openapi"``: Gemini's ``Schema`` object, the OpenAPI 3.0 subset of
  ``FunctionDeclaration.parameters`` and ``generationConfig.responseSchema``, and the only
  shape Vertex AI's ``v1`` takes everywhere. Only the fields both the Gemini API and Vertex
  AI document are written (:data:`KEPT_KEYWORDS`); ``type`` is the upper-case enum name
  (``"OBJECT"``), as both references spell it and Google's SDKs send it. ``$ref`` is inlined
  (recursion is refused), and what the ``Schema`` cannot say is approximated or dropped, each
  time with a note (the README's table lists every approximation).

The caller gets a new dict (the input is never changed) and, through ``notes``, one line
per approximation (``"<where>: <what>"``) to warn about. A malformed or untranslatable
schema raises :class:`~rxgem.InvalidRequestError` whose ``where`` is the path of the culprit
in the OpenAI request, e.g. ``tools[2].function.parameters.properties.when.$ref``.

Both walks have a budget (:data:`MAX_SCHEMA_NODES` schema nodes, :data:`MAX_SCHEMA_DEPTH`
levels), and the ``openapi`` walk a third (:data:`MAX_SCHEMA_SIZE`, about the characters it
reads and writes): inlining ``$ref`` and distributing a union's keywords into its branches copy
content, and can grow a schema exponentially; a deep one would otherwise end in a
``RecursionError``. Values that are not schemas (``default``, ``const`` ...) are copied and
compared without recursion, and refused past :data:`~rxgem.request._json.MAX_JSON_DEPTH`
levels. Every step is linear in what it reads: no list is searched per element.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias
from urllib.parse import unquote

from ..core import InvalidRequestError
from ._json import at as _at
from ._json import copy_json, fingerprint, json_equal, json_size

__all__ = [
    "KEPT_KEYWORDS",
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_NODES",
    "MAX_SCHEMA_NOTES",
    "MAX_SCHEMA_SIZE",
    "SchemaTarget",
    "to_gemini_schema",
]

SchemaTarget: TypeAlias = Literal["json_schema", "openapi"]
JSONObject: TypeAlias = dict[str, Any]

MAX_SCHEMA_NODES: Final = 4096
"""Most schema nodes one conversion may write (after ``$ref`` inlining)."""
MAX_SCHEMA_DEPTH: Final = 64
"""Deepest nesting of schemas (``properties``, ``items``, ``anyOf`` ... levels)."""
MAX_SCHEMA_NOTES: Final = 100
"""Most notes one conversion lists (then one line says more were left out): a schema with
thousands of approximations (or a ``$ref`` inlined thousands of times) would otherwise
bury the reader, and cost a warning each."""
MAX_SCHEMA_SIZE: Final = 1 << 21
"""Most the ``openapi`` walk may read and write, about in characters: every keyword of every
node it writes (after ``$ref`` inlining), the length of its strings and names, the size of its
``enum``, ``default`` and ``example`` values."""

KEPT_KEYWORDS: Final = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "default",
        "example",
        "anyOf",
        # OBJECT
        "properties",
        "required",
        "propertyOrdering",
        "minProperties",
        "maxProperties",
        # ARRAY
        "items",
        "minItems",
        "maxItems",
        # NUMBER, INTEGER
        "minimum",
        "maximum",
        # STRING
        "minLength",
        "maxLength",
        "pattern",
    }
)
"""Every keyword the ``openapi`` target writes: the fields of the Gemini API's ``Schema``
(v1beta) that Vertex AI's ``Schema`` (v1) has too."""

_TYPES: Final = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
_FORMATS: Final = {
    "STRING": ("enum", "date-time"),
    "NUMBER": ("float", "double"),
    "INTEGER": ("int32", "int64"),
}
"""The formats both APIs accept (Vertex takes more string formats; the Gemini API refuses them)."""

# Keywords that only constrain values of one JSON type: on a node of another type they
# mean nothing, so dropping them there loses nothing.
_TYPE_KEYWORDS: Final = {
    "STRING": frozenset({"format", "minLength", "maxLength", "pattern", "contentEncoding"}),
    "NUMBER": frozenset(
        {"format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    ),
    "ARRAY": frozenset(
        {
            "items",
            "prefixItems",
            "additionalItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        }
    ),
    "OBJECT": frozenset(
        {
            "properties",
            "required",
            "propertyOrdering",
            "minProperties",
            "maxProperties",
            "additionalProperties",
            "patternProperties",
            "propertyNames",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "unevaluatedProperties",
        }
    ),
}
_ANY_TYPE_KEYWORDS: Final = frozenset().union(*_TYPE_KEYWORDS.values())

# Annotations and bookkeeping Gemini has no use for: dropped without a note.
_SILENT: Final = frozenset(
    {
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$comment",
        "$vocabulary",
        "$defs",
        "definitions",
        "examples",
        "readOnly",
        "writeOnly",
        "deprecated",
        "discriminator",
        "contentMediaType",
        "xml",
        "externalDocs",
    }
)
_ANNOTATIONS: Final = ("title", "description", "default", "example")
_REF_SIBLINGS: Final = frozenset({"description", "default"})
"""Besides ``$``-keywords, what Gemini's JSON Schema tolerates beside ``$ref``."""

# Where subschemas sit in JSON Schema (for the ``json_schema`` walk).
_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
_SCHEMA_LISTS: Final = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_VALUES: Final = frozenset(
    {
        "items",
        "additionalItems",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    }
)
_NO_EXTRA_KEYS: Final = "dropped: Gemini's Schema cannot describe keys beyond properties"
# What the openapi walk reads on a node besides annotations: a union distributes only these
# into its branches (any other keyword is dropped, and noted once, on the union itself).
_DISTRIBUTED: Final = _ANY_TYPE_KEYWORDS | {"type", "nullable", "enum", "const"}


def to_gemini_schema(
    schema: JSONObject,
    *,
    where: str,
    target: SchemaTarget,
    notes: list[str] | None = None,
    max_nodes: int = MAX_SCHEMA_NODES,
    max_depth: int = MAX_SCHEMA_DEPTH,
    max_size: int = MAX_SCHEMA_SIZE,
) -> JSONObject:
    """A JSON Schema from an OpenAI request as Gemini takes it (a new dict).

    Args:
        schema: the JSON Schema (a tool's ``parameters``, a ``response_format`` schema).
        where: its path in the OpenAI request, the prefix of every error's ``where`` and
            every note.
        target: ``"json_schema"`` (``parametersJsonSchema``, ``responseJsonSchema``) or
            ``"openapi"`` (Gemini's ``Schema``: ``parameters``, ``responseSchema``, Vertex).
        notes: if given, one ``"<where>: <what>"`` line is appended per approximation made
            (the first :data:`MAX_SCHEMA_NOTES`, then a line saying more were left out).
        max_nodes: the most schema nodes the result may hold.
        max_depth: the deepest nesting allowed.
        max_size: for ``"openapi"``, the most the walk may read and write (about in
            characters; see :data:`MAX_SCHEMA_SIZE`).

    Raises:
        InvalidRequestError: a malformed schema, a ``$ref`` that points nowhere (or, for
            ``"openapi"``, outside the document or back into itself), a budget exceeded, a
            value nested deeper than ``MAX_JSON_DEPTH`` levels.
    """
    if target not in ("json_schema", "openapi"):
        raise ValueError(f"target must be 'json_schema' or 'openapi', not {target!r}")
    walk = _Walk(schema, max_nodes, max_depth, max_size)
    if target == "json_schema":
        result = _json_node(walk, schema, where, 0)
    else:
        walk.refs["#"] = None  # the root is "#" to a $ref
        result = _node(walk, schema, where, 0)
    if type(result) is not dict:  # a boolean root schema
        raise InvalidRequestError("must be a JSON Schema object", where=where)
    if notes is not None:
        known = set(notes)
        notes.extend(line for line in walk.notes if line not in known)
        if walk.full:
            notes.append(f"{where}: more than {MAX_SCHEMA_NOTES} approximations; not all listed")
    return result


@dataclass
class _Walk:
    """One conversion's state: the document (for ``$ref``), the notes, the budgets, and the
    ``$ref`` chain that led to the current node (for the ``openapi`` target's cycle check:
    pushed and popped as the walk goes down and back up, so a lookup costs no scan)."""

    root: JSONObject
    max_nodes: int
    max_depth: int
    max_size: int
    nodes: int = 0
    size: int = 0
    notes: dict[str, None] = field(default_factory=dict)  # an ordered set
    full: bool = False  # MAX_SCHEMA_NOTES reached
    refs: dict[str, None] = field(default_factory=dict)  # an ordered set, used as a stack

    def enter(self, where: str, depth: int) -> None:
        """Count one more schema node, within the budget."""
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise InvalidRequestError(
                f"schema too large for Gemini: more than {self.max_nodes} nodes"
                " (after inlining $ref)",
                where=where,
            )
        if depth > self.max_depth:
            raise InvalidRequestError(
                f"schema nested deeper than {self.max_depth} levels", where=where
            )

    def spend(self, where: str, size: int) -> None:
        """Count ``size`` more against the size budget (the ``openapi`` walk)."""
        self.size += size
        if self.size > self.max_size:
            raise InvalidRequestError(
                f"schema too large for Gemini: more than {self.max_size} characters"
                " (after inlining $ref)",
                where=where,
            )

    def note(self, where: str, what: str) -> None:
        if len(self.notes) >= MAX_SCHEMA_NOTES:
            self.full = True
            return
        self.notes[f"{where}: {what}" if where else what] = None


def _pointer(root: JSONObject, ref: str) -> tuple[bool, Any]:
    """Resolve a same-document JSON-pointer ``$ref`` (``#``, ``#/$defs/A``): (found, value)."""
    fragment = unquote(ref[1:])
    value: Any = root
    for token in fragment.split("/")[1:] if fragment else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if type(value) is dict and token in value:
            value = value[token]
        elif type(value) is list and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value


def _is_pointer(ref: str) -> bool:
    return ref == "#" or ref.startswith("#/")


# -- target "json_schema": pass-through with the fixes Gemini needs ---------------------------


def _json_node(walk: _Walk, node: Any, where: str, depth: int) -> Any:
    """A deep copy of one JSON Schema node, with its subschemas walked the same way."""
    walk.enter(where, depth)
    if type(node) is bool:
        return node
    if type(node) is not dict:
        raise InvalidRequestError("must be a JSON Schema (an object or a boolean)", where=where)
    ref = node.get("$ref")
    if type(ref) is str and _is_pointer(ref) and not _pointer(walk.root, ref)[0]:
        raise InvalidRequestError(
            f"$ref {ref!r} points to nothing in this schema", where=_at(where, "$ref")
        )
    out: JSONObject = {}
    for key, value in node.items():
        if depth == 0 and key == "$schema":
            continue  # a dialect URI Gemini has no use for (peers drop it too)
        if "$ref" in node and not key.startswith("$") and key not in _REF_SIBLINGS:
            walk.note(
                _at(where, key),
                "dropped: Gemini allows only $-keywords, description and default beside $ref",
            )
            continue
        out[key] = _json_child(walk, key, value, _at(where, key), depth)
    return out


def _json_child(walk: _Walk, key: str, value: Any, where: str, depth: int) -> Any:
    """The copy of one keyword's value: subschemas walked, anything else copied."""
    if key in _SCHEMA_MAPS and type(value) is dict:
        return {k: _json_node(walk, v, _at(where, k), depth + 1) for k, v in value.items()}
    if (key in _SCHEMA_LISTS or key == "items") and type(value) is list:
        return [_json_node(walk, v, _at(where, i), depth + 1) for i, v in enumerate(value)]
    if key in _SCHEMA_VALUES:
        return _json_node(walk, value, where, depth + 1)
    return copy_json(value, where)


# -- target "openapi": Gemini's Schema object ------------------------------------------------


def _node(walk: _Walk, node: Any, where: str, depth: int) -> JSONObject:
    """One subschema → Gemini's ``Schema`` (counted against the budget)."""
    walk.enter(where, depth)
    return _schema(walk, _as_schema(node, where), where, depth)


def _as_schema(node: Any, where: str) -> JSONObject:
    """A schema as an object: ``true`` (anything) is ``{}``; ``false`` cannot be said."""
    if node is True:
        return {}
    if node is False:
        raise InvalidRequestError(
            "a false schema (no value is valid) has no Gemini equivalent", where=where
        )
    if type(node) is not dict:
        raise InvalidRequestError("must be a JSON Schema (an object or a boolean)", where=where)
    return node


def _schema(walk: _Walk, raw: JSONObject, where: str, depth: int) -> JSONObject:
    pushed = len(walk.refs)
    try:
        raw = _inline_ref(walk, raw, where)
        raw = _merge_all_of(walk, raw, where)
        if "anyOf" in raw or "oneOf" in raw:
            return _union(walk, raw, where, depth)
        return _plain(walk, raw, where, depth)
    finally:
        _pop_refs(walk, pushed)


def _pop_refs(walk: _Walk, keep: int) -> None:
    """Leave the ``$ref`` chain as it was when it held ``keep`` refs."""
    while len(walk.refs) > keep:
        walk.refs.popitem()


def _inline_ref(walk: _Walk, raw: JSONObject, where: str) -> JSONObject:
    """Replace ``$ref`` by what it points to; its siblings win (they describe this use).

    Gemini's ``Schema`` has no ``$ref`` the Gemini API takes, so each use is inlined. A ref
    already in the chain that led here is a recursion, which inlining cannot end. Each ref
    inlined joins the chain (``walk.refs``); the caller takes it off again.
    """
    while "$ref" in raw:
        ref = raw["$ref"]
        at = _at(where, "$ref")
        if type(ref) is not str:
            raise InvalidRequestError("must be a string", where=at)
        walk.spend(at, len(raw) + len(ref))
        if not _is_pointer(ref):
            raise InvalidRequestError(
                f"$ref {ref!r} cannot be inlined: only same-document refs ('#/...') can",
                where=at,
            )
        if ref in walk.refs:
            chain = list(walk.refs)
            shown = " → ".join((*chain[chain.index(ref) :], ref))
            raise InvalidRequestError(
                f"recursive $ref {ref!r} ({shown}) cannot be inlined into Gemini's Schema",
                where=at,
            )
        found, target = _pointer(walk.root, ref)
        if not found:
            raise InvalidRequestError(f"$ref {ref!r} points to nothing in this schema", where=at)
        siblings = {k: v for k, v in raw.items() if k != "$ref" and k not in _SILENT}
        raw = {**_as_schema(target, at), **siblings}
        walk.refs[ref] = None
    return raw


def _merge_all_of(walk: _Walk, raw: JSONObject, where: str) -> JSONObject:
    """Fold ``allOf`` (not in Gemini's ``Schema``) into one schema.

    ``properties`` and ``required`` are united; any other keyword keeps its first value (a
    conflict is noted: the intersection of two constraints is beyond a merge). A branch's
    ``$ref`` does not join the chain below: ``Derived = allOf[Base, {parent: Base}]`` is no
    recursion (a real one is caught a level further down).

    The united ``properties`` and ``required`` are built once, at the end, from every
    branch's: a later branch's properties come first, an earlier branch's schema wins.
    """
    if "allOf" not in raw:
        return raw
    properties: list[JSONObject] = []  # the properties to unite, in branch order
    required: list[Any] = []
    seen: set[str] = set()
    merged = raw
    while "allOf" in merged:
        branches = merged["allOf"]
        at = _at(where, "allOf")
        if type(branches) is not list:
            raise InvalidRequestError("must be a list of schemas", where=at)
        walk.spend(at, len(merged) + len(branches))
        merged = {k: v for k, v in merged.items() if k != "allOf"}
        if not properties and type(merged.get("properties")) is dict:
            properties.append(merged["properties"])
        if not required and type(merged.get("required")) is list:
            _unite(required, seen, merged["required"])
        for i, branch in enumerate(branches):
            pushed = len(walk.refs)
            part = _inline_ref(walk, _as_schema(branch, _at(at, i)), _at(at, i))
            _pop_refs(walk, pushed)
            walk.spend(at, len(part))
            for key, value in part.items():
                if key not in merged:
                    merged[key] = value
                    if key == "properties" and type(value) is dict:
                        properties.append(value)
                    elif key == "required" and type(value) is list:
                        _unite(required, seen, value)
                elif key == "properties" and type(value) is dict and properties:
                    properties.append(value)
                elif key == "required" and type(value) is list and type(merged[key]) is list:
                    _unite(required, seen, value)
                elif (
                    key not in _SILENT
                    and key not in _ANNOTATIONS
                    and not json_equal(merged[key], value)
                ):
                    walk.note(at, f"branches disagree on {key}: the first value is kept")
    if len(properties) > 1:
        united: JSONObject = {}
        for names in reversed(properties):  # the first branch's schema is written last: it wins
            united.update(names)
        merged["properties"] = united
    if "required" in merged and type(merged["required"]) is list:
        merged["required"] = required
    return merged


def _unite(names: list[Any], seen: set[str], more: list[Any]) -> None:
    """Append the names of ``more`` not yet in ``names`` (other values: always; they make the
    list invalid, which :func:`_names` notes)."""
    for name in more:
        if type(name) is not str:
            names.append(name)
        elif name not in seen:
            seen.add(name)
            names.append(name)


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


def _union(walk: _Walk, raw: JSONObject, where: str, depth: int) -> JSONObject:
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
        merged = {**_as_schema(only, _at(at, i)), **rest}
        if nullable:
            merged["nullable"] = True
        return _schema(walk, merged, where, depth)
    if key == "oneOf":
        walk.note(at, "sent as anyOf: Gemini does not enforce that exactly one branch matches")
    walk.spend(where, _own_size(raw))
    out = _annotations(walk, rest, where)
    if nullable or rest.get("nullable") is True:
        out["nullable"] = True
    shared = {}
    for k, v in rest.items():
        if k in _DISTRIBUTED and k != "nullable":
            shared[k] = v
        elif k not in _ANNOTATIONS and k not in _SILENT and k != "nullable" and k[:2] != "x-":
            walk.note(_at(where, k), "dropped: not in Gemini's Schema")  # once, not per branch
    out["anyOf"] = [
        _node(walk, {**shared, **_as_schema(b, _at(at, i))}, _at(at, i), depth + 1)
        for i, b in others
    ]
    return out


def _annotations(walk: _Walk, raw: JSONObject, where: str) -> JSONObject:
    """``title``, ``description`` (strings), ``default``, ``example`` (any JSON), copied."""
    out: JSONObject = {}
    for key in _ANNOTATIONS:
        if key not in raw:
            continue
        value = raw[key]
        if key in ("title", "description") and type(value) is not str:
            walk.note(_at(where, key), "dropped: must be a string")
            continue
        out[key] = copy_json(value, _at(where, key))
    return out


def _types(raw: JSONObject, where: str) -> list[str]:
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
        if type(name) is not str or (name.lower() not in _TYPES and name.lower() != "null"):
            raise InvalidRequestError(f"unknown type {name!r}", where=at)
        if name.lower() not in out:
            out.append(name.lower())
    return out


def _plain(walk: _Walk, raw: JSONObject, where: str, depth: int) -> JSONObject:
    """A schema without union or ``$ref``: its type, its enum, its type's keywords."""
    declared = _types(raw, where)
    if "nullable" in raw and type(raw["nullable"]) is not bool:
        walk.note(_at(where, "nullable"), "dropped: must be a boolean")
    types = [t for t in declared if t != "null"]
    enum, null_in_enum = _enum(walk, raw, where, types)
    nullable = len(types) < len(declared) or raw.get("nullable") is True or null_in_enum
    if enum is not None:
        types = ["string"]
    elif declared and not types:
        walk.note(where, "a null-only schema is sent untyped and nullable")
    if len(types) > 1:
        return _split_types(walk, raw, where, depth, types, nullable)
    kind = _TYPES[types[0]] if types else _inferred_type(raw)
    walk.spend(where, _own_size(raw))
    out = _annotations(walk, raw, where)
    if nullable:
        out["nullable"] = True
    if enum is not None:
        out["enum"] = enum
        if out.get("default") is not None and type(out["default"]) is not str:
            out["default"] = _as_string(out["default"])
    handled = _typed(walk, raw, where, depth, kind, out)
    if kind == "OBJECT" and "properties" not in out and depth > 0:
        _free_form(walk, where, out)
        kind = None
    _note_dropped(walk, raw, where, kind, handled)
    return out


def _own_size(raw: JSONObject) -> int:
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


def _inferred_type(raw: JSONObject) -> str | None:
    """The type a type-less schema implies: ``properties`` an object, ``items`` an array."""
    if "properties" in raw or "required" in raw:
        return "OBJECT"
    if "items" in raw or "prefixItems" in raw:
        return "ARRAY"
    return None


def _split_types(
    walk: _Walk,
    raw: JSONObject,
    where: str,
    depth: int,
    types: list[str],
    nullable: bool,
) -> JSONObject:
    """``type: ["string", "integer"]`` → ``anyOf`` of one branch per type (Gemini's ``type``
    names one type); each branch keeps the keywords of its type."""
    out = _annotations(walk, raw, where)
    if nullable:
        out["nullable"] = True
    shared = {k: v for k, v in raw.items() if k not in _ANNOTATIONS and k != "nullable"}
    out["anyOf"] = [_node(walk, {**shared, "type": t}, where, depth + 1) for t in types]
    return out


def _as_string(value: Any) -> str:
    """A JSON value as the string Gemini's enum holds (``1`` → ``"1"``, ``true`` → ``"true"``)."""
    return value if type(value) is str else json.dumps(value, ensure_ascii=False)


def _enum(
    walk: _Walk, raw: JSONObject, where: str, types: list[str]
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
    strings = list(dict.fromkeys(map(_as_string, values)))
    if "" in strings:
        walk.note(at, "the empty string is dropped: Gemini refuses an empty enum value")
        strings.remove("")
    return (strings or None), nullable


def _typed(
    walk: _Walk,
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


def _write_string(
    walk: _Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
) -> frozenset[str]:
    _format(walk, raw, where, "STRING", out)
    _count(walk, raw, where, ("minLength", "maxLength"), out)
    if "pattern" in raw:
        if type(raw["pattern"]) is str:
            out["pattern"] = raw["pattern"]
        else:
            walk.note(_at(where, "pattern"), "dropped: must be a string")
    return frozenset({"format", "minLength", "maxLength", "pattern"})


def _write_number(
    walk: _Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
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
    walk: _Walk, raw: JSONObject, where: str, kind: str, key: str, bound: str, out: JSONObject
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


def _write_array(
    walk: _Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
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
        branches += [_node(walk, p, _at(at, i), depth + 1) for i, p in enumerate(prefix)]
    if items is not None and not (items is False and branches):
        rest_key = "additionalItems" if prefix_key == "items" else "items"
        branches.append(_node(walk, items, _at(where, rest_key), depth + 1))
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
    _count(walk, raw, where, ("minItems", "maxItems"), out)
    return frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems"})


def _write_object(
    walk: _Walk, raw: JSONObject, where: str, depth: int, out: JSONObject
) -> frozenset[str]:
    """``properties`` (written only if non-empty: Gemini refuses an empty one), ``required``
    and ``propertyOrdering`` cut to the properties (Gemini refuses unknown names)."""
    properties = raw.get("properties", {})
    at = _at(where, "properties")
    if type(properties) is not dict:
        raise InvalidRequestError("must be an object of schemas", where=at)
    converted = {
        name: _node(walk, value, _at(at, name), depth + 1) for name, value in properties.items()
    }
    if converted:
        out["properties"] = converted
    for key in ("required", "propertyOrdering"):
        _names(walk, raw, where, key, converted, out)
    _count(walk, raw, where, ("minProperties", "maxProperties"), out)
    if raw.get("additionalProperties") not in (None, True, False, {}):
        walk.note(_at(where, "additionalProperties"), _NO_EXTRA_KEYS)
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


def _names(
    walk: _Walk, raw: JSONObject, where: str, key: str, properties: JSONObject, out: JSONObject
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


def _free_form(walk: _Walk, where: str, out: JSONObject) -> None:
    """An object without properties is sent untyped: Gemini refuses an OBJECT without
    properties, and an untyped schema still lets the model send an object.

    Not at the root: there it stays ``{"type": "OBJECT"}`` for the caller to judge (a
    function without parameters leaves ``parameters`` out).
    """
    for key in ("type", "minProperties", "maxProperties"):
        out.pop(key, None)
    walk.note(where, "an object without properties is sent untyped (Gemini refuses such an OBJECT)")


def _count(
    walk: _Walk, raw: JSONObject, where: str, keys: tuple[str, ...], out: JSONObject
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


def _format(walk: _Walk, raw: JSONObject, where: str, kind: str, out: JSONObject) -> None:
    """Keep ``format`` only where both APIs take it (Gemini API: ``enum``, ``date-time``
    for strings; ``float``, ``double``; ``int32``, ``int64``)."""
    if "format" not in raw:
        return
    value = raw["format"]
    allowed = _FORMATS.get(kind, ())
    if value in allowed:
        out["format"] = value
    else:
        listed = ", ".join(allowed) or "none"
        walk.note(_at(where, "format"), f"{value!r} dropped: Gemini takes only {listed} here")


def _note_dropped(
    walk: _Walk, raw: JSONObject, where: str, kind: str | None, handled: frozenset[str]
) -> None:
    """Note every keyword left out that constrained something here.

    Silent: annotations, ``x-`` extensions, keywords of another type (they constrain nothing
    on this node), ``additionalProperties`` when ``true``/``false``/``{}`` (``false`` is not
    enforced, but Gemini fills in the declared properties).
    """
    if walk.full:
        return  # nothing more would be listed
    if kind is None:
        own = _ANY_TYPE_KEYWORDS
    else:
        own = _TYPE_KEYWORDS.get("NUMBER" if kind == "INTEGER" else kind, frozenset())
    skip = {"type", "nullable", "enum", "const", *_ANNOTATIONS, *_SILENT, *handled}
    for key in raw:
        if key in skip or key.startswith("x-"):
            continue
        if key in _ANY_TYPE_KEYWORDS and key not in own:
            continue  # another type's keyword
        if key == "additionalProperties":
            if raw[key] not in (True, False, {}):
                walk.note(_at(where, key), _NO_EXTRA_KEYS)
            continue
        if kind is None and key in own:
            walk.note(_at(where, key), "dropped: Gemini applies it only with a type")
        else:
            walk.note(_at(where, key), "dropped: not in Gemini's Schema")


_Writer: TypeAlias = Callable[[_Walk, JSONObject, str, int, JSONObject], frozenset[str]]
_WRITERS: Final[dict[str, _Writer]] = {
    "STRING": _write_string,
    "NUMBER": _write_number,
    "INTEGER": _write_number,
    "ARRAY": _write_array,
    "OBJECT": _write_object,
}
