"""JSON Schema → Gemini's schemas: ``parametersJsonSchema`` (JSON Schema) and ``Schema`` (OpenAPI).

One test per rule of ``to_gemini_schema``, with the exact output; the refusals with their
``where``; the budget; the input left untouched; a Pydantic model; and a property test
over random schemas built from the keywords the converter knows.
"""

from __future__ import annotations

import copy
import enum
import json
from collections.abc import Iterator
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field
from strategies import PROPERTIES, examples

from rxgem.core._errors import InvalidRequestError
from rxgem.request.schema._convert import KEPT_KEYWORDS, to_gemini_schema

W = "tools[0].function.parameters"


def gemini(schema: dict[str, Any], **options: Any) -> tuple[dict[str, Any], list[str]]:
    """The ``openapi`` conversion of ``schema`` and its notes."""
    notes: list[str] = []
    return to_gemini_schema(schema, where=W, target="openapi", notes=notes, **options), notes


def json_target(schema: dict[str, Any], **options: Any) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    return to_gemini_schema(schema, where=W, target="json_schema", notes=notes, **options), notes


_BASE = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def prop(schema: Any) -> dict[str, Any]:
    """``schema`` as the property ``x`` of an object (not the root, where objects differ),
    beside ``$defs`` holding ``Base``."""
    return {"type": "object", "$defs": {"Base": _BASE}, "properties": {"x": schema}}


def converted_prop(schema: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    out, notes = gemini(prop(schema))
    return out["properties"]["x"], notes


def refused(
    schema: Any, target: Literal["json_schema", "openapi"] = "openapi", **options: Any
) -> InvalidRequestError:
    with pytest.raises(InvalidRequestError) as caught:
        to_gemini_schema(schema, where=W, target=target, **options)
    return caught.value


# -- type --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("string", "STRING"),
        ("number", "NUMBER"),
        ("integer", "INTEGER"),
        ("boolean", "BOOLEAN"),
        ("STRING", "STRING"),  # already OpenAPI-style: accepted in any case
        ("Integer", "INTEGER"),
    ],
)
def test_type_is_the_upper_case_enum_name(kind: str, expected: str) -> None:
    assert converted_prop({"type": kind}) == ({"type": expected}, [])


def test_object_and_array_types() -> None:
    out, notes = gemini(
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "boolean"}}}}
    )
    assert out == {
        "type": "OBJECT",
        "properties": {"a": {"type": "ARRAY", "items": {"type": "BOOLEAN"}}},
    }
    assert notes == []


def test_type_array_with_null_becomes_type_and_nullable() -> None:
    assert converted_prop({"type": ["string", "null"], "description": "d"}) == (
        {"type": "STRING", "nullable": True, "description": "d"},
        [],
    )


def test_type_array_of_several_types_becomes_any_of() -> None:
    out, notes = converted_prop(
        {"type": ["string", "integer", "null"], "minLength": 2, "minimum": 0, "title": "t"}
    )
    assert out == {
        "title": "t",
        "nullable": True,
        "anyOf": [{"type": "STRING", "minLength": 2}, {"type": "INTEGER", "minimum": 0}],
    }
    assert notes == []


def test_a_null_only_schema_is_untyped_and_nullable() -> None:
    out, notes = converted_prop({"type": "null", "description": "always null"})
    assert out == {"description": "always null", "nullable": True}
    assert notes == [f"{W}.properties.x: a null-only schema is sent untyped and nullable"]


def test_an_unknown_type_is_refused() -> None:
    error = refused(prop({"type": "date"}))
    assert error.where == f"{W}.properties.x.type"
    assert "'date'" in error.reason


def test_nullable_already_in_the_input_is_kept() -> None:
    assert converted_prop({"type": "string", "nullable": True}) == (
        {"type": "STRING", "nullable": True},
        [],
    )


# -- anyOf / oneOf -----------------------------------------------------------------------------


def test_any_of_with_a_null_branch_becomes_nullable() -> None:
    out, notes = converted_prop(
        {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None}
    )
    assert out == {"type": "INTEGER", "minimum": 1, "nullable": True, "default": None}
    assert notes == []


def test_one_of_with_a_null_branch_becomes_nullable_without_a_note() -> None:
    assert converted_prop({"oneOf": [{"type": "null"}, {"type": "string"}]}) == (
        {"type": "STRING", "nullable": True},
        [],
    )


def test_the_use_site_description_wins_over_the_branch() -> None:
    out, _ = converted_prop(
        {"anyOf": [{"type": "string", "description": "inner"}], "description": "outer"}
    )
    assert out == {"type": "STRING", "description": "outer"}


def test_any_of_with_several_branches_is_kept() -> None:
    out, notes = converted_prop(
        {
            "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}],
            "description": "id",
        }
    )
    assert out == {
        "description": "id",
        "nullable": True,
        "anyOf": [{"type": "STRING"}, {"type": "INTEGER"}],
    }
    assert notes == []


def test_one_of_with_several_branches_is_sent_as_any_of() -> None:
    out, notes = converted_prop({"oneOf": [{"type": "string"}, {"type": "boolean"}]})
    assert out == {"anyOf": [{"type": "STRING"}, {"type": "BOOLEAN"}]}
    assert notes == [
        f"{W}.properties.x.oneOf: sent as anyOf: Gemini does not enforce that exactly one"
        " branch matches"
    ]


def test_a_type_beside_any_of_is_distributed_into_the_branches() -> None:
    out, notes = converted_prop(
        {
            "type": "object",
            "description": "a or b",
            "anyOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "number"}}},
            ],
        }
    )
    assert out == {
        "description": "a or b",
        "anyOf": [
            {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "required": ["a"]},
            {"type": "OBJECT", "properties": {"b": {"type": "NUMBER"}}},
        ],
    }
    assert notes == []


def test_an_empty_any_of_is_refused() -> None:
    assert refused(prop({"anyOf": []})).where == f"{W}.properties.x.anyOf"


# -- enum and const ----------------------------------------------------------------------------


def test_const_becomes_a_single_value_enum() -> None:
    assert converted_prop({"type": "string", "const": "fixed"}) == (
        {"type": "STRING", "enum": ["fixed"]},
        [],
    )


def test_a_string_enum_without_type_is_a_string() -> None:
    assert converted_prop({"enum": ["a", "b"]}) == ({"type": "STRING", "enum": ["a", "b"]}, [])


def test_a_numeric_enum_is_sent_as_strings_with_type_string() -> None:
    out, notes = converted_prop(
        {"type": "integer", "enum": [1, 2, 3], "default": 2, "minimum": 1, "format": "int32"}
    )
    assert out == {"type": "STRING", "enum": ["1", "2", "3"], "default": "2"}
    assert notes == [
        f"{W}.properties.x.enum: sent as strings with type STRING: Gemini's enum holds strings"
        " only",
        f"{W}.properties.x.format: 'int32' dropped: Gemini takes only enum, date-time here",
    ]


def test_boolean_and_mixed_enums_are_sent_as_json_text() -> None:
    out, notes = converted_prop({"enum": [True, "a", 1.5, False]})
    assert out == {"type": "STRING", "enum": ["true", "a", "1.5", "false"]}
    assert len(notes) == 1


def test_a_boolean_const_is_sent_as_a_string() -> None:
    out, _ = converted_prop({"const": True})
    assert out == {"type": "STRING", "enum": ["true"]}


def test_null_in_an_enum_makes_it_nullable() -> None:
    assert converted_prop({"enum": ["a", None]}) == (
        {"type": "STRING", "nullable": True, "enum": ["a"]},
        [],
    )


def test_the_empty_string_is_dropped_from_an_enum() -> None:
    out, notes = converted_prop({"type": "string", "enum": ["", "eq", "neq"]})
    assert out == {"type": "STRING", "enum": ["eq", "neq"]}
    assert notes == [
        f"{W}.properties.x.enum: the empty string is dropped: Gemini refuses an empty enum value"
    ]


def test_an_enum_of_objects_is_dropped() -> None:
    out, notes = converted_prop({"type": "object", "enum": [{"a": 1}], "properties": {}})
    assert out == {}
    assert notes[0] == (
        f"{W}.properties.x.enum: dropped: Gemini's enum cannot hold objects or arrays"
    )


# -- objects -----------------------------------------------------------------------------------


def test_required_is_filtered_to_existing_properties() -> None:
    out, notes = gemini(
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b", "a"]}
    )
    assert out == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "required": ["a"]}
    assert notes == [f"{W}.required: names without a property dropped: 'b'"]


def test_property_ordering_is_kept_and_filtered() -> None:
    out, notes = gemini(
        {
            "properties": {"b": {"type": "string"}, "a": {"type": "string"}},
            "propertyOrdering": ["b", "zz", "a"],
        }
    )
    assert out == {
        "type": "OBJECT",
        "properties": {"b": {"type": "STRING"}, "a": {"type": "STRING"}},
        "propertyOrdering": ["b", "a"],
    }
    assert notes == []


def test_properties_without_type_imply_an_object() -> None:
    out, _ = converted_prop({"properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert out == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "required": ["a"]}


def test_additional_properties_false_is_dropped_silently() -> None:
    out, notes = gemini(
        {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    )
    assert out == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}
    assert notes == []


def test_an_additional_properties_schema_is_dropped_with_a_note() -> None:
    out, notes = gemini(
        {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "integer"},
        }
    )
    assert out == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}
    assert notes == [
        f"{W}.additionalProperties: dropped: Gemini's Schema cannot describe keys beyond properties"
    ]


def test_a_nested_object_without_properties_is_sent_untyped() -> None:
    out, notes = converted_prop(
        {"type": "object", "description": "headers", "additionalProperties": {"type": "string"}}
    )
    assert out == {"description": "headers"}
    assert notes == [
        f"{W}.properties.x.additionalProperties: dropped: Gemini's Schema cannot describe keys"
        " beyond properties",
        f"{W}.properties.x: an object without properties is sent untyped (Gemini refuses such"
        " an OBJECT)",
    ]


def test_the_root_object_without_properties_stays_an_object() -> None:
    """No parameters: the caller leaves ``parameters`` out."""
    assert gemini({"type": "object", "properties": {}}) == ({"type": "OBJECT"}, [])
    assert gemini({"type": "object", "additionalProperties": False}) == ({"type": "OBJECT"}, [])


def test_properties_that_is_not_an_object_is_refused() -> None:
    assert refused(prop({"type": "object", "properties": []})).where == (
        f"{W}.properties.x.properties"
    )


def test_odd_property_names_are_quoted_in_where() -> None:
    error = refused({"properties": {"a.b c": {"type": "nope"}}})
    assert error.where == f'{W}.properties["a.b c"].type'


# -- arrays ------------------------------------------------------------------------------------


def test_an_array_without_items_gets_empty_items() -> None:
    """``{}``: any value, the meaning of a bare JSON Schema array (Gemini refuses no items)."""
    assert converted_prop({"type": "array", "minItems": 1}) == (
        {"type": "ARRAY", "items": {}, "minItems": 1},
        [],
    )


def test_items_without_type_imply_an_array() -> None:
    assert converted_prop({"items": {"type": "string"}}) == (
        {"type": "ARRAY", "items": {"type": "STRING"}},
        [],
    )


def test_a_homogeneous_tuple_becomes_items() -> None:
    out, notes = converted_prop(
        {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "maxItems": 2}
    )
    assert out == {"type": "ARRAY", "items": {"type": "NUMBER"}, "maxItems": 2}
    assert notes == []


def test_a_mixed_tuple_becomes_items_any_of() -> None:
    out, notes = converted_prop(
        {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}  # draft 4 tuple
    )
    assert out == {"type": "ARRAY", "items": {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}}
    assert notes == [f"{W}.properties.x.items: a tuple is sent as items: anyOf of its positions"]


# -- keywords ----------------------------------------------------------------------------------


def test_every_kept_keyword_passes_through() -> None:
    schema: dict[str, Any] = {
        "type": "object",
        "title": "T",
        "description": "D",
        "default": {"s": "x"},
        "example": {"s": "y"},
        "minProperties": 1,
        "maxProperties": 3,
        "propertyOrdering": ["s", "n", "l"],
        "required": ["s"],
        "properties": {
            "s": {
                "type": "string",
                "format": "date-time",
                "minLength": 1,
                "maxLength": 30,
                "pattern": "^2",
            },
            "n": {"type": "number", "format": "double", "minimum": 0.5, "maximum": 9.5},
            "l": {"type": "array", "items": {"type": "integer"}, "minItems": 0, "maxItems": 4},
        },
    }
    out, notes = gemini(schema)
    assert out == {
        **schema,
        "type": "OBJECT",
        "properties": {
            "s": {**schema["properties"]["s"], "type": "STRING"},
            "n": {**schema["properties"]["n"], "type": "NUMBER"},
            "l": {**schema["properties"]["l"], "type": "ARRAY", "items": {"type": "INTEGER"}},
        },
    }
    assert notes == []


@pytest.mark.parametrize(
    ("schema", "kept", "noted"),
    [
        ({"type": "string", "format": "date-time"}, True, False),
        ({"type": "string", "format": "enum", "enum": ["a"]}, True, False),
        ({"type": "string", "format": "email"}, False, True),
        ({"type": "string", "format": "uri"}, False, True),
        ({"type": "integer", "format": "int64"}, True, False),
        ({"type": "integer", "format": "double"}, False, True),
        ({"type": "number", "format": "float"}, True, False),
        ({"type": "number", "format": "int32"}, False, True),
        ({"type": "boolean", "format": "x"}, False, False),  # constrains no boolean
    ],
)
def test_format_is_kept_only_where_gemini_takes_it(
    schema: dict[str, Any], kept: bool, noted: bool
) -> None:
    out, notes = converted_prop(schema)
    assert ("format" in out) is kept
    assert bool(notes) is noted


@pytest.mark.parametrize(
    ("schema", "expected", "noted"),
    [
        ({"type": "integer", "exclusiveMinimum": 0}, {"minimum": 1}, False),
        ({"type": "integer", "exclusiveMaximum": 10.5}, {"maximum": 10}, False),
        ({"type": "integer", "exclusiveMinimum": 3, "minimum": 0}, {"minimum": 4}, False),
        ({"type": "integer", "minimum": 3, "exclusiveMinimum": True}, {"minimum": 4}, False),
        ({"type": "number", "exclusiveMinimum": 0}, {"minimum": 0}, True),
        ({"type": "number", "exclusiveMaximum": 1, "maximum": 5}, {"maximum": 1}, True),
    ],
)
def test_exclusive_bounds_become_inclusive(
    schema: dict[str, Any], expected: dict[str, Any], noted: bool
) -> None:
    out, notes = converted_prop(schema)
    assert {k: v for k, v in out.items() if k != "type"} == expected
    assert bool(notes) is noted


def test_keywords_gemini_does_not_know_are_dropped_with_notes() -> None:
    out, notes = converted_prop(
        {
            "type": "array",
            "items": {"type": "number", "multipleOf": 2},
            "uniqueItems": True,
            "not": {"type": "null"},
        }
    )
    assert out == {"type": "ARRAY", "items": {"type": "NUMBER"}}
    assert notes == [
        f"{W}.properties.x.items.multipleOf: dropped: not in Gemini's Schema",
        f"{W}.properties.x.uniqueItems: dropped: not in Gemini's Schema",
        f"{W}.properties.x.not: dropped: not in Gemini's Schema",
    ]


def test_annotations_and_extensions_are_dropped_silently() -> None:
    out, notes = gemini(
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "urn:x",
            "$comment": "c",
            "type": "object",
            "properties": {"a": {"type": "string", "examples": ["x"], "readOnly": True}},
            "x-order": 1,
            "deprecated": False,
        }
    )
    assert out == {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}}
    assert notes == []


def test_keywords_of_another_type_are_dropped_silently() -> None:
    assert converted_prop({"type": "string", "minimum": 1, "items": {}, "required": []}) == (
        {"type": "STRING"},
        [],
    )


def test_a_typeless_schema_keeps_annotations_and_notes_typed_keywords() -> None:
    out, notes = converted_prop({"description": "anything", "minLength": 2})
    assert out == {"description": "anything"}
    assert notes == [f"{W}.properties.x.minLength: dropped: Gemini applies it only with a type"]


def test_malformed_keyword_values_are_dropped_with_notes() -> None:
    out, notes = converted_prop(
        {"type": "string", "minLength": -1, "maxLength": 2.0, "description": 3, "pattern": 1}
    )
    assert out == {"type": "STRING", "maxLength": 2}
    assert [line.split(": ", 1)[0] for line in notes] == [
        f"{W}.properties.x.description",
        f"{W}.properties.x.minLength",
        f"{W}.properties.x.pattern",
    ]


def test_true_is_any_value_and_false_is_refused() -> None:
    assert converted_prop({"type": "array", "items": True}) == ({"type": "ARRAY", "items": {}}, [])
    assert refused(prop({"type": "array", "items": False})).where == f"{W}.properties.x.items"


# -- $ref and allOf ----------------------------------------------------------------------------


def test_refs_are_inlined_and_their_siblings_win() -> None:
    out, notes = gemini(
        {
            "type": "object",
            "$defs": {"When": {"type": "string", "format": "date-time", "description": "def"}},
            "definitions": {"N": {"type": "integer"}},
            "properties": {
                "when": {"$ref": "#/$defs/When", "description": "use"},
                "n": {"$ref": "#/definitions/N"},
                "again": {"$ref": "#/properties/n"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/When"}},
            },
        }
    )
    when = {"type": "STRING", "format": "date-time"}
    assert out == {
        "type": "OBJECT",
        "properties": {
            "when": {**when, "description": "use"},
            "n": {"type": "INTEGER"},
            "again": {"type": "INTEGER"},
            "list": {"type": "ARRAY", "items": {**when, "description": "def"}},
        },
    }
    assert notes == []


def test_escaped_json_pointers_resolve() -> None:
    out, _ = gemini(
        {
            "$defs": {"a/b~c d": {"type": "boolean"}},
            "properties": {"x": {"$ref": "#/$defs/a~1b~0c%20d"}},
        }
    )
    assert out["properties"]["x"] == {"type": "BOOLEAN"}


def test_all_of_is_merged() -> None:
    out, notes = converted_prop(
        {
            "allOf": [
                {"$ref": "#/$defs/Base"},
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ],
            "description": "merged",
        }
    )
    assert out == {
        "description": "merged",
        "type": "OBJECT",
        "properties": {"b": {"type": "INTEGER"}, "a": {"type": "STRING"}},
        "required": ["a", "b"],
    }
    assert notes == []


def test_all_of_conflicts_keep_the_first_value() -> None:
    out, notes = converted_prop({"allOf": [{"type": "string"}, {"type": "integer"}]})
    assert out == {"type": "STRING"}
    assert notes == [f"{W}.properties.x.allOf: branches disagree on type: the first value is kept"]


def test_all_of_with_a_field_of_its_base_type_is_no_recursion() -> None:
    out, _ = converted_prop(
        {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"parent": {"$ref": "#/$defs/Base"}}}]}
    )
    base = {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "required": ["a"]}
    assert out == {**base, "properties": {"a": {"type": "STRING"}, "parent": base}}


def test_a_recursion_through_all_of_is_refused() -> None:
    schema = {
        "$defs": {
            "A": {"allOf": [{"$ref": "#/$defs/B"}]},
            "B": {"properties": {"next": {"$ref": "#/$defs/B"}}},
        },
        "properties": {"x": {"$ref": "#/$defs/A"}},
    }
    error = refused(schema)
    assert error.where == f"{W}.properties.x.properties.next.properties.next.$ref"
    assert "recursive $ref '#/$defs/B'" in error.reason


def test_a_recursive_ref_is_refused_naming_it() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"value": {"type": "string"}, "next": {"$ref": "#/$defs/Node"}},
            }
        },
        "properties": {"head": {"$ref": "#/$defs/Node"}},
    }
    error = refused(schema)
    assert error.where == f"{W}.properties.head.properties.next.$ref"
    assert "'#/$defs/Node'" in error.reason
    assert "recursive" in error.reason


def test_an_indirect_cycle_is_refused_with_its_chain() -> None:
    schema = {
        "$defs": {
            "A": {"type": "array", "items": {"$ref": "#/$defs/B"}},
            "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "string"}]},
        },
        "properties": {"when": {"$ref": "#/$defs/A"}},
    }
    error = refused(schema)
    assert error.where == f"{W}.properties.when.items.anyOf[0].$ref"
    assert "#/$defs/A → #/$defs/B → #/$defs/A" in error.reason


def test_a_ref_to_the_root_is_a_cycle() -> None:
    error = refused({"type": "object", "properties": {"child": {"$ref": "#"}}})
    assert error.where == f"{W}.properties.child.$ref"


def test_a_missing_ref_is_refused() -> None:
    error = refused({"properties": {"when": {"$ref": "#/$defs/Missing"}}})
    assert error.where == f"{W}.properties.when.$ref"
    assert error.reason == "$ref '#/$defs/Missing' points to nothing in this schema"


@pytest.mark.parametrize("ref", ["https://example.com/s.json", "other.json#/a", "#anchor"])
def test_a_ref_outside_the_document_is_refused(ref: str) -> None:
    assert refused({"properties": {"x": {"$ref": ref}}}).where == f"{W}.properties.x.$ref"


def test_the_node_budget_stops_exponential_inlining() -> None:
    defs = {
        f"L{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/L{i + 1}"}, "b": {"$ref": f"#/$defs/L{i + 1}"}},
        }
        for i in range(20)
    }
    defs["L20"] = {"type": "string"}
    error = refused({"$defs": defs, "properties": {"x": {"$ref": "#/$defs/L0"}}})
    assert "more than 4096 nodes" in error.reason
    assert error.where.startswith(f"{W}.properties.x.properties.a")
    small, _ = gemini({"$defs": defs, "properties": {"x": {"$ref": "#/$defs/L18"}}})
    assert small["properties"]["x"]["properties"]["a"]["properties"]["b"] == {"type": "STRING"}


def test_the_depth_budget() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(10):
        schema = {"type": "array", "items": schema}
    gemini(schema, max_depth=10)
    error = refused(schema, max_depth=9)
    assert error.where == W + ".items" * 10
    assert "deeper than 9" in error.reason
    assert refused(schema, "json_schema", max_depth=9).where == W + ".items" * 10


def test_a_deep_schema_is_refused_not_a_recursion_error() -> None:
    schema: dict[str, Any] = {}
    for _ in range(5000):
        schema = {"type": "array", "items": schema}
    for target in ("openapi", "json_schema"):
        assert "deeper than 64" in refused(schema, target).reason


# -- target json_schema ------------------------------------------------------------------------

PASS_THROUGH: dict[str, Any] = {
    "type": "object",
    "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    "properties": {
        "head": {"$ref": "#/$defs/Node"},
        "id": {"type": ["string", "null"], "format": "uuid"},
        "tags": {"type": "array", "prefixItems": [{"const": 1}]},
        "meta": {"type": "object", "additionalProperties": {"type": "integer"}},
        "kind": {"oneOf": [{"enum": [1, 2]}, {"type": "boolean"}]},
    },
    "required": ["head", "nope"],
    "additionalProperties": False,
}


def test_json_schema_target_is_a_deep_copy_keeping_refs() -> None:
    out, notes = json_target(PASS_THROUGH)
    assert out == PASS_THROUGH
    assert notes == []
    out["properties"]["tags"]["prefixItems"][0]["const"] = 2
    assert PASS_THROUGH["properties"]["tags"]["prefixItems"][0]["const"] == 1


def test_json_schema_target_drops_the_root_dollar_schema() -> None:
    out, notes = json_target(
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}
    )
    assert out == {"type": "object"}
    assert notes == []


def test_json_schema_target_drops_what_gemini_refuses_beside_ref() -> None:
    out, notes = json_target(
        {
            "$defs": {"A": {"type": "string"}},
            "properties": {
                "a": {
                    "$ref": "#/$defs/A",
                    "description": "d",
                    "default": "x",
                    "title": "t",
                    "$comment": "c",
                    "minLength": 1,
                }
            },
        }
    )
    assert out["properties"]["a"] == {
        "$ref": "#/$defs/A",
        "description": "d",
        "default": "x",
        "$comment": "c",
    }
    assert notes == [
        f"{W}.properties.a.title: dropped: Gemini allows only $-keywords, description and"
        " default beside $ref",
        f"{W}.properties.a.minLength: dropped: Gemini allows only $-keywords, description and"
        " default beside $ref",
    ]


def test_json_schema_target_refuses_a_missing_ref() -> None:
    error = refused({"properties": {"when": {"$ref": "#/$defs/When"}}}, "json_schema")
    assert error.where == f"{W}.properties.when.$ref"


def test_a_property_named_like_a_keyword_is_not_a_keyword() -> None:
    schema = {
        "type": "object",
        "properties": {"$ref": {"type": "string"}, "allOf": {"type": "integer"}},
    }
    assert json_target(schema) == (schema, [])
    assert gemini(schema)[0] == {
        "type": "OBJECT",
        "properties": {"$ref": {"type": "STRING"}, "allOf": {"type": "INTEGER"}},
    }


# -- the contract --------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["json_schema", "openapi"])
def test_the_input_is_not_mutated(target: Literal["json_schema", "openapi"]) -> None:
    schema = {
        "$schema": "x",
        "$defs": {"E": {"enum": [1, 2]}},
        "type": "object",
        "properties": {
            "e": {"$ref": "#/$defs/E", "title": "t"},
            "o": {"anyOf": [{"type": "object", "properties": {"a": {}}}, {"type": "null"}]},
            "l": {"type": ["array", "null"], "default": [1]},
        },
        "required": ["e", "missing"],
        "additionalProperties": {"type": "string"},
    }
    before = copy.deepcopy(schema)
    out = to_gemini_schema(schema, where=W, target=target)
    assert schema == before
    out["properties"]["l"]["default"].append(2)  # nothing is shared either
    assert schema == before


def test_notes_accumulate_without_duplicates() -> None:
    notes = ["earlier"]
    schema = {"properties": {"a": {"type": "number", "multipleOf": 2}}}
    to_gemini_schema(schema, where=W, target="openapi", notes=notes)
    to_gemini_schema(schema, where=W, target="openapi", notes=notes)
    assert notes == ["earlier", f"{W}.properties.a.multipleOf: dropped: not in Gemini's Schema"]


def test_without_notes_the_result_is_the_same() -> None:
    schema = {"properties": {"a": {"type": "number", "multipleOf": 2}}}
    assert to_gemini_schema(schema, where=W, target="openapi") == gemini(schema)[0]


def test_an_unknown_target_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="target"):
        to_gemini_schema({}, where=W, target="yaml")  # type: ignore[arg-type]


def test_a_non_object_schema_is_refused() -> None:
    assert refused(prop(["string"])).where == f"{W}.properties.x"
    assert refused(True, "json_schema").where == W


# -- Pydantic --------------------------------------------------------------------------------------


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    model_config = ConfigDict(extra="forbid")
    street: str = Field(description="street and number")
    zip: str | None = None


class Person(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    home: Address
    work: Address | None = None
    previous: list[Address] = []
    role: Literal["admin", "user"]
    kind: Literal["person"]
    color: Color
    level: Level = Level.LOW
    age: int | None = Field(default=None, ge=0, lt=150)
    scores: dict[str, float] = {}


def walk_schemas(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("properties", {}).values():
        yield from walk_schemas(child)
    if "items" in node:
        yield from walk_schemas(node["items"])
    for child in node.get("anyOf", []):
        yield from walk_schemas(child)


def test_a_pydantic_model_converts_to_a_plain_gemini_schema() -> None:
    schema = Person.model_json_schema()
    assert "$defs" in schema  # nested models, enums: refs to inline
    out, notes = gemini(schema)
    text = json.dumps(out)
    assert "$ref" not in text
    assert "additionalProperties" not in text
    for node in walk_schemas(out):
        assert set(node) <= KEPT_KEYWORDS
    assert_gemini_schema(out)
    props = out["properties"]
    assert props["work"]["nullable"] is True
    assert props["work"]["properties"]["street"] == {
        "type": "STRING",
        "description": "street and number",
        "title": "Street",
    }
    assert props["previous"]["items"]["type"] == "OBJECT"
    assert props["role"] == {"type": "STRING", "enum": ["admin", "user"], "title": "Role"}
    assert props["kind"] == {"type": "STRING", "enum": ["person"], "title": "Kind"}
    assert props["color"] == {"type": "STRING", "enum": ["red", "green"], "title": "Color"}
    assert props["level"]["enum"] == ["1", "2"]
    assert props["age"] == {
        "type": "INTEGER",
        "nullable": True,
        "minimum": 0,
        "maximum": 149,
        "default": None,
        "title": "Age",
    }
    assert props["scores"] == {"title": "Scores", "default": {}}
    assert sorted(line.split(": ", 1)[0] for line in notes) == [
        f"{W}.properties.level.enum",
        f"{W}.properties.scores",
        f"{W}.properties.scores.additionalProperties",
    ]


def test_a_pydantic_model_passes_through_as_json_schema() -> None:
    schema = Person.model_json_schema()
    assert json_target(schema) == (schema, [])


# -- property: random schemas --------------------------------------------------------------------

_TYPE_NAMES = ("string", "number", "integer", "boolean", "array", "object")
_FORMATS_OK = {
    "STRING": {"enum", "date-time"},
    "NUMBER": {"float", "double"},
    "INTEGER": {"int32", "int64"},
}
_BY_TYPE = {
    "STRING": {"format", "minLength", "maxLength", "pattern", "enum"},
    "NUMBER": {"format", "minimum", "maximum"},
    "INTEGER": {"format", "minimum", "maximum"},
    "ARRAY": {"items", "minItems", "maxItems"},
    "OBJECT": {"properties", "required", "propertyOrdering", "minProperties", "maxProperties"},
    "BOOLEAN": set(),
}
_GENERAL = {"type", "title", "description", "nullable", "default", "example", "anyOf"}


def assert_gemini_schema(node: Any, root: bool = True) -> None:
    """What Gemini's ``Schema`` accepts, as far as the docs and the API's errors tell."""
    assert type(node) is dict
    assert set(node) <= KEPT_KEYWORDS, set(node) - KEPT_KEYWORDS
    if "nullable" in node:
        assert node["nullable"] is True
    if "anyOf" in node:
        assert "type" not in node  # Gemini wants anyOf alone
        assert node["anyOf"]
        for branch in node["anyOf"]:
            assert_gemini_schema(branch, root=False)
    kind: str = node.get("type", "")
    assert set(node) - _GENERAL <= _BY_TYPE.get(kind, set()), (kind, set(node))
    if kind == "OBJECT" and not root:
        assert node["properties"]
    if "required" in node:
        assert node["required"]
        assert set(node["required"]) <= set(node["properties"])
    if kind == "ARRAY":
        assert_gemini_schema(node["items"], root=False)
    if "enum" in node:
        assert kind == "STRING"
        assert node["enum"]
        assert all(type(v) is str and v for v in node["enum"])
    if "format" in node:
        assert node["format"] in _FORMATS_OK[kind]
    for child in node.get("properties", {}).values():
        assert_gemini_schema(child, root=False)


_SCALARS = st.one_of(
    st.text(max_size=3), st.integers(-3, 3), st.booleans(), st.none(), st.floats(-2, 2, width=16)
)
_NAMES = st.sampled_from(["a", "b", "when", "x y", "é", "$ref"])
_COUNTS = st.integers(0, 4)


def _leaves(refs: list[str]) -> st.SearchStrategy[Any]:
    typed = st.sampled_from([*_TYPE_NAMES, "STRING", "Null", "null"])
    leaves = [
        st.builds(lambda t: {"type": t}, typed),
        st.fixed_dictionaries(
            {"type": st.just("string")},
            optional={
                "format": st.sampled_from(["date-time", "email", "enum", "uri"]),
                "minLength": _COUNTS,
                "maxLength": _COUNTS,
                "pattern": st.just("^a"),
                "description": st.text(max_size=4),
            },
        ),
        st.fixed_dictionaries(
            {"type": st.sampled_from(["number", "integer"])},
            optional={
                "minimum": st.integers(-5, 5),
                "maximum": st.floats(-5, 5),
                "exclusiveMinimum": st.floats(-5, 5),
                "exclusiveMaximum": st.integers(-5, 5),
                "multipleOf": st.just(2),
                "format": st.sampled_from(["int32", "double", "float", "x"]),
            },
        ),
        st.fixed_dictionaries(
            {"enum": st.lists(_SCALARS, min_size=1, max_size=4)},
            optional={"type": typed, "default": _SCALARS},
        ),
        st.fixed_dictionaries({"const": _SCALARS}, optional={"title": st.text(max_size=3)}),
        st.builds(
            lambda ts: {"type": ts},
            st.lists(st.sampled_from([*_TYPE_NAMES, "null"]), min_size=1, max_size=3, unique=True),
        ),
        st.just({}),
        st.just(True),
        st.just({"description": "free", "minLength": 1, "$comment": "c", "x-extra": 1}),
    ]
    if refs:
        leaves.append(st.builds(lambda r: {"$ref": r}, st.sampled_from(refs)))
    return st.one_of(leaves)


def _compounds(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.fixed_dictionaries(
            {"properties": st.dictionaries(_NAMES, children, max_size=3)},
            optional={
                "type": st.just("object"),
                "required": st.lists(_NAMES, max_size=3),
                "additionalProperties": st.one_of(st.booleans(), children),
                "propertyOrdering": st.lists(_NAMES, max_size=3),
                "minProperties": _COUNTS,
                "patternProperties": st.just({"^x": {"type": "string"}}),
                "title": st.text(max_size=3),
            },
        ),
        st.fixed_dictionaries(
            {"type": st.just("array")},
            optional={
                "items": children,
                "prefixItems": st.lists(children, min_size=1, max_size=3),
                "minItems": _COUNTS,
                "maxItems": _COUNTS,
                "uniqueItems": st.booleans(),
            },
        ),
        st.builds(
            lambda key, branches: {key: branches},
            st.sampled_from(["anyOf", "oneOf"]),
            st.lists(st.one_of(children, st.just({"type": "null"})), min_size=1, max_size=3),
        ),
        st.fixed_dictionaries(
            {"anyOf": st.lists(children, min_size=1, max_size=3)},
            optional={
                "type": st.sampled_from(_TYPE_NAMES),
                "description": st.text(max_size=3),
                "nullable": st.booleans(),
            },
        ),
        st.fixed_dictionaries({"allOf": st.lists(children, min_size=1, max_size=2)}),
    )


def _schemas(refs: list[str]) -> st.SearchStrategy[Any]:
    return st.recursive(_leaves(refs), _compounds, max_leaves=8)


_REFS = ["#/$defs/A", "#/$defs/B", "#/definitions/C"]
_REF_FREE = _schemas([])
_WITH_REFS = _schemas(_REFS)


@st.composite
def json_schemas(draw: st.DrawFn) -> dict[str, Any]:
    """A JSON Schema document: ``$defs`` and ``definitions`` free of refs (so no cycles), and
    an object root whose properties may ``$ref`` them."""
    root: dict[str, Any] = {
        "type": "object",
        "properties": draw(st.dictionaries(_NAMES, _WITH_REFS, min_size=1, max_size=3)),
        "$defs": {"A": draw(_REF_FREE), "B": draw(_REF_FREE)},
        "definitions": {"C": draw(_REF_FREE)},
    }
    if draw(st.booleans()):
        root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return root


@settings(PROPERTIES, derandomize=True, max_examples=examples(400))
@given(json_schemas())
def test_random_schemas_convert_to_what_gemini_accepts(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    out, notes = gemini(schema)
    assert schema == before
    assert_gemini_schema(out)
    assert '"$ref": "' not in json.dumps(out)  # (a property may be named $ref)
    assert all(line.startswith(W) for line in notes)


@settings(PROPERTIES, derandomize=True, max_examples=examples(200))
@given(json_schemas())
def test_random_schemas_pass_through_as_json_schema(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    out, notes = json_target(schema)
    assert schema == before
    assert out == {k: v for k, v in schema.items() if k != "$schema"}
    assert notes == []
