"""Structured output through ``rxgem serve`` in front of the plain FakeGemini (strict), on
both upstreams: the openai SDK's ``parse`` helpers get JSON their Pydantic model accepts,
JSON mode gets a JSON object, and tools are called before the JSON answer."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Any

import pydantic
import pytest
from server_harness import sdk, serving, settings_for

from rxgem.testing import FakeGemini

MODEL = "gemini-3-flash-preview"
ASK: Any = [{"role": "user", "content": "Who was Ada Lovelace?"}]
UPSTREAMS = ["generate-content", "interactions"]


class Role(StrEnum):
    MATHEMATICIAN = "mathematician"
    WRITER = "writer"


class Address(pydantic.BaseModel):
    city: str
    country: str


class Person(pydantic.BaseModel):
    name: str
    born: int = pydantic.Field(ge=1800, le=1900)
    role: Role
    addresses: list[Address]
    email: str | None


WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        "strict": True,
    },
}


def check(person: Person | None) -> None:
    assert isinstance(person, Person)
    assert person.name == "Ada Lovelace"
    assert 1800 <= person.born <= 1900
    assert person.role is Role.MATHEMATICIAN
    assert person.addresses[0].city == "Paris"


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_chat_completions_parse_gets_the_model(upstream: str) -> None:
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, upstream_api=upstream)) as url,
        sdk(url) as client,
    ):
        whole = client.chat.completions.parse(model=MODEL, messages=ASK, response_format=Person)
        with client.chat.completions.stream(
            model=MODEL, messages=ASK, response_format=Person
        ) as stream:
            streamed = stream.get_final_completion()
    for completion in (whole, streamed):
        (choice,) = completion.choices
        assert choice.finish_reason == "stop"
        check(choice.message.parsed)
    sent = [r.json for r in fake.requests if r.method == "POST"]
    assert len(sent) == 2
    for body in sent:  # what reached the fake asked for the model's schema
        if upstream == "interactions":
            schema = body["response_format"]["schema"]
        else:
            schema = body["generationConfig"]["responseJsonSchema"]
        assert set(schema["properties"]) == set(Person.model_fields)


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_responses_parse_gets_the_model(upstream: str, tmp_path: Path) -> None:
    store = str(tmp_path / "responses.sqlite3")
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, upstream_api=upstream, store=store)) as url,
        sdk(url) as client,
    ):
        response = client.responses.parse(model=MODEL, input=ASK, text_format=Person)
    check(response.output_parsed)


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_json_mode_gets_a_json_object(upstream: str) -> None:
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, upstream_api=upstream)) as url,
        sdk(url) as client,
    ):
        completion = client.chat.completions.create(
            model=MODEL, messages=ASK, response_format={"type": "json_object"}
        )
    content = completion.choices[0].message.content
    assert content is not None
    assert isinstance(json.loads(content), dict)


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_tool_is_called_first_then_the_json_answers(upstream: str) -> None:
    with (
        FakeGemini(strict=True) as fake,
        serving(settings_for(fake, upstream_api=upstream)) as url,
        sdk(url) as client,
    ):
        first = client.chat.completions.parse(
            model=MODEL, messages=ASK, tools=[WEATHER], response_format=Person
        )
        message = first.choices[0].message
        (call,) = message.tool_calls or ()
        replay: Any = [
            *ASK,
            message.model_dump(exclude_none=True, exclude={"parsed"}),
            {"role": "tool", "tool_call_id": call.id, "content": '{"temperature": 21}'},
        ]
        second = client.chat.completions.parse(
            model=MODEL, messages=replay, tools=[WEATHER], response_format=Person
        )
    assert first.choices[0].finish_reason == "tool_calls"
    check(second.choices[0].message.parsed)
