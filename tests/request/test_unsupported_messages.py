"""The refusal of a field Gemini has no counterpart for, as each of its readers sees it.

An HTTP client of ``rxgem serve`` reads the 400's ``message`` (the error's ``reason``): it
must say which field of the request to change, and nothing about ``unsupported="warn"``, a
Python argument the client cannot set. A Python caller reads ``str(error)``, which adds
that argument.
"""

from __future__ import annotations

from typing import Any

import openai
import pytest
from server_harness import HELLO, MODEL, sdk, serving, settings_for

from rxgem import InvalidRequestError
from rxgem.request import to_gemini_request
from rxgem.testing import FakeGemini

HI = [{"role": "user", "content": "Hi"}]
WEATHER = {"type": "function", "function": {"name": "weather"}}
TIME = {"type": "function", "function": {"name": "time"}}
LIBRARY_HINT = 'unsupported="warn"'


@pytest.mark.parametrize(
    ("fields", "where", "named"),
    [
        ({"logit_bias": {"1": 5}}, "logit_bias", "drop the field logit_bias"),
        ({"audio": {}}, "audio", "drop the field audio"),
        ({"verbosity": "low"}, "verbosity", "drop the field verbosity"),
        ({"made_up_field": 1}, "made_up_field", "drop the field made_up_field"),
        ({"functions": []}, "functions", "the deprecated functions field"),
        ({"function_call": "auto"}, "function_call", "send tool_choice instead"),
        ({"tools": [WEATHER, {"type": "web_search"}]}, "tools[1].type", "drop tools[1]"),
        (
            {"tools": [WEATHER, TIME], "parallel_tool_calls": False},
            "parallel_tool_calls",
            "drop parallel_tool_calls: false",
        ),
    ],
)
def test_the_reason_names_the_field_and_the_text_adds_the_library_argument(
    fields: dict[str, Any], where: str, named: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        to_gemini_request({"model": "gemini-2.5-flash", "messages": HI, **fields})
    assert caught.value.where == where
    assert named in caught.value.reason
    assert "unsupported" not in caught.value.reason
    assert str(caught.value).startswith(f"{where}: {caught.value.reason}")
    assert f"({LIBRARY_HINT} drops it with a warning)" in str(caught.value)


def test_a_model_that_does_not_think_is_told_what_to_change() -> None:
    with pytest.raises(InvalidRequestError) as caught:
        to_gemini_request({"model": "gemini-2.0-flash", "messages": HI, "reasoning_effort": "low"})
    assert caught.value.where == "reasoning_effort"
    assert caught.value.reason == (
        "this model does not think;"
        " leave out the reasoning effort, or ask a Gemini 2.5 or later model"
    )
    assert LIBRARY_HINT in str(caught.value)


def test_a_long_unknown_field_is_cut_in_the_message() -> None:
    key = "x" * 10_000
    with pytest.raises(InvalidRequestError) as caught:
        to_gemini_request({"model": "gemini-2.5-flash", "messages": HI, key: 1})
    assert caught.value.where == key
    assert len(caught.value.reason) < 200


def test_the_server_400_names_the_field_and_not_the_library_argument() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url, sdk(url) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model=MODEL, messages=HELLO, logit_bias={"1": 5})
        error = caught.value.body
        assert error["message"] == (
            "Gemini has no logit bias; drop the field logit_bias from the request"
        )
        assert error["param"] == "logit_bias"
        assert error["type"] == "invalid_request_error"
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(
                model=MODEL, messages=HELLO, extra_body={"made_up_field": True}
            )
        assert "drop the field made_up_field" in caught.value.body["message"]
        assert "unsupported" not in caught.value.body["message"]
        assert fake.requests == []  # nothing reached Gemini
