"""``rxgem serve --upstream-api interactions``: chat completions and Responses answered by
Gemini's Interactions API (FakeGemini speaking it, every create body judged strictly by
google-genai's types), through the real ``openai`` SDK with strict validation; the state a
conversation keeps at Google or here."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from interactions_judge import interactions as judged
from interactions_judge import strict_problems
from server_harness import HELLO, QUOTA_PER_MINUTE, TOKEN, serving, settings_for

from rxgem import samples
from rxgem.testing import FakeGemini, FakeInteraction, FakeResponse, call_step, text_step
from rxgem.testing._interaction_script import THOUGHT_SIGNATURE, thought_step

MODEL = "gemini-3-flash-preview"
WEATHER = {
    "type": "function",
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
}


def _strict(url: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{url}/v1", api_key=TOKEN, max_retries=0, _strict_response_validation=True
    )


def strictly(body: Any) -> list[str]:
    """google-genai's strict judgement of a create body the server sent (an agent's is
    validated as ``CreateAgentInteraction``, whose fields the judge's walk also checks)."""
    if isinstance(body, dict) and "agent" in body:
        agent = judged.CreateAgentInteraction.model_validate(body)
        return [f"unknown keys {sorted(agent.model_extra)}"] if agent.model_extra else []
    return strict_problems(body)


@contextlib.contextmanager
def interactions_gateway(
    *runs: Any, **overrides: Any
) -> Iterator[tuple[FakeGemini, openai.OpenAI]]:
    settings = {"upstream_api": "interactions", **overrides}
    with (
        FakeGemini(interactions=runs, interaction_check=strictly) as fake,
        serving(settings_for(fake, **settings)) as url,
        _strict(url) as client,
    ):
        yield fake, client


def _creates(fake: FakeGemini) -> list[dict[str, Any]]:
    return [
        r.json
        for r in fake.requests
        if r.method == "POST" and r.path.endswith("/interactions") and r.json
    ]


HELLO_RUN = FakeInteraction(steps=(thought_step("Greeting."), text_step("Good morning!", pieces=3)))
CALL_RUN = FakeInteraction(
    steps=(thought_step(), call_step("get_weather", {"city": "Paris"}, id="call-1", fragments=2))
)
ANSWER_RUN = FakeInteraction(steps=(text_step("It is sunny in Paris.", pieces=2),))


@pytest.mark.parametrize("stream", [False, True])
def test_chat_completions_through_interactions(stream: bool) -> None:
    with interactions_gateway(HELLO_RUN) as (fake, client):
        if stream:
            chunks = list(client.chat.completions.create(model=MODEL, messages=HELLO, stream=True))
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
        else:
            completion = client.chat.completions.create(model=MODEL, messages=HELLO)
            text = completion.choices[0].message.content or ""
            finish = completion.choices[0].finish_reason
        (sent,) = _creates(fake)
    assert text == "Good morning!"
    assert finish == "stop"
    assert sent["model"] == MODEL
    assert sent["store"] is False  # a chat completion is never kept at Google
    assert sent["stream"] is True


@pytest.mark.parametrize("stream", [False, True])
def test_responses_through_interactions(stream: bool, tmp_path: Path) -> None:
    with interactions_gateway(HELLO_RUN, store=str(tmp_path / "r.sqlite3")) as (fake, client):
        if stream:
            with client.responses.stream(model=MODEL, input="Say good morning.") as events:
                response = events.get_final_response()
        else:
            response = client.responses.create(model=MODEL, input="Say good morning.")
        (sent,) = _creates(fake)
        again = client.responses.retrieve(response.id)
    assert response.output_text == "Good morning!"
    assert response.status == "completed"
    assert again.output_text == "Good morning!"
    assert sent["store"] is False  # Google keeps nothing unless the server lets it
    assert fake.interaction_ids == []


def _tool_round_trip(client: openai.OpenAI, *, stored: bool) -> tuple[Any, Any]:
    include: Any = [] if stored else ["reasoning.encrypted_content"]
    first = client.responses.create(
        model=MODEL, input="Weather in Paris?", tools=[WEATHER], store=stored, include=include
    )
    (call,) = [item for item in first.output if item.type == "function_call"]
    assert call.name == "get_weather"
    assert call.arguments == '{"city":"Paris"}'
    answer = {"type": "function_call_output", "call_id": call.call_id, "output": "sunny"}
    if stored:
        second = client.responses.create(
            model=MODEL, input=[answer], tools=[WEATHER], previous_response_id=first.id
        )
    else:
        replayed = [item.model_dump(exclude_none=True) for item in first.output]
        second = client.responses.create(
            model=MODEL,
            input=[{"role": "user", "content": "Weather in Paris?"}, *replayed, answer],
            tools=[WEATHER],
            store=False,
            include=["reasoning.encrypted_content"],
        )
    return first, second


def test_a_tool_round_trip_kept_at_google_sends_only_the_new_input(tmp_path: Path) -> None:
    store = str(tmp_path / "r.sqlite3")
    with interactions_gateway(CALL_RUN, ANSWER_RUN, store=store, interactions_store=True) as (
        fake,
        client,
    ):
        _, second = _tool_round_trip(client, stored=True)
        first_sent, second_sent = _creates(fake)
        first_id = fake.interaction_ids[0]
    assert second.output_text == "It is sunny in Paris."
    assert first_sent["store"] is True
    assert second_sent["previous_interaction_id"] == first_id
    assert [step["type"] for step in second_sent["input"]] == ["function_result"]


def test_a_tool_round_trip_not_kept_at_google_replays_the_conversation(tmp_path: Path) -> None:
    with interactions_gateway(CALL_RUN, ANSWER_RUN, store=str(tmp_path / "r.sqlite3")) as (
        fake,
        client,
    ):
        _, second = _tool_round_trip(client, stored=True)
        first_sent, second_sent = _creates(fake)
    assert second.output_text == "It is sunny in Paris."
    assert "previous_interaction_id" not in second_sent
    kinds = [step["type"] for step in second_sent["input"]]
    assert kinds[0] == "user_input"
    assert "function_call" in kinds
    assert kinds[-1] == "function_result"
    assert first_sent["store"] is False


def test_a_stateless_tool_round_trip_sends_the_signature_back(tmp_path: Path) -> None:
    with interactions_gateway(CALL_RUN, ANSWER_RUN, no_store=True) as (fake, client):
        _, second = _tool_round_trip(client, stored=False)
        _, second_sent = _creates(fake)
    assert second.output_text == "It is sunny in Paris."
    kinds = [step["type"] for step in second_sent["input"]]
    assert kinds == ["user_input", "thought", "function_call", "function_result"]
    assert second_sent["input"][1]["signature"] == THOUGHT_SIGNATURE


# --------------------------------------------------------------------------- background


def _background_gateway(*runs: Any, tmp_path: Path) -> Any:
    return interactions_gateway(*runs, store=str(tmp_path / "r.sqlite3"), interactions_store=True)


def _until_ended(client: openai.OpenAI, response_id: str) -> Any:
    deadline = time.monotonic() + 10
    while True:
        response = client.responses.retrieve(response_id)
        if response.status not in ("queued", "in_progress"):
            return response
        assert time.monotonic() < deadline, "the background response did not end"
        time.sleep(0.02)


SLOW_RUN = FakeInteraction(steps=(text_step("Researched: all good.", pieces=4),), pace=0.05)


def test_a_background_response_is_created_polled_and_ends(tmp_path: Path) -> None:
    with _background_gateway(SLOW_RUN, tmp_path=tmp_path) as (fake, client):
        created = client.responses.create(model=MODEL, input="Research it.", background=True)
        ended = _until_ended(client, created.id)
        (sent,) = _creates(fake)
        again = client.responses.retrieve(created.id)
    assert created.status in ("queued", "in_progress")
    assert created.background is True
    assert created.output == []
    assert ended.status == "completed"
    assert ended.output_text == "Researched: all good."
    assert ended.id == created.id
    assert ended.created_at == created.created_at
    assert again.model_dump() == ended.model_dump()  # stored once it ended
    assert sent["background"] is True
    assert sent["store"] is True


def test_a_background_stream_resumes_after_a_sequence_number(tmp_path: Path) -> None:
    with _background_gateway(SLOW_RUN, tmp_path=tmp_path) as (_, client):
        events = list(
            client.responses.create(model=MODEL, input="Research it.", background=True, stream=True)
        )
        response_id = events[0].response.id
        cut = 3
        resumed = list(client.responses.retrieve(response_id, stream=True, starting_after=cut))
        beyond = list(client.responses.retrieve(response_id, stream=True, starting_after=10**17))
    assert events[-1].type == "response.completed"
    assert [e.sequence_number for e in resumed] == [e.sequence_number for e in events[cut + 1 :]]
    assert [e.model_dump() for e in resumed] == [e.model_dump() for e in events[cut + 1 :]]
    assert beyond == []


def test_a_background_response_is_cancelled_at_google(tmp_path: Path) -> None:
    endless = FakeInteraction(steps=(text_step("x" * 200, pieces=100),), pace=0.5)
    with _background_gateway(endless, tmp_path=tmp_path) as (fake, client):
        created = client.responses.create(model=MODEL, input="Research it.", background=True)
        cancelled = client.responses.cancel(created.id)
        polled = client.responses.retrieve(created.id)
        (run_id,) = fake.interaction_ids
        at_google = fake.interaction(run_id)
    assert cancelled.status == "cancelled"
    assert polled.status == "cancelled"
    assert at_google is not None
    assert at_google["status"] == "cancelled"


def test_an_agent_runs_in_the_background_under_its_name(tmp_path: Path) -> None:
    agent = "deep-research-pro-preview-12-2025"
    with _background_gateway(SLOW_RUN, tmp_path=tmp_path) as (fake, client):
        created = client.responses.create(
            model=f"agent:{agent}", input="Research it.", background=True
        )
        ended = _until_ended(client, created.id)
        (sent,) = _creates(fake)
    assert ended.output_text == "Researched: all good."
    assert sent["agent"] == agent
    assert "model" not in sent
    assert "generation_config" not in sent


# --------------------------------------------------------------------------- across upstreams


def test_a_conversation_moves_between_the_upstreams_by_replay(tmp_path: Path) -> None:
    store = str(tmp_path / "r.sqlite3")
    with (
        FakeGemini(samples.read("text"), interactions=[HELLO_RUN, ANSWER_RUN]) as fake,
        serving(settings_for(fake, store=store)) as plain_url,
        serving(
            settings_for(fake, store=store, upstream_api="interactions", interactions_store=True)
        ) as interactions_url,
        _strict(plain_url) as plain,
        _strict(interactions_url) as interactions,
    ):
        first = interactions.responses.create(model=MODEL, input="Say good morning.")
        second = plain.responses.create(
            model=MODEL, input="And again?", previous_response_id=first.id
        )
        third = interactions.responses.create(
            model=MODEL, input="Once more?", previous_response_id=second.id
        )
        (gemini,) = [r.json for r in fake.requests if r.path.endswith(":streamGenerateContent")]
        _, third_sent = _creates(fake)
    assert third.output_text == "It is sunny in Paris."
    texts = [part.get("text") for content in gemini["contents"] for part in content["parts"]]
    assert texts[0] == "Say good morning."
    assert "Good morning!" in texts
    assert texts[-1] == "And again?"
    # the last turn was answered by generateContent: nothing at Google to continue
    assert "previous_interaction_id" not in third_sent
    kinds = [step["type"] for step in third_sent["input"]]
    assert kinds.count("user_input") == 3
    assert "model_output" in kinds


# --------------------------------------------------------------------------- errors, metrics


def test_googles_errors_are_answered_in_the_one_vocabulary(tmp_path: Path) -> None:
    quota = FakeResponse(status=429, error=QUOTA_PER_MINUTE)
    failing = FakeInteraction(
        steps=(text_step("Half an ans"),),
        error={"code": "INTERNAL", "message": "the model failed"},
        status="failed",
    )
    with interactions_gateway(quota, failing, store=str(tmp_path / "r.sqlite3")) as (_, client):
        with pytest.raises(openai.RateLimitError) as limited:
            client.responses.create(model=MODEL, input="Hi")
        events = list(client.responses.create(model=MODEL, input="Hi", stream=True))
    assert limited.value.response.headers["retry-after"] == "35"
    assert limited.value.body["type"] == "rate_limit_error"
    last = events[-1]
    assert last.type == "response.failed"
    assert last.response.error is not None
    assert "the model failed" in last.response.error.message
    assert last.response.output_text == "Half an ans"  # what was valid before it


def test_the_new_routes_are_counted_and_logged(tmp_path: Path) -> None:
    endless = FakeInteraction(steps=(text_step("x" * 20, pieces=10),), pace=0.5)
    settings = {"store": str(tmp_path / "r.sqlite3"), "interactions_store": True, "metrics": True}
    with interactions_gateway(endless, **settings) as (fake, client):
        created = client.responses.create(
            model="agent:deep-research-pro-preview-12-2025", input="Go.", background=True
        )
        client.responses.cancel(created.id)
        metrics = httpx.get(str(client.base_url).removesuffix("/v1/") + "/metrics").text
        assert fake.interaction_ids
    assert 'route="/v1/responses/{response_id}/cancel"' in metrics
    assert 'model="agent:deep-research-pro-preview-12-2025"' in metrics


@pytest.mark.parametrize("stream", [False, True])
def test_a_chat_tool_round_trip_through_interactions(stream: bool) -> None:
    tool = {"type": "function", "function": {k: v for k, v in WEATHER.items() if k != "type"}}
    question = {"role": "user", "content": "Weather in Paris?"}
    with interactions_gateway(CALL_RUN, ANSWER_RUN) as (fake, client):
        if stream:
            with client.chat.completions.stream(
                model=MODEL, messages=[question], tools=[tool]
            ) as events:
                message = events.get_final_completion().choices[0].message
        else:
            completion = client.chat.completions.create(
                model=MODEL, messages=[question], tools=[tool]
            )
            message = completion.choices[0].message
        (call,) = message.tool_calls or []
        assert call.function.arguments == '{"city":"Paris"}'
        answer = client.chat.completions.create(
            model=MODEL,
            messages=[
                question,
                message.model_dump(exclude_none=True),
                {"role": "tool", "tool_call_id": call.id, "content": "sunny"},
            ],
            tools=[tool],
        )
        _, second = _creates(fake)
    assert answer.choices[0].message.content == "It is sunny in Paris."
    kinds = [step["type"] for step in second["input"]]
    assert kinds == ["user_input", "thought", "function_call", "function_result"]
    assert second["input"][1]["signature"] == THOUGHT_SIGNATURE  # carried by the client
    assert second["store"] is False


def test_a_background_response_is_continued_at_google(tmp_path: Path) -> None:
    with _background_gateway(SLOW_RUN, ANSWER_RUN, tmp_path=tmp_path) as (fake, client):
        created = client.responses.create(model=MODEL, input="Research it.", background=True)
        _until_ended(client, created.id)
        asked = len(fake.requests)
        client.responses.retrieve(created.id)  # ended and stored: Google is not asked again
        assert len(fake.requests) == asked
        later = client.responses.create(
            model=MODEL, input="And the weather?", previous_response_id=created.id
        )
        _, sent = _creates(fake)
        first_run = fake.interaction_ids[0]
    assert later.output_text == "It is sunny in Paris."
    assert later.previous_response_id == created.id
    assert sent["previous_interaction_id"] == first_run
    assert [step["type"] for step in sent["input"]] == ["user_input"]


TWO_THOUGHTS_RUN = FakeInteraction(
    steps=(
        thought_step("First.", signature="c2lnLUE="),
        text_step("One. ", pieces=2),
        thought_step("Second.", signature="c2lnLUI="),
        text_step("Two.", pieces=2),
    )
)


@pytest.mark.parametrize("stream", [False, True])
def test_every_stored_thought_step_is_replayed_in_its_place(stream: bool, tmp_path: Path) -> None:
    with interactions_gateway(TWO_THOUGHTS_RUN, ANSWER_RUN, store=str(tmp_path / "r.sqlite3")) as (
        fake,
        client,
    ):
        if stream:
            with client.responses.stream(model=MODEL, input="Count.") as events:
                first = events.get_final_response()
        else:
            first = client.responses.create(model=MODEL, input="Count.")
        assert first.output_text == "One. Two."
        client.responses.create(model=MODEL, input="Again?", previous_response_id=first.id)
        _, second_sent = _creates(fake)
    assert "previous_interaction_id" not in second_sent  # replayed from the store here
    steps = [
        (step["type"], step.get("signature") or "".join(c["text"] for c in step["content"]))
        for step in second_sent["input"][1:-1]
    ]
    assert steps == [
        ("thought", "c2lnLUE="),
        ("model_output", "One. "),
        ("thought", "c2lnLUI="),
        ("model_output", "Two."),
    ]
