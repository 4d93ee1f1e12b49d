"""FakeGemini answers structured output as Gemini does, on both APIs: JSON valid against the
schema a request asks for (``responseJsonSchema``, ``responseSchema``, Interactions
``response_format``), a JSON object in JSON mode, Google's 400 for a schema too complex to
serve; and a scenario file answers Interactions creates too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from rxgem import samples
from rxgem.testing import FakeGemini
from rxgem.testing._fake_scenarios import choose_scenario

KEY = {"x-goog-api-key": "test-key"}
MODEL = "gemini-3-flash-preview"
HI = {"role": "user", "parts": [{"text": "Tell me about Ada."}]}

# What openai's SDK sends for a Pydantic model (``to_strict_json_schema``): $defs and $ref,
# an enum, a nested model in a list, an optional field, bounds.
PERSON: dict[str, Any] = {
    "$defs": {
        "Role": {"enum": ["engineer", "manager"], "title": "Role", "type": "string"},
        "Address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postal_code": {"type": "string", "minLength": 5, "maxLength": 10},
            },
            "required": ["street", "city", "postal_code"],
            "additionalProperties": False,
        },
    },
    "type": "object",
    "title": "Person",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "email": {"anyOf": [{"type": "string", "format": "email"}, {"type": "null"}]},
        "role": {"$ref": "#/$defs/Role"},
        "addresses": {"type": "array", "items": {"$ref": "#/$defs/Address"}, "minItems": 1},
        "scores": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "email", "role", "addresses", "scores", "active"],
    "additionalProperties": False,
}
TREE: dict[str, Any] = {  # recursion that must end: children may be empty
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {
                "label": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
            "required": ["label", "children"],
        }
    },
    "$ref": "#/$defs/Node",
}
CHAIN: dict[str, Any] = {  # recursion that ends with null
    "$defs": {
        "Link": {
            "type": "object",
            "properties": {
                "value": {"type": "integer"},
                "next": {"anyOf": [{"$ref": "#/$defs/Link"}, {"type": "null"}]},
            },
            "required": ["value", "next"],
        }
    },
    "$ref": "#/$defs/Link",
}
SHAPES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "point": {
            "type": "array",
            "prefixItems": [{"type": "number"}, {"type": "string"}],
            "items": False,
            "minItems": 2,
        },
        "merged": {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer", "multipleOf": 7}}, "required": ["b"]},
            ]
        },
        "extra": {
            "type": "object",
            "properties": {},
            "required": ["anything"],
            "additionalProperties": {"type": "integer"},
        },
        "either": {"anyOf": [{"type": "null"}, {"type": "string", "enum": ["x", "y"]}]},
        "kinds": {"type": ["string", "null"], "format": "date"},
    },
    "required": ["point", "merged", "extra", "either", "kinds"],
}
COLOR: dict[str, Any] = {"type": "string", "enum": ["red", "green"]}
SCHEMAS = {"person": PERSON, "tree": TREE, "chain": CHAIN, "shapes": SHAPES, "color": COLOR}

# Gemini's own OpenAPI subset (``responseSchema``): upper-case types, nullable, int64 as
# strings, propertyOrdering.
RECIPE: dict[str, Any] = {
    "type": "OBJECT",
    "properties": {
        "recipe_name": {"type": "STRING"},
        "servings": {"type": "INTEGER", "minimum": 1},
        "difficulty": {"type": "STRING", "format": "enum", "enum": ["easy", "hard"]},
        "ingredients": {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": "2"},
        "notes": {"type": "STRING", "nullable": True},
    },
    "required": ["recipe_name", "servings", "difficulty", "ingredients"],
    "propertyOrdering": ["servings", "recipe_name", "difficulty", "ingredients", "notes"],
}


def as_json_schema(schema: Any) -> Any:
    """Gemini's OpenAPI schema as the JSON Schema a validator reads."""
    if isinstance(schema, list):
        return [as_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: as_json_schema(v) for k, v in schema.items() if k != "propertyOrdering"}
    if isinstance(out.get("type"), str):
        out["type"] = out["type"].lower()
        if out.pop("nullable", False):
            out["type"] = [out["type"], "null"]
    for key in ("minItems", "maxItems"):
        if isinstance(out.get(key), str):
            out[key] = int(out[key])
    if out.get("format") == "enum":
        del out["format"]
    return out


def validate(value: Any, schema: Any) -> None:
    jsonschema = pytest.importorskip(
        "jsonschema", reason="jsonschema is missing (pip install jsonschema)"
    )
    jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    ).validate(value)


def sse_json(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith(b"data:")]


def post(fake: FakeGemini, body: Any, *, stream: bool = True, model: str = MODEL) -> httpx.Response:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return httpx.post(f"{fake.base_url}/models/{model}:{method}", json=body, headers=KEY)


def create(fake: FakeGemini, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{fake.base_url}/interactions", json=body, headers=KEY)


def texts(events: list[dict[str, Any]], candidate: int = 0) -> list[str]:
    """The answer's text parts (thoughts left out), event by event."""
    out = []
    for event in events:
        for entry in event.get("candidates") or ():
            if entry.get("index", 0) == candidate:
                parts = (entry.get("content") or {}).get("parts") or ()
                out += [p["text"] for p in parts if "text" in p and not p.get("thought")]
    return out


def asking(schema: Any = None, *, key: str = "responseJsonSchema", **more: Any) -> dict[str, Any]:
    config: dict[str, Any] = {"responseMimeType": "application/json", **more}
    if schema is not None:
        config[key] = schema
    return {"contents": [HI], "generationConfig": config}


def json_format(schema: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "text", "mime_type": "application/json"}
    if schema is not None:
        spec["schema"] = schema
    return spec


def stream_events_are_geminis(events: list[dict[str, Any]]) -> None:
    genai = pytest.importorskip(
        "google.genai.types", reason="google-genai is missing (pip install google-genai)"
    )
    for event in events:
        genai.GenerateContentResponse.model_validate(event)


def interaction_events_are_googles(body: bytes) -> list[dict[str, Any]]:
    genai_types = pytest.importorskip(
        "google.genai._gaos.types.interactions",
        reason="google-genai is missing (pip install google-genai)",
    )
    pydantic = pytest.importorskip(
        "pydantic", reason="pydantic is missing (pip install google-genai, which brings it)"
    )
    events = sse_json(body.replace(b"data: [DONE]", b""))
    for event in events:
        pydantic.TypeAdapter(genai_types.InteractionSSEEvent).validate_python(event)
    return events


# -------------------------------------------------------------------- generateContent


@pytest.mark.parametrize("name", SCHEMAS)
def test_a_json_schema_gets_json_valid_against_it_in_pieces(name: str) -> None:
    schema = SCHEMAS[name]
    with FakeGemini(strict=True) as fake:
        answer = post(fake, asking(schema))
    assert answer.status_code == 200, answer.text
    events = sse_json(answer.content)
    stream_events_are_geminis(events)
    pieces = texts(events)
    assert len(pieces) >= 2 or len("".join(pieces)) < 3  # streamed like text
    validate(json.loads("".join(pieces)), schema)
    last = events[-1]
    assert last["candidates"][0]["finishReason"] == "STOP"
    assert last["usageMetadata"]["candidatesTokenCount"] > 0


def test_the_values_are_plausible_and_fill_every_property() -> None:
    with FakeGemini(strict=True) as fake:
        whole = post(fake, asking(PERSON), stream=False).json()
    value = json.loads("".join(texts([whole])))
    assert list(value) == list(PERSON["properties"])  # the schema's order, none left out
    assert value["name"] == "Ada Lovelace"
    assert value["role"] == "engineer"
    assert "@" in value["email"]
    assert value["addresses"][0]["city"] == "Paris"
    assert 5 <= len(value["addresses"][0]["postal_code"]) <= 10
    assert all(0 <= score <= 1 for score in value["scores"])


def test_recursive_schemas_end() -> None:
    with FakeGemini() as fake:
        tree = json.loads("".join(texts(sse_json(post(fake, asking(TREE)).content))))
        chain = json.loads("".join(texts(sse_json(post(fake, asking(CHAIN)).content))))
    depth, node = 0, chain
    while node is not None:
        depth, node = depth + 1, node["next"]
    assert 1 <= depth <= 8
    assert isinstance(tree["children"], list)


@pytest.mark.parametrize("spelling", ["propertyOrdering", "property_ordering"])
def test_geminis_own_schema_form_is_answered_in_its_property_order(spelling: str) -> None:
    schema = {k if k != "propertyOrdering" else spelling: v for k, v in RECIPE.items()}
    with FakeGemini(strict=True) as fake:  # google-genai sends property_ordering
        for stream in (True, False):
            answer = post(fake, asking(schema, key="responseSchema"), stream=stream)
            assert answer.status_code == 200, answer.text
            events = sse_json(answer.content) if stream else [answer.json()]
            value = json.loads("".join(texts(events)))
            validate(value, as_json_schema(RECIPE))
            assert list(value)[:4] == ["servings", "recipe_name", "difficulty", "ingredients"]
            assert len(value["ingredients"]) >= 2


def test_snake_case_fields_ask_for_json_too() -> None:
    body = {
        "contents": [HI],
        "generation_config": {"response_mime_type": "application/json", "response_schema": COLOR},
    }
    with FakeGemini() as fake:
        value = json.loads("".join(texts(sse_json(post(fake, body).content))))
    assert value == "red"


def test_json_mode_without_a_schema_gets_a_json_object() -> None:
    with FakeGemini(strict=True) as fake:
        streamed = post(fake, asking())
        whole = post(fake, asking(), stream=False).json()
    value = json.loads("".join(texts(sse_json(streamed.content))))
    assert isinstance(value, dict)
    assert value
    assert json.loads("".join(texts([whole]))) == value


def test_text_x_enum_gets_one_of_the_enum() -> None:
    body = {
        "contents": [HI],
        "generationConfig": {"responseMimeType": "text/x.enum", "responseSchema": COLOR},
    }
    with FakeGemini(strict=True) as fake:
        whole = post(fake, body, stream=False).json()
    assert "".join(texts([whole])) == "red"


def test_thinking_comes_first_then_the_json() -> None:
    body = asking(PERSON, thinkingConfig={"includeThoughts": True})
    with FakeGemini(strict=True) as fake:
        events = sse_json(post(fake, body).content)
    parts = [p for e in events for p in e["candidates"][0]["content"]["parts"]]
    assert parts[0].get("thought") is True
    validate(json.loads("".join(texts(events))), PERSON)
    assert events[-1]["usageMetadata"]["thoughtsTokenCount"] > 0


def test_every_candidate_is_json() -> None:
    for schema in (None, PERSON):
        with FakeGemini(strict=True) as fake:
            events = sse_json(post(fake, asking(schema, candidateCount=3)).content)
        values = [json.loads("".join(texts(events, i))) for i in range(3)]
        for value in values:
            assert isinstance(value, dict)
            if schema is not None:
                validate(value, schema)
        finishes = [c.get("finishReason") for c in events[-1]["candidates"]]
        assert finishes == ["STOP"] * 3
        if schema is None:  # free JSON: the candidates differ, as in the text scenarios
            assert len({json.dumps(v) for v in values}) == 3


WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}
TOOLS = [{"functionDeclarations": [{"name": "get_weather", "parametersJsonSchema": WEATHER}]}]


def test_tools_are_called_first_then_the_json_answers() -> None:
    first = {**asking(PERSON), "tools": TOOLS}
    assert choose_scenario(first) == "tool-call"
    with FakeGemini(strict=True) as fake:
        called = sse_json(post(fake, first).content)
        (part,) = called[0]["candidates"][0]["content"]["parts"]
        assert part["functionCall"]["name"] == "get_weather"
        reply = {"name": "get_weather", "id": part["functionCall"].get("id"), "response": {"t": 1}}
        second = {
            **first,
            "contents": [
                HI,
                {"role": "model", "parts": [part]},
                {"role": "user", "parts": [{"functionResponse": reply}]},
            ],
        }
        assert choose_scenario(second) == "json"
        answered = sse_json(post(fake, second).content)
    validate(json.loads("".join(texts(answered))), PERSON)


def test_a_forced_json_scenario_answers_json() -> None:
    with FakeGemini(scenario="json") as fake:
        free = json.loads("".join(texts(sse_json(post(fake, {"contents": [HI]}).content))))
        shaped = json.loads("".join(texts(sse_json(post(fake, asking(COLOR)).content))))
    assert isinstance(free, dict)
    assert shaped == "red"


NESTED = {"type": "array", "minItems": 1000, "items": {"type": "string"}}
TOO_BIG: dict[str, Any] = {
    "type": "array",
    "minItems": 1000,
    "items": {"type": "array", "minItems": 1000, "items": NESTED},
}
ENDLESS: dict[str, Any] = {
    "$defs": {
        "N": {"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "required": ["n"]}
    },
    "$ref": "#/$defs/N",
}
FAN_OUT: dict[str, Any] = {  # 2**24 leaves: the work is bounded, not the schema's size
    "$defs": {
        **{
            f"L{i}": {
                "type": "object",
                "properties": {
                    "a": {"$ref": f"#/$defs/L{i + 1}"},
                    "b": {"$ref": f"#/$defs/L{i + 1}"},
                },
            }
            for i in range(24)
        },
        "L24": {"type": "string"},
    },
    "$ref": "#/$defs/L0",
}
GOOGLES_TOO_COMPLEX = "The specified schema produces a constraint that has too many states"


@pytest.mark.parametrize(
    "schema", [TOO_BIG, ENDLESS, FAN_OUT], ids=["too-big", "endless", "fan-out"]
)
@pytest.mark.parametrize("stream", [True, False])
def test_a_schema_too_complex_gets_googles_400(schema: Any, stream: bool) -> None:
    tool = [{"functionDeclarations": [{"name": "f", "parametersJsonSchema": schema}]}]
    with FakeGemini() as fake:
        refused = post(fake, asking(schema), stream=stream)
        called = post(fake, {"contents": [HI], "tools": tool}, stream=stream)
        created = create(
            fake,
            {
                "model": MODEL,
                "input": "Hi",
                "response_format": json_format(schema),
            },
        )
    # a tool's arguments fill only the required properties (else the first): the fan-out's
    # arguments are one chain of 24 objects, which Gemini would make too
    refusals = (refused, created) if schema is FAN_OUT else (refused, called, created)
    assert called.status_code == (200 if schema is FAN_OUT else 400)
    for answer in refusals:
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
        assert GOOGLES_TOO_COMPLEX in error["message"]
        assert len(answer.content) < 2000


def test_a_wide_schema_is_answered_whole() -> None:
    wide = {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string"} for i in range(5000)},
        "additionalProperties": False,
    }
    wide["required"] = list(wide["properties"])
    with FakeGemini() as fake:
        answer = post(fake, asking(wide), stream=False)
    assert answer.status_code == 200
    value = json.loads("".join(texts([answer.json()])))
    validate(value, wide)


# -------------------------------------------------------------------- Interactions


@pytest.mark.parametrize("name", SCHEMAS)
def test_an_interactions_response_format_gets_json_valid_against_it(name: str) -> None:
    schema = SCHEMAS[name]
    body = {"model": MODEL, "input": "Hi", "response_format": json_format(schema), "stream": True}
    with FakeGemini(strict=True) as fake:
        streamed = create(fake, body)
        whole = create(fake, {**body, "stream": False}).json()
    assert streamed.status_code == 200, streamed.text
    events = interaction_events_are_googles(streamed.content)
    deltas = [e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text"]
    assert len(deltas) >= 2 or len("".join(deltas)) < 3
    validate(json.loads("".join(deltas)), schema)
    assert events[-1]["interaction"]["status"] == "completed"
    (step,) = whole["steps"]
    assert json.loads(step["content"][0]["text"]) == json.loads("".join(deltas))


@pytest.mark.parametrize(
    "body",
    [
        {"response_format": json_format()},
        {"response_format": [json_format()]},
        {"response_mime_type": "application/json"},
    ],
    ids=["format", "list", "mime-type"],
)
def test_interactions_json_mode_gets_a_json_object(body: dict[str, Any]) -> None:
    with FakeGemini() as fake:
        whole = create(fake, {"model": MODEL, "input": "Hi", **body}).json()
    (step,) = whole["steps"]
    assert isinstance(json.loads(step["content"][0]["text"]), dict)


def test_an_interactions_list_of_formats_and_thoughts() -> None:
    body = {
        "model": MODEL,
        "input": "Hi",
        "response_format": [json_format(PERSON)],
        "generation_config": {"thinking_summaries": "auto"},
    }
    with FakeGemini(strict=True) as fake:
        whole = create(fake, body).json()
    assert [s["type"] for s in whole["steps"]] == ["thought", "model_output"]
    validate(json.loads(whole["steps"][1]["content"][0]["text"]), PERSON)


def test_interactions_call_the_tool_first_then_answer_json() -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    body = {"model": MODEL, "input": "Hi", "tools": tools, "response_format": json_format(PERSON)}
    with FakeGemini(strict=True) as fake:
        called = create(fake, body).json()
        call = next(s for s in called["steps"] if s["type"] == "function_call")
        result = {"type": "function_result", "name": "get_weather", "call_id": call["id"]}
        answered = create(
            fake,
            {
                **body,
                "previous_interaction_id": called["id"],
                "input": [{**result, "result": "ok"}],
            },
        ).json()
    assert called["status"] == "requires_action"
    (step,) = answered["steps"]
    validate(json.loads(step["content"][0]["text"]), PERSON)


# -------------------------------------------------------------------- files on Interactions


def write_script(tmp_path: Path, objects: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(json.dumps(o) for o in objects))
    return path


def parts_event(*parts: dict[str, Any], **more: Any) -> dict[str, Any]:
    candidate = {"content": {"role": "model", "parts": list(parts)}, "index": 0}
    candidate.update({k: v for k, v in more.items() if k == "finishReason"})
    out: dict[str, Any] = {"candidates": [candidate]}
    out.update({k: v for k, v in more.items() if k != "finishReason"})
    return out


def test_a_script_answers_interactions_with_its_thoughts_text_and_usage(tmp_path: Path) -> None:
    path = write_script(
        tmp_path,
        [
            parts_event({"text": "Weighing it.", "thought": True, "thoughtSignature": "c2lnLTE="}),
            parts_event({"text": "From a "}),
            parts_event(
                {"text": "file."},
                finishReason="STOP",
                usageMetadata={
                    "promptTokenCount": 5,
                    "candidatesTokenCount": 3,
                    "thoughtsTokenCount": 2,
                    "totalTokenCount": 10,
                },
            ),
        ],
    )
    body = {"model": MODEL, "input": "Hi", "stream": True}
    with FakeGemini(scenario=path, strict=True) as fake:
        streamed = create(fake, body)
        whole = create(fake, {**body, "stream": False}).json()
    events = interaction_events_are_googles(streamed.content)
    deltas = [e["delta"] for e in events if e["event_type"] == "step.delta"]
    assert [d for d in deltas if d["type"] == "text"] == [
        {"type": "text", "text": "From a "},
        {"type": "text", "text": "file."},
    ]
    assert whole["steps"] == [
        {
            "type": "thought",
            "summary": [{"type": "text", "text": "Weighing it."}],
            "signature": "c2lnLTE=",
        },
        {"type": "model_output", "content": [{"type": "text", "text": "From a file."}]},
    ]
    assert whole["status"] == "completed"
    assert whole["usage"]["total_input_tokens"] == 5
    assert whole["usage"]["total_output_tokens"] == 3
    assert whole["usage"]["total_thought_tokens"] == 2


def test_a_script_s_calls_become_call_steps_with_their_signature(tmp_path: Path) -> None:
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "c-7"}
    path = write_script(
        tmp_path,
        [
            parts_event(
                {"functionCall": call, "thoughtSignature": "c2lnLTI="},
                {"functionCall": {"name": "get_time", "args": {}}},
                finishReason="STOP",
            )
        ],
    )
    with FakeGemini(scenario=path, strict=True) as fake:
        whole = create(fake, {"model": MODEL, "input": "Hi"}).json()
        results = [
            {"type": "function_result", "name": s["name"], "call_id": s["id"], "result": "ok"}
            for s in whole["steps"]
            if s["type"] == "function_call"
        ]
        again = create(
            fake, {"model": MODEL, "input": results, "previous_interaction_id": whole["id"]}
        ).json()
    assert whole["status"] == "requires_action"
    thought, first, second = whole["steps"]
    assert thought == {"type": "thought", "signature": "c2lnLTI="}
    assert first == {
        "type": "function_call",
        "id": "c-7",
        "name": "get_weather",
        "arguments": {"city": "Paris"},
    }
    assert second["name"] == "get_time"
    assert second["id"] not in ("", "c-7")
    later = [s["id"] for s in again["steps"] if s["type"] == "function_call"]
    assert second["id"] not in later  # a conversation never repeats a call id it made up


def test_a_capture_answers_interactions_with_its_text(tmp_path: Path) -> None:
    path = tmp_path / "text.sse"
    path.write_bytes(samples.read("text"))
    expected = "".join(texts(sse_json(samples.read("text"))))
    with FakeGemini(scenario=path) as fake:
        streamed = create(fake, {"model": MODEL, "input": "Hi", "stream": True})
    events = interaction_events_are_googles(streamed.content)
    deltas = [e["delta"]["text"] for e in events if e.get("delta", {}).get("type") == "text"]
    assert "".join(deltas) == expected
    assert len(deltas) == 5  # one delta per event, as captured
    assert events[-1]["interaction"]["usage"]["total_input_tokens"] == 16


@pytest.mark.parametrize(
    ("objects", "status"),
    [
        ([parts_event({"text": "Cut"}, finishReason="MAX_TOKENS")], "incomplete"),
        ([parts_event({"text": "No"}, finishReason="SAFETY")], "failed"),
        ([{"promptFeedback": {"blockReason": "SAFETY"}}], "failed"),
        (
            [
                parts_event({"text": "Starts"}),
                {"error": {"code": 503, "message": "Overloaded.", "status": "UNAVAILABLE"}},
            ],
            "failed",
        ),
    ],
    ids=["max-tokens", "safety", "blocked", "error-mid-stream"],
)
def test_a_script_s_ending_becomes_the_run_s_status(
    tmp_path: Path, objects: list[dict[str, Any]], status: str
) -> None:
    with FakeGemini(scenario=write_script(tmp_path, objects)) as fake:
        streamed = create(fake, {"model": MODEL, "input": "Hi", "stream": True})
    events = interaction_events_are_googles(streamed.content)
    assert events[-1]["interaction"]["status"] == status
    if status == "failed":
        assert any(e["event_type"] == "error" for e in events)


def test_a_script_that_is_only_an_error_is_that_http_error(tmp_path: Path) -> None:
    error = {"code": 429, "message": "Quota exceeded.", "status": "RESOURCE_EXHAUSTED"}
    with FakeGemini(scenario=write_script(tmp_path, [{"error": error}])) as fake:
        refused = create(fake, {"model": MODEL, "input": "Hi", "stream": True})
    assert refused.status_code == 429
    assert refused.json()["error"] == error


def test_a_script_without_a_finish_stops_the_stream_short(tmp_path: Path) -> None:
    path = write_script(tmp_path, [parts_event({"text": "This stops"})])
    with FakeGemini(scenario=path) as fake:
        streamed = create(fake, {"model": MODEL, "input": "Hi", "stream": True})
    events = interaction_events_are_googles(streamed.content)
    assert events[-1]["event_type"] != "interaction.completed"
    assert b"[DONE]" not in streamed.content


# -------------------------------------------------------------------- tool modes of the same models


@pytest.mark.parametrize("stream", [True, False])
def test_a_model_offered_as_a_tool_is_called_whatever_its_property_names(stream: bool) -> None:
    # instructor's TOOLS modes offer the model as a tool: "name", "id", "args", "sig" are
    # properties like any other, not the fake's own keywords
    model = {
        "type": "object",
        "properties": {k: {"type": "string"} for k in ("name", "id", "args", "sig")},
        "required": ["name", "id", "args", "sig"],
    }
    tools = [{"functionDeclarations": [{"name": "Person", "parametersJsonSchema": model}]}]
    with FakeGemini(strict=True) as fake:
        answer = post(fake, {"contents": [HI], "tools": tools}, stream=stream)
    assert answer.status_code == 200
    events = sse_json(answer.content) if stream else [answer.json()]
    (part,) = events[0]["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["name"] == "Person"
    assert part["functionCall"]["args"]["name"] == "Ada Lovelace"
    validate(part["functionCall"]["args"], model)
