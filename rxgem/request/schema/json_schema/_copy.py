"""Target ``json_schema``: the schema as the Gemini API's JSON Schema (``v1beta``).

For ``FunctionDeclaration.parametersJsonSchema`` and ``generationConfig.responseJsonSchema``.
Google documents the keywords it uses (``$id $defs $ref $anchor type format title
description enum items prefixItems minItems maxItems minimum maximum anyOf oneOf properties
additionalProperties required`` and ``propertyOrdering``) and that a node holding ``$ref``
may hold nothing else but ``$``-keywords; the API's own error says ``description`` and
``default`` are tolerated there too. So the schema passes through as a deep copy, with only
this fixed: the root ``$schema`` goes, a ``$ref`` loses its other siblings (noted), and a
same-document ``$ref`` that points nowhere is refused here rather than by Google. Values
that are not schemas (``default``, ``const`` ...) are copied without recursion.
"""

from __future__ import annotations

from typing import Any, Final

from ....core import InvalidRequestError
from ..._json import at as _at
from ..._json import copy_json, quoted
from .._walk import JSONObject, Walk, is_pointer, resolve_pointer

__all__ = ["json_schema_node"]

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


def json_schema_node(walk: Walk, node: Any, where: str, depth: int) -> Any:
    """A deep copy of one JSON Schema node, with its subschemas walked the same way."""
    walk.enter(where, depth)
    if type(node) is bool:
        return node
    if type(node) is not dict:
        raise InvalidRequestError("must be a JSON Schema (an object or a boolean)", where=where)
    ref = node.get("$ref")
    if type(ref) is str and is_pointer(ref) and not resolve_pointer(walk.root, ref)[0]:
        raise InvalidRequestError(
            f"$ref {quoted(ref)} points to nothing in this schema", where=_at(where, "$ref")
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


def _json_child(walk: Walk, key: str, value: Any, where: str, depth: int) -> Any:
    """The copy of one keyword's value: subschemas walked, anything else copied."""
    if key in _SCHEMA_MAPS and type(value) is dict:
        return {k: json_schema_node(walk, v, _at(where, k), depth + 1) for k, v in value.items()}
    if (key in _SCHEMA_LISTS or key == "items") and type(value) is list:
        return [json_schema_node(walk, v, _at(where, i), depth + 1) for i, v in enumerate(value)]
    if key in _SCHEMA_VALUES:
        return json_schema_node(walk, value, where, depth + 1)
    return copy_json(value, where)
