"""The upstream choice: ``--upstream-api generate-content|interactions`` and whether Google
keeps the turns (``--interactions-store``), as settings, environment, flags and the
startup line."""

from __future__ import annotations

import argparse

import httpx
import pytest
from server_harness import HELLO, KEY, serve_process

from rxgem.cli.serve import _environment, add_serve_parser
from rxgem.server import ENV, ServerSettings, SettingsError, settings_from_env


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_serve_parser(parser.add_subparsers())
    return parser.parse_args(["serve", *argv])


def test_the_default_is_generate_content_and_google_keeps_nothing() -> None:
    settings = ServerSettings(api_key=KEY)
    assert settings.upstream_api == "generate-content"
    assert settings.interactions_store is False
    from_env = settings_from_env({ENV["api_key"]: KEY})
    assert (from_env.upstream_api, from_env.interactions_store) == ("generate-content", False)


def test_the_environment_chooses_the_upstream_and_round_trips() -> None:
    env = {
        ENV["api_key"]: KEY,
        "RXGEM_UPSTREAM_API": "Interactions",
        "RXGEM_INTERACTIONS_STORE": "1",
    }
    settings = settings_from_env(env)
    assert settings.upstream_api == "interactions"
    assert settings.interactions_store is True
    assert settings_from_env(settings.to_env()) == settings


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"RXGEM_UPSTREAM_API": "vertex"}, "upstream API must be one of generate-content"),
        ({"RXGEM_INTERACTIONS_STORE": "maybe"}, "RXGEM_INTERACTIONS_STORE must be 1 or 0"),
    ],
)
def test_a_bad_choice_is_refused_with_what_is_expected(env: dict[str, str], needle: str) -> None:
    with pytest.raises(SettingsError, match=needle):
        settings_from_env({ENV["api_key"]: KEY, **env})


def test_the_flags_become_the_environment() -> None:
    env = _environment(_args("--upstream-api", "interactions", "--interactions-store"))
    assert env["RXGEM_UPSTREAM_API"] == "interactions"
    assert env["RXGEM_INTERACTIONS_STORE"] == "1"
    assert "RXGEM_UPSTREAM_API" not in _environment(_args())
    with pytest.raises(SystemExit):
        _args("--upstream-api", "vertex")


def test_the_startup_line_names_the_upstream_and_what_google_keeps() -> None:
    plain = ServerSettings(api_key=KEY, upstream="http://127.0.0.1:9/v1beta")
    assert plain.upstream_summary == "generate-content API at http://127.0.0.1:9/v1beta"
    interactions = ServerSettings(
        api_key=KEY, upstream="http://127.0.0.1:9/v1beta", upstream_api="interactions"
    )
    assert interactions.upstream_summary.endswith("(stored turns not kept at Google)")
    kept = ServerSettings(api_key=KEY, upstream_api="interactions", interactions_store=True)
    assert kept.upstream_summary.endswith("(stored turns kept at Google)")


def test_rxgem_serve_says_its_upstream_and_answers_through_it() -> None:
    with serve_process("--fake", "--upstream-api", "interactions", "--no-store") as (url, process):
        answer = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "gemini-3-flash-preview", "messages": HELLO},
            timeout=30,
        )
        process.terminate()
        _, stderr = process.communicate(timeout=30)
    assert answer.json()["choices"][0]["message"]["content"] == "Hello from FakeGemini."
    assert "upstream: interactions API at http://127.0.0.1:" in stderr
    assert "(stored turns not kept at Google)" in stderr
