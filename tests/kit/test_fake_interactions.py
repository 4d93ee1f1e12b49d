"""FakeGemini's Interactions API over loopback with httpx: streams, objects, resumption,
background runs, faults; its events and objects judged by google-genai's own types."""

from __future__ import annotations

import json
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import rxgem.testing
from rxgem.core import InteractionsParser, SSEDecoder, StepReader, interaction_items
from rxgem.items import End, Text, ToolCall
from rxgem.testing import (
    FakeGemini,
    FakeInteraction,
    FakeResponse,
    call_step,
    interaction_stream,
    text_step,
)
from rxgem.testing._fake_interactions import InteractionCall
from rxgem.testing._interaction_script import (
    code_steps,
    interaction_object,
    interaction_stream_events,
    interaction_usage,
    search_steps,
    thought_step,
    url_citation,
)

genai_types = pytest.importorskip(
    "google.genai._gaos.types.interactions",
    reason="google-genai is missing (pip install google-genai)",
)
basemodel = pytest.importorskip(
    "google.genai._gaos.types.basemodel",
    reason="google-genai is missing (pip install google-genai)",
)
pydantic = pytest.importorskip(
    "pydantic", reason="pydantic is missing (pip install google-genai, which brings it)"
)

KEY = {"x-goog-api-key": "test-key"}
MODEL = "gemini-3-flash-preview"
BODY: dict[str, Any] = {"model": MODEL, "input": "Hi"}

RICH = FakeInteraction(
    steps=(
        thought_step("Planning the answer."),
        search_steps(["weather Paris"], id="s1"),
        text_step(
            "It is sunny in Paris.",
            pieces=3,
            in_start=True,
            annotations=[url_citation("https://example.com", 0, 21, title="Weather")],
        ),
        code_steps("print(1 + 1)", "2\n", id="c1"),
        thought_step(None, signature="c2lnLTI="),
        call_step("get_weather", {"city": "Paris", "days": [1, 2]}, id="call_1", fragments=4),
        call_step("get_time", {"zone": "CET"}, id="call_2", fragments=2),
    ),
    usage=interaction_usage(20, 30, thought=7),
)


def _walk_strict(value: Any, where: str = "$") -> Iterator[str]:
    """Every unknown variant or extra key of a validated google-genai model."""
    if isinstance(value, pydantic.BaseModel):
        if getattr(value, "is_unknown", False):
            yield f"{where}: unknown variant"
        for name in value.model_extra or {}:
            yield f"{where}.{name}: extra key"
        for name in type(value).model_fields:
            yield from _walk_strict(value.__dict__.get(name), f"{where}.{name}")
    elif isinstance(value, basemodel.UnrecognizedStr):
        yield f"{where}: unrecognized value {str(value)!r}"
    elif isinstance(value, list | tuple):
        for number, item in enumerate(value):
            yield from _walk_strict(item, f"{where}[{number}]")
    elif isinstance(value, dict) and not where.endswith(".arguments"):  # free JSON
        for key, item in value.items():
            yield from _walk_strict(item, f"{where}.{key}")


def assert_valid_event(event: dict[str, Any]) -> None:
    model = pydantic.TypeAdapter(genai_types.InteractionSSEEvent).validate_python(event)
    assert list(_walk_strict(model)) == [], event


def assert_valid_object(obj: dict[str, Any]) -> None:
    model = genai_types.Interaction.model_validate(obj)
    assert list(_walk_strict(model)) == [], obj


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The ``data:`` payloads of an SSE body, checking each frame's ``event:``/``id:``."""
    out: list[dict[str, Any]] = []
    for block in body.decode().split("\n\n"):
        if not block:
            continue
        fields = dict(line.split(": ", 1) for line in block.split("\n"))
        if fields["data"] == "[DONE]":
            out.append({"done": True})
            continue
        data = json.loads(fields["data"])
        assert fields["event"] == data["event_type"]
        assert fields["id"] == data["event_id"]
        out.append(data)
    return out


def drain(response: httpx.Response, received: bytearray) -> None:
    for piece in response.iter_raw():
        received += piece


def test_a_stream_is_every_event_then_done_and_valid_for_google_genai() -> None:
    with FakeGemini(interactions=[RICH]) as fake, httpx.Client(base_url=fake.base_url) as http:
        answer = http.post("/interactions", json={**BODY, "stream": True}, headers=KEY)
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "text/event-stream"
        events = sse_events(answer.content)
    assert events[-1] == {"done": True}
    events = events[:-1]
    assert [e["event_type"] for e in events[:2]] == [
        "interaction.created",
        "interaction.status_update",
    ]
    assert events[-1]["event_type"] == "interaction.completed"
    assert events[-1]["interaction"]["status"] == "requires_action"
    assert events[-1]["interaction"]["usage"]["total_tokens"] == 57
    for event in events:
        assert_valid_event(event)
    fragments = [
        e["delta"]["arguments"]
        for e in events
        if e["event_type"] == "step.delta" and e["delta"]["type"] == "arguments_delta"
    ]
    assert len(fragments) == 6
    assert json.loads("".join(fragments[:4])) == {"city": "Paris", "days": [1, 2]}
    assert len({e["event_id"] for e in events}) == len(events)


def test_the_object_has_the_final_steps_and_is_valid_for_google_genai() -> None:
    with FakeGemini(interactions=[RICH]) as fake, httpx.Client(base_url=fake.base_url) as http:
        created = http.post("/interactions", json=BODY, headers=KEY).json()
        fetched = http.get(f"/interactions/{created['id']}", headers=KEY).json()
    assert created == fetched
    assert_valid_object(created)
    kinds = [step["type"] for step in created["steps"]]
    assert kinds == [
        "thought",
        "google_search_call",
        "google_search_result",
        "model_output",
        "code_execution_call",
        "code_execution_result",
        "thought",
        "function_call",
        "function_call",
    ]
    assert created["steps"][3]["content"][0]["text"] == "It is sunny in Paris."
    assert created["steps"][7]["arguments"] == {"city": "Paris", "days": [1, 2]}
    assert created["status"] == "requires_action"


@pytest.mark.parametrize("status", ["completed", "requires_action", "incomplete", "failed"])
def test_every_status_and_the_error_event_are_valid(status: str) -> None:
    script = FakeInteraction(
        steps=(text_step("partial"),),
        status=status,
        error={"code": "internal", "message": "boom"} if status == "failed" else None,
    )
    events = interaction_stream_events(script, "v1_x", model=MODEL)
    for event in events:
        assert_valid_event(event)
    assert events[-1]["interaction"]["status"] == status
    assert ("error" in [e["event_type"] for e in events]) == (status == "failed")
    assert interaction_stream(script, id="v1_x", model=MODEL).endswith(b"data: [DONE]\n\n")


def test_resuming_after_a_cut_replays_the_events_after_last_event_id() -> None:
    script = FakeInteraction(steps=(text_step("one two three", pieces=3),), cut_after=(3, 1.5))
    with FakeGemini(interactions=[script]) as fake, httpx.Client(base_url=fake.base_url) as http:
        whole = sse_events(interaction_stream(script, id="v1_fake-1", model=MODEL))
        with pytest.raises(httpx.RemoteProtocolError):
            http.post("/interactions", json={**BODY, "stream": True}, headers=KEY)
        path = "/interactions/v1_fake-1"
        resume = {"stream": "true", "last_event_id": whole[2]["event_id"]}
        with http.stream("GET", path, params=resume, headers=KEY) as cut:  # 1.5 events
            received = bytearray()
            with pytest.raises(httpx.RemoteProtocolError):
                drain(cut, received)
        assert received.count(b"\n\n") == 1  # one whole event, then half of the next
        again = {"stream": "true", "last_event_id": whole[3]["event_id"]}
        rest = http.get(path, params=again, headers=KEY)
        assert sse_events(rest.content) == whole[4:]
        assert fake.requests[1].query == resume


def test_store_false_keeps_nothing() -> None:
    with FakeGemini() as fake, httpx.Client(base_url=fake.base_url) as http:
        body = {**BODY, "store": False, "stream": True}
        first = sse_events(http.post("/interactions", json=body, headers=KEY).content)
        interaction_id = first[0]["interaction"]["id"]
        assert http.get(f"/interactions/{interaction_id}", headers=KEY).status_code == 404
        params = {"stream": "true", "last_event_id": first[0]["event_id"]}
        resumed = http.get(f"/interactions/{interaction_id}", params=params, headers=KEY)
        assert resumed.status_code == 404
        assert resumed.json()["error"]["status"] == "NOT_FOUND"
        assert fake.interaction_ids == []


def test_a_background_run_progresses_is_polled_and_cancelled() -> None:
    slow = FakeInteraction(steps=(text_step("a b c d e f", pieces=6),), pace=0.05)
    with FakeGemini(interactions=[slow]) as fake, httpx.Client(base_url=fake.base_url) as http:
        created = http.post("/interactions", json={**BODY, "background": True}, headers=KEY)
        assert created.json()["status"] == "in_progress"
        assert_valid_object(created.json())
        interaction_id = created.json()["id"]
        deadline = time.monotonic() + 5
        while (polled := http.get(f"/interactions/{interaction_id}").json())["status"] != (
            "completed"
        ):
            assert polled["status"] == "in_progress"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert polled["steps"][0]["content"][0]["text"] == "a b c d e f"
        done = http.post(f"/interactions/{interaction_id}/cancel").json()
        assert done["status"] == "completed"  # too late to cancel

        second = http.post("/interactions", json={**BODY, "background": True}).json()
        cancelled = http.post(f"/interactions/{second['id']}/cancel").json()
        assert cancelled["status"] == "cancelled"
        assert_valid_object(cancelled)
        replay = sse_events(
            http.get(f"/interactions/{second['id']}", params={"stream": "true"}).content
        )
        assert replay[-2]["interaction"]["status"] == "cancelled"
        assert replay[-1] == {"done": True}
        for event in replay[:-1]:
            assert_valid_event(event)


def test_cancel_refuses_a_foreground_run_and_delete_forgets() -> None:
    with FakeGemini() as fake, httpx.Client(base_url=fake.base_url) as http:
        interaction_id = http.post("/interactions", json=BODY).json()["id"]
        refused = http.post(f"/interactions/{interaction_id}/cancel")
        assert refused.status_code == 400
        assert http.delete(f"/interactions/{interaction_id}").json() == {}
        assert http.get(f"/interactions/{interaction_id}").status_code == 404
        assert http.delete(f"/interactions/{interaction_id}").status_code == 404
        assert fake.interaction(interaction_id) is None


def test_previous_interaction_id_gives_the_history_or_a_404() -> None:
    seen: list[InteractionCall] = []

    def script(call: InteractionCall) -> FakeInteraction:
        seen.append(call)
        return FakeInteraction(steps=(text_step(f"turn {len(seen)}"),))

    with FakeGemini(interactions=[script]) as fake, httpx.Client(base_url=fake.base_url) as http:
        first = http.post("/interactions", json=BODY).json()
        body = {"model": MODEL, "input": "And?", "previous_interaction_id": first["id"]}
        second = http.post("/interactions", json=body).json()
        assert second["previous_interaction_id"] == first["id"]
        unknown = http.post("/interactions", json={**body, "previous_interaction_id": "v1_nope"})
        assert unknown.status_code == 404
        assert unknown.json()["error"]["status"] == "NOT_FOUND"
    assert seen[0].history == []
    assert [step["type"] for step in seen[1].history] == ["user_input", "model_output"]
    assert seen[1].history[1]["content"][0]["text"] == "turn 1"
    assert len(seen) == 2  # the refused body used up no script


def test_refusals_http_errors_and_recorded_requests() -> None:
    quota = FakeResponse(
        status=429, error={"code": 429, "message": "Quota.", "status": "RESOURCE_EXHAUSTED"}
    )
    with (
        FakeGemini(interactions=[quota, RICH], interaction_check=lambda b: []) as fake,
        httpx.Client(base_url=fake.base_url) as http,
    ):
        assert http.post("/interactions", json=BODY, headers=KEY).status_code == 429
        assert http.post("/interactions", json=BODY, headers=KEY).status_code == 200
        unknown = http.post("/interactions", json={"model": "gemini-0", "input": "x"})
        assert unknown.status_code == 404
        assert "models/gemini-0 is not found" in unknown.json()["error"]["message"]
        both = http.post(
            "/interactions", json={**BODY, "agent": "deep-research-pro-preview-12-2025"}
        )
        assert both.status_code == 400
        request = fake.requests[0]
        assert request.path == "/v1beta/interactions"
        assert request.headers["x-goog-api-key"] == "test-key"
        assert request.query == {}
        assert request.json == BODY


def test_the_check_refuses_with_googles_400() -> None:
    def check(body: Any) -> list[str]:
        return ["Invalid value at 'input'"] if body.get("input") == "bad" else []

    with FakeGemini(interaction_check=check) as fake, httpx.Client(base_url=fake.base_url) as http:
        refused = http.post("/interactions", json={**BODY, "input": "bad"})
        assert refused.status_code == 400
        assert refused.json()["error"]["status"] == "INVALID_ARGUMENT"
        assert http.post("/interactions", json=BODY).status_code == 200


def test_google_genais_own_client_streams_from_the_fake() -> None:
    genai = pytest.importorskip(
        "google.genai", reason="google-genai is missing (pip install google-genai)"
    )
    with FakeGemini(interactions=[RICH]) as fake:
        client = genai.Client(
            api_key="test-key",
            http_options={
                "base_url": fake.base_url.removesuffix("/v1beta"),
                "api_version": "v1beta",
            },
        )
        try:
            stream = client.interactions.create(model=MODEL, input="Hi", stream=True)
        except Exception as exc:  # an SDK that cannot point at a fake
            pytest.skip(f"google-genai's client did not take the fake: {exc}")
        kinds = [event.event_type for event in stream]
    assert kinds[0] == "interaction.created"
    assert kinds[-1] == "interaction.completed"


def test_the_core_reader_reads_the_stream_and_the_object_alike() -> None:
    stream = interaction_stream(RICH, id="v1_x", model=MODEL)
    decoder, parser, reader = SSEDecoder(), InteractionsParser(), StepReader()
    streamed: list[Any] = []
    for event in decoder.feed(stream) + decoder.close():
        for parsed in parser.feed(event):
            streamed += reader.feed(parsed)
    streamed += reader.close()
    events = interaction_stream_events(RICH, "v1_x", model=MODEL)
    whole = interaction_items(json.dumps(interaction_object(events, script=RICH)).encode())

    def calls(items: list[Any]) -> list[tuple[str, Any, Any]]:
        return [(i.name, i.id, i.args) for i in items if isinstance(i, ToolCall)]

    def text(items: list[Any]) -> str:
        return "".join(i.text for i in items if isinstance(i, Text) and not i.thought)

    assert (
        calls(streamed)
        == calls(whole)
        == [
            ("get_weather", "call_1", {"city": "Paris", "days": [1, 2]}),
            ("get_time", "call_2", {"zone": "CET"}),
        ]
    )
    assert text(streamed) == text(whole) == "It is sunny in Paris."
    ends = [[i.reason for i in items if isinstance(i, End)] for items in (streamed, whole)]
    assert ends == [["requires_action"], ["requires_action"]]


def test_the_package_docstring_example_passes() -> None:
    doc = rxgem.testing.__doc__ or ""
    example = doc.split("Example (a complete pytest test of the Interactions fake)::\n", 1)[1]
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(textwrap.dedent(example), "rxgem.testing docstring", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_")]
    assert len(tests) == 1
    tests[0]()


def test_an_agent_runs_only_in_the_background_and_is_named_as_one() -> None:
    agent = {"agent": "deep-research-pro-preview-12-2025", "input": "Research rx."}
    with FakeGemini() as fake, httpx.Client(base_url=fake.base_url) as http:
        assert http.post("/interactions", json=agent).status_code == 400
        created = http.post("/interactions", json={**agent, "background": True}).json()
        unknown = http.post("/interactions", json={**agent, "agent": "nobody", "background": True})
        assert unknown.status_code == 404
        deadline = time.monotonic() + 5
        while (done := http.get(f"/interactions/{created['id']}").json())["status"] == (
            "in_progress"
        ):
            assert time.monotonic() < deadline
            time.sleep(0.01)
    assert done["agent"] == "deep-research-pro-preview-12-2025"
    assert "model" not in done
    assert_valid_object(done)


def test_a_strict_fake_refuses_what_google_refuses() -> None:
    with FakeGemini(strict=True) as fake, httpx.Client(base_url=fake.base_url) as http:
        refused = http.post("/interactions", json={**BODY, "temperature": 0.2})
        error = refused.json()["error"]
        assert (refused.status_code, error["status"]) == (400, "INVALID_ARGUMENT")
        assert "temperature" in error["message"]
        steps = [
            {"type": "user_input", "content": [{"type": "text", "text": "Hi"}]},
            {"type": "function_result", "call_id": "nowhere", "result": {"ok": True}},
        ]
        orphan = http.post("/interactions", json={**BODY, "input": steps})
        assert orphan.status_code == 400
        accepted = http.post("/interactions", json={**BODY, "stream": True, "store": False})
        assert accepted.status_code == 200
        assert [r.json for r in fake.requests][-1]["store"] is False
