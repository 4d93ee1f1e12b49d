"""Requests built to make the translation blow up: deep JSON, repeated images, ``$ref`` bombs.

Each is refused with an :class:`~rxgem.InvalidRequestError` naming where, or translated,
never a bare ``RecursionError``, never a request that grows with the product of its parts.
(How the translation's time grows with a request's size: ``test_linear_cost.py``.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from rxgem import InvalidRequestError
from rxgem.request import to_gemini_request
from rxgem.request._json import (
    MAX_JSON_DEPTH,
    check_depth,
    copy_json,
    fingerprint,
    json_equal,
    json_size,
)
from rxgem.request.schema._convert import MAX_SCHEMA_NOTES, to_gemini_schema

DEEP = 100_000
"""Far deeper than Python's recursion limit."""


def nested(depth: int, leaf: Any = 1) -> Any:
    """``[[[…leaf…]]]``, ``depth`` arrays deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def translate(body: dict[str, Any], **options: Any) -> dict[str, Any]:
    return to_gemini_request({"model": "gemini-2.5-flash", **body}, **options)


def refused(body: dict[str, Any], **options: Any) -> InvalidRequestError:
    with pytest.raises(InvalidRequestError) as caught:
        translate(body, **options)
    return caught.value


def with_call(arguments: Any, result: Any = "ok") -> dict[str, Any]:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}
    return {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": result},
        ]
    }


ARGUMENTS = "messages[1].tool_calls[0].function.arguments"


# -- deep JSON ------------------------------------------------------------------------------------


def test_deep_arguments_text_is_refused_not_a_recursion_error() -> None:
    error = refused(with_call('{"a": ' + "[" * DEEP + "]" * DEEP + "}"))
    assert error.where == ARGUMENTS
    assert f"deeper than {MAX_JSON_DEPTH} levels" in error.reason


def test_arguments_just_too_deep_for_gemini_are_refused_with_their_path() -> None:
    error = refused(with_call(json.dumps({"a": nested(MAX_JSON_DEPTH)})))
    # the object is level 1, its arrays levels 2 to 129: the path names the 129th
    assert error.where == ARGUMENTS + ".a" + "[0]" * (MAX_JSON_DEPTH - 1)


def test_arguments_at_the_depth_limit_pass() -> None:
    args = {"a": nested(MAX_JSON_DEPTH - 1)}
    request = translate(with_call(json.dumps(args)))
    assert request["contents"][1]["parts"][0]["functionCall"]["args"] == args


def test_deep_arguments_given_as_a_dict_are_refused() -> None:
    error = refused(with_call({"a": nested(DEEP)}))
    assert error.where.startswith(ARGUMENTS + ".a[0][0]")


def test_a_deep_json_tool_result_is_sent_as_text() -> None:
    text = '{"a": ' + "[" * DEEP + "]" * DEEP + "}"
    request = translate(with_call("{}", text))
    response = request["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response == {"output": text}


def test_a_deep_part_kept_in_extra_content_is_refused() -> None:
    part = {"executableCode": {"language": "PYTHON", "code": "1", "x": nested(DEEP)}}
    assistant = {
        "role": "assistant",
        "content": "hi",
        "extra_content": {"google": {"parts": [{"part": part, "content_index": 0}]}},
    }
    error = refused({"messages": [{"role": "user", "content": "x"}, assistant]})
    assert error.where.startswith("messages[1].extra_content.google.parts[0].part.executableCode.x")


@pytest.mark.parametrize("api", ["gemini", "vertex"])
@pytest.mark.parametrize("keyword", ["default", "example"])
def test_a_deep_value_in_a_tool_schema_is_refused(api: str, keyword: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "array", keyword: nested(DEEP)}}}
    tool = {"type": "function", "function": {"name": "f", "parameters": schema}}
    error = refused({"messages": [{"role": "user", "content": "x"}], "tools": [tool]}, api=api)
    assert error.where.startswith(f"tools[0].function.parameters.properties.a.{keyword}[0][0]")


@pytest.mark.parametrize("api", ["gemini", "vertex"])
def test_a_deep_value_in_a_response_format_schema_is_refused(api: str) -> None:
    schema = {"type": "object", "properties": {"a": {"const": nested(DEEP)}}}
    body = {
        "messages": [{"role": "user", "content": "x"}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}},
    }
    if api == "vertex":  # Gemini's Schema has no object enum: dropped, never copied
        with pytest.warns(UserWarning, match="enum cannot hold objects"):
            translate(body, api=api)
    else:
        assert refused(body, api=api).where.startswith("response_format.json_schema.schema")


def test_deep_all_of_branches_are_compared_without_recursion() -> None:
    schema = {"allOf": [{"x-a": nested(DEEP)}, {"x-a": nested(DEEP)}]}
    to_gemini_schema(schema, where="p", target="openapi")  # equal: no note, no RecursionError
    notes: list[str] = []
    other = {"allOf": [{"x-a": nested(DEEP)}, {"x-a": nested(DEEP, 2)}]}
    to_gemini_schema(other, where="p", target="openapi", notes=notes)
    assert notes == ["p.allOf: branches disagree on x-a: the first value is kept"]


def test_the_iterative_helpers_agree_with_python() -> None:
    values = [{"b": [1, 2.0, {"c": None}], "a": "x"}, [True, {}, []], "s", 1, None]
    for value in values:
        assert copy_json(value, "w") == value
        assert json_equal(value, json.loads(json.dumps(value)))
        assert fingerprint(value) == fingerprint(json.loads(json.dumps(value)))
    assert json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1.0})
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1.0})
    assert not json_equal([1, [2]], [1, [3]])
    assert fingerprint([1, [2]]) != fingerprint([1, [2], []])
    assert fingerprint(["[", 1]) != fingerprint([[1]])
    assert json_size({"ab": ["cd", 1]}) == 1 + (1 + 2) + 1 + (1 + 2) + 1
    original = {"a": [{"b": 1}]}
    copied = copy_json(original, "w")
    copied["a"][0]["b"] = 2
    assert original == {"a": [{"b": 1}]}
    check_depth(nested(MAX_JSON_DEPTH), "w")
    with pytest.raises(InvalidRequestError):
        check_depth(nested(MAX_JSON_DEPTH + 1), "w")


def test_a_cycle_is_refused_as_too_deep() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(InvalidRequestError):
        copy_json(cycle, "w")


# -- amplification --------------------------------------------------------------------------------


def assistant_with_images(entries: list[dict[str, Any]], url: str) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "user", "content": "draw"},
            {
                "role": "assistant",
                "content": "here",
                "images": [{"type": "image_url", "image_url": {"url": url}}],
                "extra_content": {"google": {"parts": entries}},
            },
        ]
    }


def test_an_image_is_given_back_once() -> None:
    entry = {"part": {"inlineData": {"mimeType": "image/png"}}, "image_index": 0}
    body = assistant_with_images([entry], "data:image/png;base64,iVBO")
    parts = translate(body)["contents"][1]["parts"]
    assert {"inlineData": {"mimeType": "image/png", "data": "iVBO"}} in parts
    # a thousand parts naming one (big) image would send it a thousand times
    error = refused(assistant_with_images([entry] * 1000, "data:image/png;base64," + "A" * 10**6))
    assert error.where == "messages[1].extra_content.google.parts[1].image_index"


def test_an_image_url_that_is_not_base64_is_refused_where_it_is() -> None:
    entry = {"part": {"inlineData": {"mimeType": "image/png"}}, "image_index": 0}
    error = refused(assistant_with_images([entry], "data:image/png,raw"))
    assert error.where == "messages[1].images[0].image_url.url"


def test_a_ref_inlined_thousands_of_times_hits_the_size_budget() -> None:
    fat = {"type": "string", "description": "x" * 100_000}
    properties = {f"p{i}": {"$ref": "#/$defs/Fat"} for i in range(1000)}
    schema = {"$defs": {"Fat": fat}, "type": "object", "properties": properties}
    with pytest.raises(InvalidRequestError) as caught:
        to_gemini_schema(schema, where="p", target="openapi")
    assert "schema too large for Gemini" in caught.value.reason
    # the same schema passes through as JSON Schema, $ref kept: nothing is copied
    out = to_gemini_schema(schema, where="p", target="json_schema")
    assert out["properties"]["p0"] == {"$ref": "#/$defs/Fat"}
    # a few uses are fine
    few = {**schema, "properties": {f"p{i}": {"$ref": "#/$defs/Fat"} for i in range(5)}}
    assert to_gemini_schema(few, where="p", target="openapi")["properties"]["p4"] == {
        "type": "STRING",
        "description": "x" * 100_000,
    }


def test_a_fat_ref_target_hits_the_size_budget_quickly() -> None:
    fat = {"type": "string", **{f"k{i}": i for i in range(10_000)}}
    properties = {f"p{i}": {"$ref": "#/$defs/Fat"} for i in range(1000)}
    schema = {"$defs": {"Fat": fat}, "type": "object", "properties": properties}
    with pytest.raises(InvalidRequestError, match="schema too large"):
        to_gemini_schema(schema, where="p", target="openapi", notes=[])


def test_notes_stop_at_the_cap_with_a_line_saying_so() -> None:
    notes: list[str] = []
    schema = {"type": "string", **{f"k{i}": i for i in range(500)}}
    to_gemini_schema(schema, where="p", target="openapi", notes=notes)
    assert len(notes) == MAX_SCHEMA_NOTES + 1
    assert notes[0] == "p.k0: dropped: not in Gemini's Schema"
    assert notes[-1] == f"p: more than {MAX_SCHEMA_NOTES} approximations; not all listed"


def test_a_union_notes_its_unknown_keywords_once_where_they_are() -> None:
    notes: list[str] = []
    schema = {
        "not": {"type": "null"},
        "minLength": 1,
        "x-ext": 1,
        "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}],
    }
    out = to_gemini_schema(schema, where="p", target="openapi", notes=notes)
    assert out == {
        "anyOf": [{"type": "STRING", "minLength": 1}, {"type": "INTEGER"}, {"type": "BOOLEAN"}]
    }
    assert notes == ["p.not: dropped: not in Gemini's Schema"]


def test_all_of_unites_properties_and_required_as_before() -> None:
    schema = {
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "allOf": [
            {"properties": {"b": {"type": "integer"}, "a": {"type": "integer"}}, "required": ["b"]},
            {"properties": {"c": {"type": "boolean"}}, "required": ["a", "c", "c"]},
        ],
    }
    out = to_gemini_schema(schema, where="p", target="openapi")
    assert list(out["properties"]) == ["c", "b", "a"]  # a later branch's come first
    assert out["properties"]["a"] == {"type": "STRING"}  # an earlier one's schema wins
    assert out["required"] == ["a", "b", "c"]
    assert schema["properties"] == {"a": {"type": "string"}}  # the input is untouched


def test_a_long_key_is_cut_in_where() -> None:
    name = "n" * 1_000_000
    schema = {"type": "object", "properties": {name: {"type": "string", "nope": 1}}}
    notes: list[str] = []
    to_gemini_schema(schema, where="p", target="openapi", notes=notes)
    assert notes == [f'p.properties["{"n" * 48}…"].nope: dropped: not in Gemini\'s Schema']
