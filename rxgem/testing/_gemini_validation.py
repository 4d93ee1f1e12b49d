"""What Gemini refuses in a ``generateContent`` request, checked without a network (sans-IO).

:func:`gemini_request_problems` reads a request body the way Google's front end does and
returns what it would answer with a 400, one message per problem, worded like Google's
own; :func:`invalid_argument` makes the error object of those messages. ``FakeGemini``'s
strict mode (``FakeGemini(..., strict=True)``) answers with it instead of the queued
response.

Google checks a request in three stages and stops at the first that fails; so does
:func:`gemini_request_problems` (it returns the problems of that stage only):

1. *Parsing* the JSON into the request proto. A field the proto does not have is refused
   (``Invalid JSON payload received. Unknown name "additionalProperties" at
   'tools[0].function_declarations[0].parameters': Cannot find field.``): in a
   ``parameters``/``response``/``responseSchema`` schema (Gemini's OpenAPI subset), any
   keyword but the ``Schema`` fields (``additionalProperties``, ``$ref``, ``$defs``,
   ``const``, ``oneOf``, ...); on Gemini 2.x (and older), the ``id`` of a
   ``functionCall``/``functionResponse``. A list where one value goes (``"type": ["string",
   "null"]``) is refused as ``Proto field is not repeating, cannot start list.``. Paths name
   a ``properties`` entry by its position (``properties[2].value``), as Google does.
2. *Field checks*, one ``* GenerateContentRequest.<path>: <what>`` line each (paths name
   ``properties`` entries by name): ``contents`` empty, a content without ``parts``, a
   ``functionCall``/``functionResponse`` without a name, an invalid function name,
   ``required`` naming a property that is not there, an ``ARRAY`` without ``items``,
   ``parameters`` and ``parametersJsonSchema`` both set (this one's wording is ours:
   no capture of Google's was at hand).
3. *Conversation checks*, one sentence, Google's (the first problem found is the message):
   a role other than ``user``/``model``; a first content that is not the user's; a
   ``model`` content with N ``functionCall`` parts not followed by a ``user`` content with
   exactly N ``functionResponse`` parts, of the calls' names (and ids, when the calls have
   ids), in order; function responses that answer no function call turn; on Gemini 3, a
   step of the current turn (every content after the last ``user`` content holding more
   than function responses) whose first ``functionCall`` part has no ``thoughtSignature``.

The model decides the version rules: a name starting with ``gemini-3`` (or a later major
version) gets the signature rule, one starting with ``gemini-2`` (or ``gemini-1``) the
``id`` rule, any other name (``gemini-flash-latest``) neither. Here a signature is not
checked beyond being a non-empty string (this module cannot know who issued it), so Google's
placeholder ``"skip_thought_signature_validator"`` passes, as it does at Google; a strict
FakeGemini also judges each signature against the ones it issued
(:mod:`._fake_signatures`: ``Corrupted thought signature.``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Final

__all__ = [
    "MAX_CANDIDATES",
    "candidate_count_problems",
    "gemini_request_problems",
    "invalid_argument",
]

MAX_CANDIDATES: Final = 8
"""The most candidates (``candidateCount``) Gemini makes for one request."""
_MAJOR: Final = re.compile(r"(?:models/)?gemini-(\d+)")
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")
_TYPES: Final = frozenset(
    {"TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
)
# The fields of the Gemini API's Schema (v1beta), by their JSON names (camelCase, and the
# snake_case proto names the parser takes too) → the proto name used in Google's paths.
_CAMEL_FIELDS: Final = [
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
]


def _snake(name: str) -> str:
    return re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), name)


_SCHEMA_FIELDS: Final = {
    **{name: _snake(name) for name in _CAMEL_FIELDS},
    **{_snake(name): _snake(name) for name in _CAMEL_FIELDS},
}
_STRING_LISTS: Final = frozenset({"enum", "required", "property_ordering"})
_SCHEMA_TYPE: Final = "type.googleapis.com/google.ai.generativelanguage.v1beta.Schema"
_TYPE_ENUM: Final = "type.googleapis.com/google.ai.generativelanguage.v1beta.Type"

_SIGNATURE_MISSING: Final = (
    "Function call is missing a thought_signature in functionCall parts. This is required"
    " for tools to work correctly, and missing thought_signature may lead to degraded model"
    " performance. Additional data, function call `default_api:{name}` , position {position}."
    " Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more"
    " details."
)
_RESPONSE_COUNT: Final = (
    "Please ensure that the number of function response parts is equal to the number of"
    " function call parts of the function call turn."
)
_RESPONSE_MATCH: Final = (
    "Please ensure that the function response parts answer the function call parts of the"
    " function call turn, in order. Additional data, function response `{got}` , position"
    " {position}, part {part}, answers function call `{want}`."
)
_RESPONSE_TURN: Final = (
    "Please ensure that function response turn comes immediately after a function call turn."
)
_CALL_TURN: Final = (
    "Please ensure that function call turn comes immediately after a user turn or after a"
    " function response turn."
)
_ALTERNATE: Final = "Please ensure that multiturn requests alternate between user and model."
_ROLE: Final = "Please use a valid role: user, model."
_BAD_NAME: Final = (
    "[FIELD_INVALID] Invalid function name. Must start with a letter or an underscore. Must be"
    " a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a"
    " maximum length of 64."
)


def gemini_request_problems(body: Any, *, model: str) -> list[str]:
    """What Gemini would refuse in this ``generateContent`` request body (``[]``: nothing).

    Args:
        body: the request: its JSON bytes (as sent), or the parsed JSON value.
        model: the model it goes to, as in the URL (``gemini-3-pro-preview``; a
            ``models/`` prefix is allowed): it picks the version rules.

    Returns:
        One message per problem, worded like Google's, all of the first stage that fails
        (see the module's documentation); :func:`invalid_argument` makes them the error
        Google sends.
    """
    if isinstance(body, bytes | bytearray | memoryview):
        try:
            body = json.loads(bytes(body))
        except (ValueError, UnicodeDecodeError):
            return ["Invalid JSON payload received. Unexpected token."]
    if type(body) is not dict:
        return [f"Invalid JSON payload received. Expected an object, got {_show(body)}."]
    found = _MAJOR.match(model)
    major = int(found.group(1)) if found else None
    for stage in (_parse_stage, _field_stage, _conversation_stage):
        problems = candidate_count_problems(body) if stage is _conversation_stage else []
        problems = problems or stage(body, major)
        if problems:
            return problems
    return []


def candidate_count_problems(body: Any) -> list[str]:
    """What Gemini says of a ``generationConfig.candidateCount`` outside 1 to
    :data:`MAX_CANDIDATES` (``[]``: nothing): its range sentence (worded like Vertex AI's;
    no capture of the Gemini API's was at hand), or for a value no ``int32`` holds, the
    parser's complaint. FakeGemini checks this even when not strict: it answers every
    candidate asked for, and a fake must not make more than Gemini would."""
    config = _dict(_dict(body).get("generationConfig"))
    count = config.get("candidateCount", config.get("candidate_count"))
    if type(count) is not int or 1 <= count <= MAX_CANDIDATES:
        return []
    if not -(2**31) <= count < 2**31:
        shown = str(count)
        shown = shown if len(shown) <= 24 else f"{shown[:20]}..."
        return [
            "Invalid JSON payload received. Invalid value at"
            f" 'generation_config.candidate_count' (TYPE_INT32), {shown}"
        ]
    return [
        f"Unable to submit request because it has a candidateCount value of {count} but the"
        f" supported range is from 1 (inclusive) to {MAX_CANDIDATES + 1} (exclusive). Update"
        " the value and try again."
    ]


def invalid_argument(problems: Sequence[str]) -> dict[str, Any]:
    """Google's error object for ``problems`` (what :func:`gemini_request_problems` returned).

    ``{"code": 400, "message": ..., "status": "INVALID_ARGUMENT"}``: parse problems joined
    by newlines, field problems as ``* ...`` lines (each ending with a newline), and of
    conversation problems the first, as Google reports them.
    """
    if not problems:
        raise ValueError("no problems: Gemini would accept this request")
    first = problems[0]
    if first.startswith("* "):
        message = "".join(f"{problem}\n" for problem in problems)
    elif first.startswith("Invalid "):
        message = "\n".join(problems)
    else:
        message = first
    return {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}


# --------------------------------------------------------------------------- helpers


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _dict(value: Any) -> dict[str, Any]:
    return value if type(value) is dict else {}


def _get(holder: dict[str, Any], camel: str) -> Any:
    """A field by its JSON name or its proto (snake_case) name."""
    value = holder.get(camel)
    return holder.get(_snake(camel)) if value is None else value


def _contents(body: dict[str, Any]) -> list[Any]:
    return _list(body.get("contents"))


def _parts(content: Any) -> list[dict[str, Any]]:
    return [part for part in _list(_dict(content).get("parts")) if type(part) is dict]


def _calls(content: Any) -> list[tuple[int, dict[str, Any]]]:
    """``(part index, functionCall)`` of each call part of a content."""
    return [
        (j, _dict(_get(part, "functionCall")))
        for j, part in enumerate(_parts(content))
        if _get(part, "functionCall") is not None
    ]


def _responses(content: Any) -> list[tuple[int, dict[str, Any]]]:
    return [
        (j, _dict(_get(part, "functionResponse")))
        for j, part in enumerate(_parts(content))
        if _get(part, "functionResponse") is not None
    ]


def _declarations(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(path, declaration)`` of every function declaration, paths as Google writes them."""
    out = []
    for t, tool in enumerate(_list(body.get("tools"))):
        for d, declaration in enumerate(_list(_get(_dict(tool), "functionDeclarations"))):
            if type(declaration) is dict:
                out.append((f"tools[{t}].function_declarations[{d}]", declaration))
    return out


def _schemas(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(path, schema)`` of every schema in Gemini's OpenAPI subset."""
    out: list[tuple[str, Any]] = []
    for path, declaration in _declarations(body):
        for camel in ("parameters", "response"):
            schema = declaration.get(camel)
            if schema is not None:
                out.append((f"{path}.{camel}", schema))
    config = _dict(_get(body, "generationConfig"))
    schema = _get(config, "responseSchema")
    if schema is not None:
        out.append(("generation_config.response_schema", schema))
    return out


# --------------------------------------------------------------------------- 1. parsing


def _unknown(name: str, path: str) -> str:
    return (
        f"Invalid JSON payload received. Unknown name {_show(name)} at '{path}': Cannot find field."
    )


def _not_repeating(name: str, path: str) -> str:
    return (
        f"Invalid JSON payload received. Unknown name {_show(name)} at '{path}':"
        " Proto field is not repeating, cannot start list."
    )


def _parse_stage(body: dict[str, Any], major: int | None) -> list[str]:
    problems: list[str] = []
    if major is not None and major < 3:  # Gemini 2.x has no call ids
        for i, content in enumerate(_contents(body)):
            for kind, pairs in (("function_call", _calls), ("function_response", _responses)):
                for j, value in pairs(content):
                    if "id" in value:
                        problems.append(_unknown("id", f"contents[{i}].parts[{j}].{kind}"))
    for path, schema in _schemas(body):
        _parse_schema(schema, path, problems)
    return problems


def _parse_schema(node: Any, path: str, problems: list[str]) -> None:
    if type(node) is not dict:
        problems.append(f"Invalid value at '{path}' ({_SCHEMA_TYPE}), {_show(node)}")
        return
    for key, value in node.items():
        name = _SCHEMA_FIELDS.get(key)
        if name is None:
            problems.append(_unknown(key, path))
        elif name == "type":
            if type(value) is list:
                problems.append(_not_repeating(key, path))
            elif type(value) is not str or value.upper() not in _TYPES:
                problems.append(f"Invalid value at '{path}.type' ({_TYPE_ENUM}), {_show(value)}")
        elif name == "properties":
            if type(value) is not dict:
                problems.append(f"Invalid value at '{path}.properties' (map), {_show(value)}")
                continue
            for n, sub in enumerate(value.values()):
                _parse_schema(sub, f"{path}.properties[{n}].value", problems)
        elif name == "items":
            if type(value) is list:
                problems.append(_not_repeating(key, path))
            else:
                _parse_schema(value, f"{path}.items", problems)
        elif name == "any_of":
            if type(value) is not list:
                problems.append(f"Invalid value at '{path}.any_of' (list), {_show(value)}")
                continue
            for n, sub in enumerate(value):
                _parse_schema(sub, f"{path}.any_of[{n}]", problems)
        elif name in _STRING_LISTS:
            if type(value) is not list:
                problems.append(f"Invalid value at '{path}.{name}' (list), {_show(value)}")
                continue
            for n, item in enumerate(value):
                if type(item) is not str:
                    problems.append(
                        f"Invalid value at '{path}.{name}[{n}]' (TYPE_STRING), {_show(item)}"
                    )


# --------------------------------------------------------------------------- 2. field checks


def _field(path: str, what: str) -> str:
    return f"* GenerateContentRequest.{path}: {what}"


def _field_stage(body: dict[str, Any], major: int | None) -> list[str]:
    problems: list[str] = []
    contents = body.get("contents")
    if type(contents) is not list or not contents:
        problems.append(_field("contents", "contents is not specified"))
    for i, content in enumerate(_list(contents)):
        if not _parts(content):
            problems.append(_field(f"contents[{i}].parts", "contents.parts must not be empty."))
        for kind, pairs in (("function_call", _calls), ("function_response", _responses)):
            for j, value in pairs(content):
                name = value.get("name")
                if type(name) is not str or not name:
                    at = f"contents[{i}].parts[{j}].{kind}.name"
                    problems.append(_field(at, "Name cannot be empty."))
    for path, declaration in _declarations(body):
        name = declaration.get("name")
        if type(name) is not str or not _NAME.fullmatch(name):
            problems.append(_field(f"{path}.name", _BAD_NAME))
        if declaration.get("parameters") is not None and (
            _get(declaration, "parametersJsonSchema") is not None
        ):
            problems.append(
                _field(
                    f"{path}.parameters_json_schema",
                    "parameters_json_schema must not be set together with parameters.",
                )
            )
    for path, schema in _schemas(body):
        _check_schema(schema, path, problems)
    return problems


def _check_schema(node: Any, path: str, problems: list[str]) -> None:
    if type(node) is not dict:
        return
    kind = node.get("type")
    properties = _dict(node.get("properties"))
    if type(kind) is str and kind.upper() == "ARRAY" and node.get("items") is None:
        problems.append(_field(f"{path}.items", "missing field."))
    for n, name in enumerate(_list(node.get("required"))):
        if type(name) is str and name not in properties:
            problems.append(_field(f"{path}.required[{n}]", "property is not defined"))
    for name, sub in properties.items():
        _check_schema(sub, f"{path}.properties[{name}]", problems)
    if type(node.get("items")) is dict:
        _check_schema(node["items"], f"{path}.items", problems)
    for n, sub in enumerate(_list(_get(node, "anyOf"))):
        _check_schema(sub, f"{path}.any_of[{n}]", problems)


# --------------------------------------------------------------------------- 3. conversation


def _is_user_turn(content: Any) -> bool:
    """A ``user`` content that holds more than function responses (a new turn starts)."""
    parts = _parts(content)
    return _dict(content).get("role") == "user" and any(
        _get(part, "functionResponse") is None for part in parts
    )


def _conversation_stage(body: dict[str, Any], major: int | None) -> list[str]:
    contents = _contents(body)
    problems: list[str] = []
    if any(_dict(content).get("role") not in ("user", "model") for content in contents):
        problems.append(_ROLE)
    if contents and _dict(contents[0]).get("role") == "model":
        problems.append(_CALL_TURN if _calls(contents[0]) else _ALTERNATE)
    current = max((i + 1 for i, c in enumerate(contents) if _is_user_turn(c)), default=0)
    answered: set[int] = set()  # the contents that answer the call turn before them
    for i, content in enumerate(contents):
        role = _dict(content).get("role")
        calls = _calls(content) if role == "model" else []
        if calls:
            following = contents[i + 1] if i + 1 < len(contents) else None
            responses = _responses(following) if _dict(following).get("role") == "user" else []
            if responses:
                answered.add(i + 1)
            problems += _pairing(calls, responses, i + 1)
            if major is not None and major >= 3 and i >= current:
                signature = _get(_parts(content)[calls[0][0]], "thoughtSignature")
                if type(signature) is not str or not signature:
                    name = calls[0][1].get("name")
                    problems.append(_SIGNATURE_MISSING.format(name=name, position=i + 1))
        elif role == "user" and _responses(content) and i not in answered:
            problems.append(_RESPONSE_TURN)
    return problems


def _pairing(
    calls: list[tuple[int, dict[str, Any]]],
    responses: list[tuple[int, dict[str, Any]]],
    at: int,
) -> list[str]:
    """Problems of the responses (in content ``at``) to a call turn's calls."""
    if len(responses) != len(calls):
        return [_RESPONSE_COUNT]
    for (_, call), (j, response) in zip(calls, responses, strict=True):
        same_name = response.get("name") == call.get("name")
        same_id = "id" not in call or response.get("id") == call["id"]
        if not (same_name and same_id):
            got = response.get("name")
            if "id" in call:
                got = f"{got} (id {response.get('id')})"
                want = f"{call.get('name')} (id {call['id']})"
            else:
                want = str(call.get("name"))
            return [_RESPONSE_MATCH.format(got=got, want=want, position=at + 1, part=j)]
    return []
