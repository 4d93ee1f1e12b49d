"""instructor (``instructor``, unchanged) asking for structured objects through ``rxgem serve``.

instructor pins ``jiter<0.15``, which the ``openai`` SDK the dev install resolves (with the
Agents SDK) does not allow, so it lives in a venv of its own outside the checkout
(``~/.cache/rxgem-test-tools/instructor``, made by ``.ci/run``) and runs as a script there
(``instructor_run.py``), against the app in real uvicorn in this process.

In its tool modes (``TOOLS``, ``PARALLEL_TOOLS``) the model answers with a call to the
response model's function; a validator refuses the first object, so instructor sends the
call back with the error and asks again: that replayed call must carry the signature the
fake gave it (see ``clients_harness``). ``JSON_SCHEMA`` mode sends the schema as
``response_format``: the fake answers JSON valid against it. On both upstreams, in front of
a strict FakeGemini answering as ``gemini-3-flash-preview``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clients_harness import (
    G3,
    UPSTREAMS,
    assert_signatures_kept,
    model_requests,
    run_script,
    strict_gateway,
    tool_python,
)
from server_harness import TOKEN

SCRIPT = Path(__file__).with_name("instructor_run.py")


@pytest.fixture(scope="module")
def instructor_python() -> str:
    python = tool_python("instructor")
    if python is None:
        pytest.skip(
            "instructor is not installed in ~/.cache/rxgem-test-tools/instructor (.ci/run does):"
            " `python3 -m venv ~/.cache/rxgem-test-tools/instructor &&"
            " ~/.cache/rxgem-test-tools/instructor/bin/pip install instructor==1.17.0`"
        )
    return python


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("mode", ["TOOLS", "PARALLEL_TOOLS"])
def test_instructor_tool_modes_keep_the_signatures(
    instructor_python: str, upstream: str, mode: str, tmp_path: Path
) -> None:
    with strict_gateway(upstream, tmp_path) as (fake, url):
        got = json.loads(run_script(instructor_python, SCRIPT, url, TOKEN, G3, mode))
    assert got["refused"] == 1
    assert got["objects"], got
    assert all(isinstance(o["city"], str) and isinstance(o["celsius"], int) for o in got["objects"])
    # the call, then the call sent back with the error (and, where the fake answers that
    # with text, instructor's correction as a user turn: the call goes back again)
    assert len(model_requests(fake)) >= 2
    assert_signatures_kept(fake, replays=1)


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_instructor_json_schema_mode_gets_json_of_the_schema(
    instructor_python: str, upstream: str, tmp_path: Path
) -> None:
    with strict_gateway(upstream, tmp_path) as (fake, url):
        got = json.loads(run_script(instructor_python, SCRIPT, url, TOKEN, G3, "JSON_SCHEMA"))
    assert got["refused"] == 1
    (weather,) = got["objects"]
    assert isinstance(weather["city"], str)
    assert isinstance(weather["celsius"], int)
    requests = [r.json for r in model_requests(fake)]
    assert len(requests) == 2  # the object refused, then the one asked again
    for body in requests:  # each asks for JSON of the schema, with no tool
        if upstream == "interactions":
            asked = body["response_format"]
            assert asked["mime_type"] == "application/json"
            assert asked["schema"]["required"] == ["city", "celsius"]
        else:
            config = body["generationConfig"]
            assert config["responseMimeType"] == "application/json"
            assert config["responseJsonSchema"]["required"] == ["city", "celsius"]
        assert "tools" not in body
