"""FakeGemini answers as Gemini would: scenarios chosen by the request or forced, both APIs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from rxgem import Converter, RxGemError, samples
from rxgem.testing import (
    SCENARIOS,
    FakeGemini,
    FakeResponse,
    assert_openai_stream,
    gemini_request_problems,
    schema_value,
)
from rxgem.testing._fake_scenarios import choose_scenario, gemini_scenario, interaction_scenario

KEY = {"x-goog-api-key": "test-key"}
MODEL = "gemini-2.5-flash"
WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1},
        "hourly": {"type": "boolean"},
        "note": {"type": "string"},
    },
    "required": ["city", "unit", "days", "hourly"],
}
TOOLS = [{"functionDeclarations": [{"name": "get_weather", "parameters": WEATHER}]}]
HI = {"role": "user", "parts": [{"text": "Weather in Paris?"}]}


def sse_json(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[5:]) for line in body.splitlines() if line.startswith(b"data:")]


def chunks_of(body: bytes) -> tuple[list[Any], RxGemError | None]:
    converter = Converter(model=MODEL)
    out: list[Any] = []
    try:
        out += converter.feed(body)
        out += converter.close()
    except RxGemError as error:
        return out + list(error.chunks), error
    return out, None


# -------------------------------------------------------------------- choosing


@pytest.mark.parametrize(
    ("body", "scenario"),
    [
        ({"contents": [HI]}, "text"),
        ({"contents": [HI], "tools": TOOLS}, "tool-call"),
        (
            {
                "contents": [
                    HI,
                    {"role": "model", "parts": [{"functionCall": {"name": "get_weather"}}]},
                    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather"}}]},
                ],
                "tools": TOOLS,
            },
            "tool-answer",
        ),
        (
            {"contents": [HI], "generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
            "thinking",
        ),
        ({"model": MODEL, "input": "Hi"}, "text"),
        (
            {"model": MODEL, "input": "Hi", "tools": [{"type": "function", "name": "f"}]},
            "tool-call",
        ),
        (
            {
                "model": MODEL,
                "input": [{"type": "function_result", "name": "f", "call_id": "1", "result": "ok"}],
                "tools": [{"type": "function", "name": "f"}],
            },
            "tool-answer",
        ),
        (
            {"model": MODEL, "input": "Hi", "generation_config": {"thinking_summaries": "auto"}},
            "thinking",
        ),
        ("not a body", "text"),
    ],
)
def test_the_request_chooses_the_scenario(body: Any, scenario: str) -> None:
    assert choose_scenario(body) == scenario


ANSWERED = [
    HI,
    {"role": "model", "parts": [{"functionCall": {"name": "get_weather"}}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "get_weather"}}]},
]
RESULT = [{"type": "function_result", "name": "f", "call_id": "1", "result": "ok"}]


def _calling(mode: str, *names: str) -> dict[str, Any]:
    config: dict[str, Any] = {"mode": mode}
    if names:
        config["allowedFunctionNames"] = list(names)
    return {"functionCallingConfig": config}


@pytest.mark.parametrize(
    ("body", "scenario"),
    [
        # Gemini's ANY mode always calls, even after a result; NONE never does
        ({"contents": ANSWERED, "tools": TOOLS, "toolConfig": _calling("ANY")}, "tool-call"),
        ({"contents": [HI], "tools": TOOLS, "toolConfig": _calling("NONE")}, "text"),
        ({"contents": [HI], "tools": TOOLS, "toolConfig": _calling("AUTO")}, "tool-call"),
        ({"contents": ANSWERED, "tools": TOOLS, "toolConfig": _calling("AUTO")}, "tool-answer"),
        (
            {
                "model": MODEL,
                "input": RESULT,
                "tools": [{"type": "function", "name": "f"}],
                "generation_config": {"tool_choice": "any"},
            },
            "tool-call",
        ),
        (
            {
                "model": MODEL,
                "input": RESULT,
                "tools": [{"type": "function", "name": "f"}],
                "generation_config": {
                    "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["f"]}}
                },
            },
            "tool-call",
        ),
        (
            {
                "model": MODEL,
                "input": "Hi",
                "tools": [{"type": "function", "name": "f"}],
                "generation_config": {"tool_choice": "none"},
            },
            "text",
        ),
    ],
)
def test_a_forced_or_forbidden_tool_choice_is_followed(body: Any, scenario: str) -> None:
    assert choose_scenario(body) == scenario


@pytest.mark.parametrize("api", ["generateContent", "interactions"])
def test_a_call_names_a_function_the_request_allows(api: str) -> None:
    declarations = [{"name": "get_time"}, {"name": "get_weather", "parameters": WEATHER}]
    if api == "generateContent":
        body = {
            "contents": [HI],
            "tools": [{"functionDeclarations": declarations}],
            "toolConfig": _calling("ANY", "get_weather"),
        }
        events = sse_json(gemini_scenario("tool-call", body, model=MODEL))
        parts = [p for e in events for p in e["candidates"][0]["content"]["parts"]]
        names = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
    else:
        body = {
            "model": MODEL,
            "input": "Hi",
            "tools": [{"type": "function", **d} for d in declarations],
            "generation_config": {
                "tool_choice": {"allowed_tools": {"mode": "any", "tools": ["get_weather"]}}
            },
        }
        run = interaction_scenario("tool-call", body)
        names = [s.final["name"] for s in run.steps if s.final.get("type") == "function_call"]
    assert names == ["get_weather"]


def test_arguments_follow_the_schema() -> None:
    value = schema_value(WEATHER)
    assert value == {"city": "Paris", "unit": "celsius", "days": 3, "hourly": True}
    nested = {
        "type": "OBJECT",  # Gemini's own spelling
        "properties": {
            "tags": {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": 2},
            "size": {"type": ["null", "number"]},
            "mode": {"anyOf": [{"const": "fast"}, {"type": "string"}]},
        },
        "required": ["tags", "size", "mode"],
    }
    assert schema_value(nested) == {
        "tags": ["example tag", "example tag"],
        "size": 1.5,
        "mode": "fast",
    }
    jsonschema = pytest.importorskip(
        "jsonschema", reason="jsonschema is missing (pip install jsonschema)"
    )
    jsonschema.validate(value, WEATHER)


PLAUSIBLE: list[tuple[dict[str, Any], Any]] = [
    ({"type": "string", "enum": ["metric", "imperial"]}, "metric"),
    ({"type": "string", "examples": ["Lyon", "Nice"]}, "Lyon"),
    ({"type": "integer", "default": 7}, 7),
    ({"type": "string", "format": "date"}, "2025-06-15"),
    ({"type": "string", "format": "date-time"}, "2025-06-15T09:30:00Z"),
    ({"type": "string", "format": "email"}, "ada@example.com"),
    ({"type": "string", "format": "uri"}, "https://example.com"),
    ({"type": "string", "format": "uuid"}, "123e4567-e89b-12d3-a456-426614174000"),
]


@pytest.mark.parametrize(("schema", "expected"), PLAUSIBLE)
def test_arguments_take_the_schema_s_own_hints(schema: dict[str, Any], expected: Any) -> None:
    assert schema_value(schema, "anything") == expected


def test_arguments_are_plausible_for_their_names_and_in_range() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "country": {"type": "string"},
            "email": {"type": "string"},
            "website_url": {"type": "string"},
            "start_date": {"type": "string"},
            "latitude": {"type": "number", "minimum": -90, "maximum": 90},
            "limit": {"type": "integer", "minimum": 10, "maximum": 20},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5},
            "offset": {"type": "integer", "maximum": -4},
            "code": {"type": "string", "minLength": 12, "maxLength": 14},
            "tag": {"type": "string", "maxLength": 3},
        },
    }
    schema["required"] = list(schema["properties"])
    value = schema_value(schema)
    assert value["city"] == "Paris"
    assert value["country"] == "France"
    assert "@" in value["email"]
    assert value["website_url"].startswith("https://")
    assert value["start_date"] == "2025-06-15"
    assert value["latitude"] == 48.8566
    assert 10 <= value["limit"] <= 20
    assert 0 < value["ratio"] <= 0.5
    assert value["offset"] <= -4
    assert 12 <= len(value["code"]) <= 14
    assert len(value["tag"]) <= 3
    assert not any(value[name] == name for name in value)  # no echo of the property's name
    jsonschema = pytest.importorskip(
        "jsonschema", reason="jsonschema is missing (pip install jsonschema)"
    )
    jsonschema.validate(value, schema, format_checker=jsonschema.FormatChecker())


# -------------------------------------------------------------------- each scenario's stream


EXPECTED = {
    "text": ("stop", None),
    "thinking": ("stop", None),
    "tool-call": ("tool_calls", None),
    "parallel-calls": ("tool_calls", None),
    "tool-answer": ("stop", None),
    "json": ("stop", None),
    "code-execution": ("stop", None),
    "blocked": ("content_filter", None),
    "error-mid-stream": (None, "GeminiAPIError"),
    "truncated": (None, "TruncatedStreamError"),
}


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_scenario_is_a_valid_gemini_stream(name: str) -> None:
    body = {"contents": [HI], "tools": TOOLS}
    sse = gemini_scenario(name, body, model=MODEL)
    events = sse_json(sse)
    assert events
    genai = pytest.importorskip(
        "google.genai.types", reason="google-genai is missing (pip install google-genai)"
    )
    for event in events:
        if "error" not in event:
            genai.GenerateContentResponse.model_validate(event)
    chunks, error = chunks_of(sse)
    finish, failure = EXPECTED[name]
    assert (type(error).__name__ if error else None) == failure
    result = assert_openai_stream(chunks, tools=["get_weather"], complete=error is None)
    if finish is not None:
        assert result["choices"][0]["finish_reason"] == finish
    if name in ("tool-call", "parallel-calls"):
        calls = result["choices"][0]["message"]["tool_calls"]
        assert len(calls) == (1 if name == "tool-call" else 2)
        for tool_call in calls:
            assert tool_call["function"]["name"] == "get_weather"
            assert json.loads(tool_call["function"]["arguments"]) == schema_value(WEATHER)


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_scenario_is_a_valid_interactions_run(name: str) -> None:
    genai_types = pytest.importorskip(
        "google.genai._gaos.types.interactions",
        reason="google-genai is missing (pip install google-genai)",
    )
    pydantic = pytest.importorskip(
        "pydantic", reason="pydantic is missing (pip install google-genai, which brings it)"
    )
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    create = {"model": MODEL, "input": "Hi", "tools": tools, "stream": True}
    with FakeGemini(interactions=[interaction_scenario(name, create)]) as fake:
        response = httpx.post(f"{fake.base_url}/interactions", json=create, headers=KEY)
    assert response.status_code == 200
    events = sse_json(response.content.replace(b"data: [DONE]", b""))
    assert events[0]["event_type"] == "interaction.created"
    for event in events:
        pydantic.TypeAdapter(genai_types.InteractionSSEEvent).validate_python(event)
    calls = [e["step"] for e in events if e.get("step", {}).get("type") == "function_call"]
    if name in ("tool-call", "parallel-calls"):
        assert len(calls) == (1 if name == "tool-call" else 2)
        assert calls[0]["name"] == "get_weather"
    if name == "truncated":
        assert events[-1]["event_type"] != "interaction.completed"


# -------------------------------------------------------------------- served


def post(fake: FakeGemini, body: Any, *, model: str = MODEL, stream: bool = True) -> httpx.Response:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    return httpx.post(f"{fake.base_url}/models/{model}:{method}", json=body, headers=KEY)


def test_a_tool_round_trip_by_request_alone() -> None:
    with FakeGemini(strict=True) as fake:
        first = post(fake, {"contents": [HI], "tools": TOOLS})
        (part,) = sse_json(first.content)[0]["candidates"][0]["content"]["parts"]
        args = part["functionCall"]["args"]
        reply = {"name": "get_weather", "response": {"temperature": 21}}
        turn = [
            HI,
            {"role": "model", "parts": [part]},
            {"role": "user", "parts": [{"functionResponse": reply}]},
        ]
        second = post(fake, {"contents": turn, "tools": TOOLS})
    assert args == schema_value(WEATHER)
    said = "".join(
        p.get("text", "")
        for e in sse_json(second.content)
        for p in e["candidates"][0]["content"]["parts"]
    )
    assert "get_weather" in said
    assert '"temperature": 21' in said


def test_generate_content_answers_the_scenario_as_one_response() -> None:
    with FakeGemini(scenario="thinking") as fake:
        whole = post(fake, {"contents": [HI]}, stream=False).json()
        failed = FakeGemini(scenario="error-mid-stream")
        with failed:
            error = post(failed, {"contents": [HI]}, stream=False)
    parts = whole["candidates"][0]["content"]["parts"]
    assert parts[0]["thought"] is True
    assert whole["candidates"][0]["finishReason"] == "STOP"
    assert error.status_code == 503
    assert error.json()["error"]["status"] == "UNAVAILABLE"


@pytest.mark.parametrize("model", ["gpt-4o", "gemini-2.5-flahs"])
def test_unknown_models_get_geminis_404_on_every_route(model: str) -> None:
    with FakeGemini() as fake:
        answers = [
            post(fake, {"contents": [HI]}, model=model),
            post(fake, {"contents": [HI]}, model=model, stream=False),
            httpx.get(f"{fake.base_url}/models/{model}", headers=KEY),
            httpx.post(
                f"{fake.base_url}/interactions",
                json={"model": model, "input": "Hi"},
                headers=KEY,
            ),
        ]
    for answer in answers:
        assert answer.status_code == 404
        assert answer.json()["error"] == {
            "code": 404,
            "message": f"models/{model} is not found for API version v1beta.",
            "status": "NOT_FOUND",
        }


def test_explicit_responses_win_over_scenarios() -> None:
    with FakeGemini(b"data: {}\r\n\r\n", scenario="tool-call") as fake:
        answer = post(fake, {"contents": [HI], "tools": TOOLS}, model="m")
    assert answer.content == b"data: {}\r\n\r\n"
    with FakeGemini(FakeResponse(status=429, error={"code": 429})) as fake:
        assert post(fake, {"contents": [HI]}).status_code == 429


def test_a_forced_scenario_answers_every_request() -> None:
    with FakeGemini(scenario="parallel-calls") as fake:
        answer = post(fake, {"contents": [HI], "tools": TOOLS})
        plain = post(fake, {"contents": [HI]})  # no tools: a made-up one is called
    parts = sse_json(answer.content)[0]["candidates"][0]["content"]["parts"]
    assert [p["functionCall"]["name"] for p in parts] == ["get_weather", "get_weather"]
    assert "functionCall" in sse_json(plain.content)[0]["candidates"][0]["content"]["parts"][0]


def test_interactions_answer_from_scenarios_by_default() -> None:
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    with FakeGemini() as fake:
        called = httpx.post(
            f"{fake.base_url}/interactions",
            json={"model": MODEL, "input": "Hi", "tools": tools},
            headers=KEY,
        ).json()
        call = next(s for s in called["steps"] if s["type"] == "function_call")
        result = {"type": "function_result", "name": "get_weather", "call_id": call["id"]}
        answered = httpx.post(
            f"{fake.base_url}/interactions",
            json={
                "model": MODEL,
                "previous_interaction_id": called["id"],
                "input": [{**result, "result": "sunny"}],
                "tools": tools,
            },
            headers=KEY,
        ).json()
    assert called["status"] == "requires_action"
    assert call["arguments"] == schema_value(WEATHER)
    (step,) = answered["steps"]
    assert "sunny" in step["content"][0]["text"]


def test_interactions_calls_get_ids_not_used_before_in_the_conversation() -> None:
    """Google never gives two calls one id, and a client that looks a result up by its
    call id (the Agents SDK for JS) mixes up turns that reuse one."""
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]

    def create(**body: Any) -> Any:
        url = f"{fake.base_url}/interactions"
        answer = httpx.post(url, json={"model": MODEL, "tools": tools, **body}, headers=KEY)
        return answer.json()

    def calls(interaction: Any) -> list[Any]:
        return [s for s in interaction["steps"] if s["type"] == "function_call"]

    with FakeGemini(scenario="parallel-calls") as fake:
        first = create(input="Hi")
        made = calls(first)
        results = [
            {"type": "function_result", "name": c["name"], "call_id": c["id"], "result": "ok"}
            for c in made
        ]
        stateless = create(input=[{"type": "user_input", "content": "Hi"}, *made, *results])
        chained = create(input=results, previous_interaction_id=first["id"])
    ids = [c["id"] for c in made]
    assert ids == ["call-1", "call-2"]
    assert [c["id"] for c in calls(stateless)] == ["call-3", "call-4"]
    assert [c["id"] for c in calls(chained)] == ["call-5", "call-6"]


def test_interactions_calls_of_two_conversations_get_different_ids() -> None:
    """Google's call ids are unique: what keys on them (rxgem's signature memory) must not
    see another conversation's call-1."""
    tools = [{"type": "function", "name": "get_weather", "parameters": WEATHER}]
    with FakeGemini(scenario="parallel-calls") as fake:
        ids = [
            step["id"]
            for _ in range(2)
            for step in httpx.post(
                f"{fake.base_url}/interactions",
                json={"model": MODEL, "tools": tools, "input": "Hi"},
                headers=KEY,
            ).json()["steps"]
            if step["type"] == "function_call"
        ]
    assert ids == ["call-1", "call-2", "call-3", "call-4"]


@pytest.mark.parametrize("form", ["sse", "json", "jsonl"])
def test_a_scenario_file_is_a_capture_or_a_script(tmp_path: Path, form: str) -> None:
    objects = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "From a file"}]}}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "."}]}, "finishReason": "STOP"}
            ]
        },
    ]
    path = tmp_path / f"answer.{form}"
    if form == "sse":
        path.write_bytes(b"".join(b"data: " + json.dumps(o).encode() + b"\n\n" for o in objects))
    elif form == "json":
        path.write_text(json.dumps(objects))
    else:
        path.write_text("\n".join(json.dumps(o) for o in objects))
    with FakeGemini(scenario=path) as fake:
        answer = post(fake, {"contents": [HI]})
    assert sse_json(answer.content) == objects


def test_a_bad_scenario_is_refused_at_once(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="GenerateContentResponse"):
        FakeGemini(scenario=tmp_path / "bad.json")
    with pytest.raises(ValueError, match="scenarios: text, thinking, tool-call"):
        FakeGemini(scenario="no-such-scenario")


# -------------------------------------------------------------------- candidateCount


@pytest.mark.parametrize("name", SCENARIOS)
def test_candidate_count_gives_that_many_candidates(name: str) -> None:
    body = {"contents": [HI], "tools": TOOLS, "generationConfig": {"candidateCount": 3}}
    sse = gemini_scenario(name, body, model=MODEL)
    genai = pytest.importorskip(
        "google.genai.types", reason="google-genai is missing (pip install google-genai)"
    )
    for event in sse_json(sse):
        if "error" not in event:
            genai.GenerateContentResponse.model_validate(event)
    chunks, error = chunks_of(sse)
    if EXPECTED[name][1] is None and name != "blocked":
        assert error is None
        result = assert_openai_stream(chunks, tools=["get_weather"])
        choices = result["choices"]
        assert [c["index"] for c in choices] == [0, 1, 2]
        assert {c["finish_reason"] for c in choices} == {EXPECTED[name][0]}
        contents = [c["message"].get("content") for c in choices]
        if contents[0]:
            assert "Answer 2: " in contents[1]
            assert contents[1].replace("Answer 2: ", "") == contents[0]
            assert len(set(contents)) == 3
        if name in ("tool-call", "parallel-calls"):
            for choice in choices:
                assert len(choice["message"]["tool_calls"]) == (1 if name == "tool-call" else 2)


def test_candidate_count_is_answered_by_generate_content_too() -> None:
    body = {"contents": [HI], "generationConfig": {"candidateCount": 2}}
    with FakeGemini(strict=True) as fake:
        whole = post(fake, body, stream=False).json()
        one = post(fake, {"contents": [HI]}, stream=False).json()
    genai = pytest.importorskip(
        "google.genai.types", reason="google-genai is missing (pip install google-genai)"
    )
    answer = genai.GenerateContentResponse.model_validate(whole)
    assert [c.index for c in answer.candidates or ()] == [0, 1]
    texts = ["".join(p.text or "" for p in c.content.parts or ()) for c in answer.candidates or ()]
    assert texts[1] == f"Answer 2: {texts[0]}"
    assert [c.finish_reason for c in answer.candidates or ()] == ["STOP", "STOP"]
    assert len(one["candidates"]) == 1


def test_scripts_and_files_keep_their_candidates(tmp_path: Path) -> None:
    path = tmp_path / "one.sse"
    path.write_bytes(samples.read("text"))
    body = {"contents": [HI], "generationConfig": {"candidateCount": 2}}
    with FakeGemini(scenario=path) as fake:
        assert post(fake, body).content == samples.read("text")


@pytest.mark.parametrize(
    "count", [9, 1_000_000, int("9" * 4000), -1], ids=["9", "1e6", "4000digits", "-1"]
)
@pytest.mark.parametrize("stream", [True, False])
def test_candidate_count_beyond_geminis_range_is_googles_400(count: int, stream: bool) -> None:
    body = {"contents": [HI], "generationConfig": {"candidateCount": count}}
    with FakeGemini() as fake:
        refused = post(fake, body, stream=stream)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    if abs(count) < 2**31:
        assert f"candidateCount value of {count} " in error["message"]
        assert "from 1 (inclusive) to 9 (exclusive)" in error["message"]
    else:  # Google's parser refuses what no int32 holds
        assert "'generation_config.candidate_count' (TYPE_INT32)" in error["message"]
    assert len(refused.content) < 2000


def test_candidate_count_beyond_geminis_range_is_refused_by_the_strict_check_too() -> None:
    body = {"contents": [HI], "generationConfig": {"candidateCount": 9}}
    problems = gemini_request_problems(body, model=MODEL)
    assert len(problems) == 1
    assert "candidateCount" in problems[0]
