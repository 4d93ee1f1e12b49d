"""Target ``openapi``: the words of Gemini's ``Schema``, and which JSON Schema words go unsaid.

Gemini's ``Schema`` object is the OpenAPI 3.0 subset of ``FunctionDeclaration.parameters``
and ``generationConfig.responseSchema``, and the only shape Vertex AI's ``v1`` takes
everywhere. Only the fields both the Gemini API and Vertex AI document are written
(:data:`KEPT_KEYWORDS`); ``type`` is the upper-case enum name (``"OBJECT"``, :data:`TYPES`),
as both references spell it and Google's SDKs send it. The JSON Schema keywords the walk
meets are sorted here: those that constrain one type only (:data:`TYPE_KEYWORDS`), those
dropped without a note (:data:`SILENT`), the annotations (:data:`ANNOTATIONS`); and
:func:`as_schema` says what a subschema is to the walk (an object; ``true`` is ``{}``).
"""

from __future__ import annotations

from typing import Any, Final

from ....core import InvalidRequestError
from .._walk import JSONObject

__all__ = [
    "ANNOTATIONS",
    "ANY_TYPE_KEYWORDS",
    "DISTRIBUTED",
    "FORMATS",
    "KEPT_KEYWORDS",
    "NO_EXTRA_KEYS",
    "SILENT",
    "TYPES",
    "TYPE_KEYWORDS",
    "as_schema",
]

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

TYPES: Final = {
    "string": "STRING",
    "number": "NUMBER",
    "integer": "INTEGER",
    "boolean": "BOOLEAN",
    "array": "ARRAY",
    "object": "OBJECT",
}
FORMATS: Final = {
    "STRING": ("enum", "date-time"),
    "NUMBER": ("float", "double"),
    "INTEGER": ("int32", "int64"),
}
"""The formats both APIs accept (Vertex takes more string formats; the Gemini API refuses them)."""

# Keywords that only constrain values of one JSON type: on a node of another type they
# mean nothing, so dropping them there loses nothing.
TYPE_KEYWORDS: Final = {
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
ANY_TYPE_KEYWORDS: Final = frozenset().union(*TYPE_KEYWORDS.values())

# Annotations and bookkeeping Gemini has no use for: dropped without a note.
SILENT: Final = frozenset(
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
ANNOTATIONS: Final = ("title", "description", "default", "example")
NO_EXTRA_KEYS: Final = "dropped: Gemini's Schema cannot describe keys beyond properties"
# What the openapi walk reads on a node besides annotations: a union distributes only these
# into its branches (any other keyword is dropped, and noted once, on the union itself).
DISTRIBUTED: Final = ANY_TYPE_KEYWORDS | {"type", "nullable", "enum", "const"}


def as_schema(node: Any, where: str) -> JSONObject:
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
