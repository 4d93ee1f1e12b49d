"""The server's pipeline options: ``ServerSettings.pipeline``, ``RXGEM_PIPELINE`` and
``rxgem serve``'s pipeline flags reach every answer, in one process and in workers."""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx
import pytest
from server_harness import HELLO, KEY, MODEL, TOKEN, serve_process, serving, settings_for

from rxgem import samples
from rxgem.cli.serve import add_serve_parser
from rxgem.server import (
    ENV,
    PIPELINE_OPTIONS,
    ServerSettings,
    SettingsError,
    settings_from_env,
)
from rxgem.testing import FakeGemini

HEADERS = {"authorization": f"Bearer {TOKEN}"}
MARK = "__thought__"


def _call_ids(url: str, *, stream: bool = False) -> list[str]:
    body: dict[str, Any] = {"model": MODEL, "messages": HELLO, "stream": stream}
    response = httpx.post(f"{url}/v1/chat/completions", json=body, headers=HEADERS, timeout=30)
    assert response.status_code == 200, response.text
    calls = response.json()["choices"][0]["message"]["tool_calls"]
    return [call["id"] for call in calls]


def _delta_fields(url: str) -> set[str]:
    body: dict[str, Any] = {"model": MODEL, "messages": HELLO, "stream": True}
    with httpx.stream(
        "POST", f"{url}/v1/chat/completions", json=body, headers=HEADERS, timeout=30
    ) as response:
        text = response.read().decode()
    fields: set[str] = set()
    for line in text.splitlines():
        if line.startswith("data: {"):
            chunk = json.loads(line[len("data: ") :])
            for choice in chunk["choices"]:
                fields |= set(choice["delta"])
    return fields


@pytest.mark.parametrize(("pipeline", "signed"), [({}, False), ({"signature_in_id": True}, True)])
def test_signature_in_id_reaches_the_answers(pipeline: dict[str, Any], signed: bool) -> None:
    with (
        FakeGemini(samples.read("gemini3_ids")) as fake,
        serving(settings_for(fake, pipeline=pipeline)) as url,
    ):
        ids = _call_ids(url)
    assert len(ids) == 2
    assert (MARK in ids[0]) is signed
    assert ids[0].startswith("ttgzlpie")


def test_reasoning_field_reaches_the_stream() -> None:
    with FakeGemini(samples.read("thinking_tools")) as fake:
        with serving(settings_for(fake)) as url:
            default = _delta_fields(url)
        with serving(settings_for(fake, pipeline={"reasoning_field": "reasoning"})) as url:
            renamed = _delta_fields(url)
        with serving(settings_for(fake, pipeline={"reasoning_field": None})) as url:
            dropped = _delta_fields(url)
    assert "reasoning_content" in default
    assert "reasoning" not in default
    assert "reasoning" in renamed
    assert "reasoning_content" not in renamed
    assert not {"reasoning", "reasoning_content"} & dropped


def test_the_server_takes_every_option_but_the_request_s_and_functions() -> None:
    assert {
        "api",
        "slot_policy",
        "announce",
        "allow_truncated",
        "reasoning_field",
        "render_code",
        "signature_in_id",
    } == PIPELINE_OPTIONS
    parser = add_serve_parser(argparse.ArgumentParser().add_subparsers())
    dests = {action.dest for action in parser._actions if action.option_strings}
    assert dests >= PIPELINE_OPTIONS
    assert not {"model", "include_usage", "id_factory", "clock"} & dests


@pytest.mark.parametrize(
    ("pipeline", "said"),
    [
        ({"include_usage": False}, "'include_usage' is not a pipeline option"),
        ({"model": "m"}, "'model' is not a pipeline option"),
        ({"colour": "red"}, "'colour' is not a pipeline option"),
        ({"reasoning_field": "thoughts"}, "pipeline option: "),
        ({"announce": "all"}, "pipeline option: "),
    ],
)
def test_bad_pipeline_settings_are_refused(pipeline: dict[str, Any], said: str) -> None:
    with pytest.raises(SettingsError, match=said):
        ServerSettings(api_key=KEY, pipeline=pipeline)


def test_the_pipeline_crosses_the_environment() -> None:
    pipeline = {"signature_in_id": True, "reasoning_field": None, "slot_policy": "positional"}
    settings = ServerSettings(api_key=KEY, pipeline=pipeline)
    assert settings_from_env(settings.to_env()) == settings
    assert settings_from_env({ENV["api_key"]: KEY}).pipeline == {}
    for text in ("[1]", "{", "true"):
        with pytest.raises(SettingsError, match=ENV["pipeline"]):
            settings_from_env({ENV["api_key"]: KEY, ENV["pipeline"]: text})


def test_a_pipeline_flag_holds_in_every_worker() -> None:
    with (
        FakeGemini(samples.read("gemini3_ids")) as fake,
        serve_process(
            "--workers", "2", "--upstream", fake.base_url, "--client-token", TOKEN,
            "--signature-in-id", "--log-level", "warning",
            env={"RXGEM_API_KEY": KEY},
        ) as (url, _),
    ):  # fmt: skip
        firsts = set()
        for _ in range(8):  # new connections reach both workers
            firsts.add(_call_ids(url)[0].partition(MARK)[1])
    assert firsts == {MARK}


def test_rxgem_pipeline_is_read_by_rxgem_serve() -> None:
    with (
        FakeGemini(samples.read("gemini3_ids")) as fake,
        serve_process(
            "--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN,
            env={"RXGEM_API_KEY": KEY, ENV["pipeline"]: '{"signature_in_id": true}'},
        ) as (url, _),
    ):  # fmt: skip
        assert MARK in _call_ids(url)[0]
