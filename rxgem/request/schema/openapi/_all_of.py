"""Target ``openapi``: ``allOf``, which Gemini's ``Schema`` lacks, folded into one schema.

Each branch is read with its ``$ref`` inlined; ``properties`` and ``required`` are united,
any other keyword keeps its first value, and a conflict is noted. The merged schema is then
translated like any other (``_node``).
"""

from __future__ import annotations

from typing import Any

from ....core import InvalidRequestError
from ..._json import at as _at
from ..._json import json_equal
from .._walk import JSONObject, Walk
from ._refs import inline_ref, pop_refs
from ._vocabulary import ANNOTATIONS, SILENT, as_schema

__all__ = ["merge_all_of"]


def merge_all_of(walk: Walk, raw: JSONObject, where: str) -> JSONObject:
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
            part = inline_ref(walk, as_schema(branch, _at(at, i)), _at(at, i))
            pop_refs(walk, pushed)
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
                    key not in SILENT
                    and key not in ANNOTATIONS
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
    list invalid, which ``known_names`` (``_keywords``) notes)."""
    for name in more:
        if type(name) is not str:
            names.append(name)
        elif name not in seen:
            seen.add(name)
            names.append(name)
