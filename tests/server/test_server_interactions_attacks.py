"""Attack probes of the background routes on the Interactions upstream: another client's
response answers exactly as a missing one (retrieve, stream, cancel, continue), a
``starting_after`` of any size is answered at once, and a flood of background runs holds
nothing open in the server."""

from __future__ import annotations

import concurrent.futures
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from server_harness import TOKEN, serving, settings_for

from rxgem.testing import FakeGemini, FakeInteraction, text_step

MODEL = "gemini-3-flash-preview"
OTHER = "tok-OTHER-CLIENT-99"
ENDLESS = FakeInteraction(steps=(text_step("x" * 100, pieces=50),), pace=1.0)


def _settings(fake: FakeGemini, tmp_path: Path, **more: Any) -> Any:
    return settings_for(
        fake,
        client_tokens=(TOKEN, OTHER),
        store=str(tmp_path / "r.sqlite3"),
        upstream_api="interactions",
        interactions_store=True,
        **more,
    )


def _start(url: str) -> str:
    with openai.OpenAI(base_url=f"{url}/v1", api_key=TOKEN, max_retries=0) as client:
        return client.responses.create(model=MODEL, input="Research.", background=True).id


@pytest.mark.parametrize(
    ("method", "suffix"),
    [("GET", ""), ("GET", "?stream=true&starting_after=2"), ("POST", "/cancel")],
)
def test_another_clients_background_response_is_a_missing_one(
    tmp_path: Path, method: str, suffix: str
) -> None:
    with FakeGemini(interactions=[ENDLESS]) as fake, serving(_settings(fake, tmp_path)) as url:
        mine = _start(url)
        missing = "resp_" + "0" * 48
        asked = len(fake.requests)
        answers = {}
        for name, response_id in (("mine", mine), ("missing", missing)):
            answer = httpx.request(
                method,
                f"{url}/v1/responses/{response_id}{suffix}",
                headers={"authorization": f"Bearer {OTHER}"},
            )
            answers[name] = (answer.status_code, answer.text.replace(response_id, "ID"))
        assert len(fake.requests) == asked  # Google was not asked about either
    assert answers["mine"] == answers["missing"]
    assert answers["mine"][0] == 404


def test_another_clients_response_cannot_be_continued(tmp_path: Path) -> None:
    with FakeGemini(interactions=[ENDLESS]) as fake, serving(_settings(fake, tmp_path)) as url:
        mine = _start(url)
        with (
            openai.OpenAI(base_url=f"{url}/v1", api_key=OTHER, max_retries=0) as other,
            pytest.raises(openai.BadRequestError) as caught,
        ):
            other.responses.create(model=MODEL, input="Go on.", previous_response_id=mine)
    assert caught.value.body["code"] == "previous_response_not_found"


@pytest.mark.parametrize("value", ["9" * 30_000, "-1", "1e3", "0x10", " 1"])
def test_a_starting_after_that_is_not_a_sequence_number_is_refused_at_once(
    tmp_path: Path, value: str
) -> None:
    with FakeGemini(interactions=[ENDLESS]) as fake, serving(_settings(fake, tmp_path)) as url:
        mine = _start(url)
        started = time.monotonic()
        answer = httpx.get(
            f"{url}/v1/responses/{mine}",
            params={"stream": "true", "starting_after": value},
            headers={"authorization": f"Bearer {TOKEN}"},
        )
        assert time.monotonic() - started < 2
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "starting_after"


def test_a_flood_of_background_runs_holds_nothing_open(tmp_path: Path) -> None:
    runs = 24
    with (
        FakeGemini(interactions=[ENDLESS]) as fake,
        serving(_settings(fake, tmp_path, max_concurrent_requests=8)) as url,
        concurrent.futures.ThreadPoolExecutor(8) as pool,
    ):
        started = time.monotonic()
        ids = list(pool.map(lambda _: _start(url), range(runs)))
        took = time.monotonic() - started
        time.sleep(0.3)
        requests = [(r.method, r.path, dict(r.query)) for r in fake.requests]
    assert len(set(ids)) == runs
    assert took < 10  # each answered when Google took the run, not when it ended
    # one create per run, not streamed, and nothing asked of Google between the clients'
    # requests: the server keeps no task, stream or connection per run
    assert len(requests) == runs
    assert all(method == "POST" and not query for method, _, query in requests)


BAD_ID_RUN = FakeInteraction(id="../../models/x", steps=(text_step("a b c", pieces=3),), pace=0.05)


@pytest.mark.parametrize("stream", [False, True])
def test_a_background_run_google_names_with_a_bad_id_is_googles_fault(
    tmp_path: Path, stream: bool
) -> None:
    """Google's id is checked when it answers the create: a 502 that says Google's answer
    could not be read, never a 500, and no response stored whose GET would blame the
    client for the id (a 400 with ``param=interaction_id``)."""
    with (
        FakeGemini(interactions=[BAD_ID_RUN]) as fake,
        serving(_settings(fake, tmp_path)) as url,
    ):
        answer = httpx.post(
            f"{url}/v1/responses",
            json={"model": MODEL, "input": "Research.", "background": True, "stream": stream},
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=10,
        )
        asked = [(r.method, r.path) for r in fake.requests]
    assert answer.status_code == 502, answer.text
    error = answer.json()["error"]
    assert error["code"] == "bad_upstream_response"
    assert error.get("param") is None
    assert asked == [("POST", "/v1beta/interactions")]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/responses", {"input": "Hi"}),  # kept at Google: a cut stream is resumed
        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}]}),
    ],
    ids=["responses", "chat"],
)
def test_a_stream_google_names_with_a_bad_id_then_cuts_ends_typed_at_once(
    tmp_path: Path, path: str, body: dict[str, Any]
) -> None:
    """The probe's case: a bad id in ``interaction.created``, then the connection cut. The
    client hears a typed error, not keep-alives until it gives up (before, on the Responses
    route; the chat route said the connection failed)."""
    run = FakeInteraction(
        id="../../models/x", steps=(text_step("a b c", pieces=3),), cut_after=(1,)
    )
    with (
        FakeGemini(interactions=[run]) as fake,
        serving(_settings(fake, tmp_path, read_timeout=5)) as url,
    ):
        started = time.monotonic()
        with httpx.stream(
            "POST",
            f"{url}{path}",
            json={"model": MODEL, "stream": True, **body},
            headers={"authorization": f"Bearer {TOKEN}"},
            timeout=20,
        ) as answer:
            body = answer.read().decode()
        took = time.monotonic() - started
        asked = len(fake.requests)
    assert took < 4, body
    assert asked == 1
    assert "bad_upstream_response" in body
    assert "not an interaction id" in body
