"""OpenAI's JSON Schemas (tool parameters, ``response_format``) → the schemas Gemini accepts.

Gemini takes a schema in one of two shapes, and :func:`to_gemini_schema` writes either:

- ``target="json_schema"``: JSON Schema, for the Gemini API's (``v1beta``)
  ``FunctionDeclaration.parametersJsonSchema`` and ``generationConfig.responseJsonSchema``:
  a deep copy with the few fixes Gemini needs.
- ``target="openapi"``: Gemini's ``Schema`` object, the OpenAPI 3.0 subset of
  ``FunctionDeclaration.parameters`` and ``generationConfig.responseSchema``, and the only
  shape Vertex AI's ``v1`` takes everywhere. Only the fields both the Gemini API and Vertex
  AI document are written (:data:`KEPT_KEYWORDS`); ``$ref`` is inlined (recursion is
  refused), ``allOf`` merged, and what the ``Schema`` cannot say is approximated or dropped,
  each time with a note (the README's table lists every approximation).

The caller gets a new dict (the input is never changed) and, through ``notes``, one line
per approximation (``"<where>: <what>"``) to warn about. A malformed or untranslatable
schema raises :class:`~rxgem.InvalidRequestError` whose ``where`` is the path of the culprit
in the OpenAI request, e.g. ``tools[2].function.parameters.properties.when.$ref``.

Both walks have a budget (:data:`MAX_SCHEMA_NODES` schema nodes, :data:`MAX_SCHEMA_DEPTH`
levels), and the ``openapi`` walk a third (:data:`MAX_SCHEMA_SIZE`). Values that are not
schemas (``default``, ``const`` ...) are copied and compared without recursion, and refused
past ``MAX_JSON_DEPTH`` (``_json``) levels. Every step is linear in what it
reads: no list is searched per element.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from ...core import InvalidRequestError
from ._walk import (
    MAX_SCHEMA_DEPTH,
    MAX_SCHEMA_NODES,
    MAX_SCHEMA_NOTES,
    MAX_SCHEMA_SIZE,
    JSONObject,
    Walk,
)
from .json_schema._copy import json_schema_node
from .openapi._node import openapi_node
from .openapi._vocabulary import KEPT_KEYWORDS

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
    walk = Walk(schema, max_nodes, max_depth, max_size)
    if target == "json_schema":
        result = json_schema_node(walk, schema, where, 0)
    else:
        walk.refs["#"] = None  # the root is "#" to a $ref
        result = openapi_node(walk, schema, where, 0)
    if type(result) is not dict:  # a boolean root schema
        raise InvalidRequestError("must be a JSON Schema object", where=where)
    if notes is not None:
        known = set(notes)
        notes.extend(line for line in walk.notes if line not in known)
        if walk.full:
            notes.append(f"{where}: more than {MAX_SCHEMA_NOTES} approximations; not all listed")
    return result
