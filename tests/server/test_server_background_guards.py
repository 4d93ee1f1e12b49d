"""What a server that cannot run a background response or an agent answers: a 400 naming
the way to one (``--upstream-api interactions --interactions-store``), before Gemini is
asked; and ``cancel`` of a response that is not a background one, as OpenAI answers it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest
from server_harness import HELLO, MODEL, gateway, sdk, serving, settings_for

from rxgem import samples
from rxgem.testing import FakeGemini

AGENT = "agent:deep-research-pro-preview-12-2025"


def _refused(client: openai.OpenAI, **request: Any) -> openai.BadRequestError:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(**{"model": MODEL, "input": "Hi", **request})
    return caught.value


def test_background_on_generate_content_names_the_interactions_upstream(tmp_path: Path) -> None:
    with gateway(store=str(tmp_path / "r.sqlite3")) as (fake, _, client):
        refused = _refused(client, background=True)
        agent = _refused(client, model=AGENT, background=True)
        assert fake.requests == []
    for error in (refused, agent):
        assert "--upstream-api interactions" in error.message
        assert error.body["code"] == "background_unsupported"
        assert error.response.headers["x-should-retry"] == "false"
    assert refused.body["param"] == "background"
    assert agent.body["param"] == "model"


def test_background_needs_google_to_keep_the_turns(tmp_path: Path) -> None:
    with gateway(store=str(tmp_path / "r.sqlite3"), upstream_api="interactions") as (
        fake,
        _,
        client,
    ):
        refused = _refused(client, background=True)
        assert fake.requests == []
    assert "--interactions-store" in refused.message
    assert refused.body["param"] == "background"


def test_an_agent_needs_background_and_a_background_response_needs_storing(
    tmp_path: Path,
) -> None:
    settings = {"upstream_api": "interactions", "interactions_store": True}
    with gateway(store=str(tmp_path / "r.sqlite3"), **settings) as (fake, url, client):
        foreground = _refused(client, model=AGENT)
        unstored = _refused(client, background=True, store=False)
        with pytest.raises(openai.BadRequestError) as chat:
            client.chat.completions.create(model=AGENT, messages=HELLO)
        assert fake.requests == []
    assert foreground.body["code"] == "agent_needs_background"
    assert foreground.body["param"] == "background"
    assert unstored.body["param"] == "store"
    assert chat.value.body["code"] == "agent_needs_background"
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, no_store=True, **settings)) as url,
        sdk(url) as client,
    ):
        assert _refused(client, background=True).body["param"] == "store"


def test_an_agent_name_is_checked_as_a_model_name_is() -> None:
    with gateway() as (fake, _, client):
        error = _refused(client, model="agent:../../v1beta/files", background=True)
        assert fake.requests == []
    assert error.body["param"] == "model"
    assert "not a model name" in error.message


def test_cancelling_a_response_that_is_not_a_background_one_is_a_400(tmp_path: Path) -> None:
    with gateway(samples.read("text"), store=str(tmp_path / "r.sqlite3")) as (_, _, client):
        response = client.responses.create(model=MODEL, input="Hi")
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.cancel(response.id)
        with pytest.raises(openai.NotFoundError):
            client.responses.cancel("resp_" + "0" * 48)
    assert caught.value.body["code"] == "not_background"
    assert "background: true" in caught.value.message
