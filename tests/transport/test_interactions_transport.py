"""from_interactions and the Interactions resources over a real FakeGemini on 127.0.0.1:
whole events, resumption after cuts (also mid-event, more than once), typed errors."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
from typing import Any

import httpx
import pytest
import reactivex
from pipeline_harness import collect_sync
from reactivex import operators as ops

from rxgem.core import (
    GeminiAPIError,
    GeminiTransportError,
    InteractionsParser,
    InvalidRequestError,
    MalformedStreamError,
    SSEDecoder,
    StepReader,
    TruncatedStreamError,
)
from rxgem.items import End, Text, ToolCall
from rxgem.testing import (
    FakeGemini,
    FakeInteraction,
    FakeResponse,
    call_step,
    interaction_stream,
    text_step,
)
from rxgem.testing._interaction_script import (
    interaction_frame,
    interaction_stream_events,
    thought_step,
)
from rxgem.transport import (
    cancel_interaction,
    create_interaction,
    from_interactions,
    get_interaction,
)
from rxgem.transport._http import interactions_url
from rxgem.transport._interaction_frames import EventFramer
from rxgem.transport._interactions_api import delete_interaction

MODEL = "gemini-3-flash-preview"
KEY = "test-key-secret"
BODY: dict[str, Any] = {"model": MODEL, "input": "Hi"}
STEPS = (
    thought_step("Thinking it over."),
    text_step("The weather in Paris is sunny today.", pieces=5),
    call_step("get_weather", {"city": "Paris"}, id="call_1", fragments=3),
)


def collect(source: reactivex.Observable[bytes]) -> tuple[bytes, Any]:
    """Every emitted byte and the error or None; only whole events go downstream."""
    items, error = collect_sync(source, timeout=20)
    for item in items:
        assert item.endswith(b"\n\n"), item[-40:]
    return b"".join(items), error


def events_of(body: bytes) -> list[str]:
    return [block for block in body.decode().split("\n\n") if block]


def whole(script: FakeInteraction, interaction_id: str = "v1_fake-1") -> bytes:
    return interaction_stream(script, id=interaction_id, model=MODEL)


def test_the_urls_and_the_ids_they_take() -> None:
    assert interactions_url(None) == (
        "https://generativelanguage.googleapis.com/v1beta/interactions"
    )
    assert (
        interactions_url("http://h/v1beta/", "v1_Ab-c=") == "http://h/v1beta/interactions/v1_Ab-c="
    )
    for bad in ("a/b", "..", "a?b", "a#b", "%2F", "", "a:cancel"):
        with pytest.raises(InvalidRequestError):
            interactions_url(None, bad)


def test_an_uncut_stream_arrives_as_sent_with_the_key_only_in_its_header() -> None:
    script = FakeInteraction(steps=STEPS)
    with FakeGemini(interactions=[script]) as fake:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
        (request,) = fake.requests
    assert error is None
    assert body == whole(script)
    assert request.method == "POST"
    assert request.path == "/v1beta/interactions"
    assert request.query == {}
    assert request.headers["x-goog-api-key"] == KEY
    assert request.json == {**BODY, "stream": True}


@pytest.mark.parametrize("cuts", [(3, 2.5, 4), (1.5, 1, 0.3, 6.9), (2.99, 0.01, 1.5)])
def test_cuts_are_resumed_without_a_gap_or_a_repeat(cuts: tuple[float, ...]) -> None:
    script = FakeInteraction(steps=STEPS, cut_after=cuts)
    expected = whole(script)
    with FakeGemini(interactions=[script]) as fake:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
        requests = fake.requests
    assert error is None
    assert body == expected  # every event exactly once, in order
    assert len(requests) == 1 + len(cuts)
    events = interaction_stream_events(script, "v1_fake-1", model=MODEL)
    ids = {event["event_id"] for event in events}
    for resumed in requests[1:]:
        assert resumed.method == "GET"
        assert resumed.path == "/v1beta/interactions/v1_fake-1"
        assert resumed.query["stream"] == "true"
        assert resumed.query["last_event_id"] in ids
        assert resumed.headers["x-goog-api-key"] == KEY
        assert "content-type" not in resumed.headers
        assert KEY not in json.dumps(resumed.query) + resumed.path


def test_an_async_client_resumes_too() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(4, 1.5))

    async def main(base_url: str) -> list[bytes]:
        async with httpx.AsyncClient() as client:
            source = from_interactions(BODY, api_key=KEY, base_url=base_url, client=client)
            items: list[bytes] = await source.pipe(ops.to_list())
            return items

    with FakeGemini(interactions=[script]) as fake:
        items = asyncio.run(main(fake.base_url))
        assert len(fake.requests) == 3
    assert b"".join(items) == whole(script)


def test_store_false_is_not_resumed_and_fails_typed_after_the_whole_events() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(5.5,))
    body_sent = {**BODY, "store": False}
    with FakeGemini(interactions=[script]) as fake:
        body, error = collect(from_interactions(body_sent, api_key=KEY, base_url=fake.base_url))
        assert len(fake.requests) == 1
    assert isinstance(error, GeminiTransportError)
    assert "store is false" in str(error)
    assert KEY not in str(error)
    assert events_of(body) == events_of(whole(script))[:5]


def test_a_cut_before_interaction_created_cannot_be_resumed() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(0.5,))
    with FakeGemini(interactions=[script]) as fake:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
        assert len(fake.requests) == 1
    assert isinstance(error, GeminiTransportError)
    assert body == b""


def test_a_body_that_just_stops_is_a_truncation_when_not_resumable() -> None:
    script = FakeInteraction(steps=STEPS)
    frames = [
        interaction_frame(e) for e in interaction_stream_events(script, "v1_fake-1", model=MODEL)
    ]
    short = FakeResponse(body=b"".join(frames[:4]))  # a complete response, without the end
    with FakeGemini(interactions=[short]) as fake:
        body, error = collect(
            from_interactions({**BODY, "store": False}, api_key=KEY, base_url=fake.base_url)
        )
    assert isinstance(error, TruncatedStreamError)
    assert "after 4 events" in str(error)
    assert body == b"".join(frames[:4])


def test_a_stored_body_that_just_stops_is_resumed() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(4, 2.5), clean_cuts=True)
    with FakeGemini(interactions=[script]) as fake:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
        assert len(fake.requests) == 3
    assert error is None
    assert body == whole(script)


def test_resumption_is_bounded() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(2, 0.5, 0.5, 0.5))
    with FakeGemini(interactions=[script]) as fake:
        source = from_interactions(BODY, api_key=KEY, base_url=fake.base_url, resume=2)
        body, error = collect(source)
        assert len(fake.requests) == 3  # the create, then two reconnections in a row
    assert isinstance(error, GeminiTransportError)
    assert "2 reconnections in a row failed" in str(error)
    assert events_of(body) == events_of(whole(script))[:2]


def test_resume_zero_never_reconnects() -> None:
    script = FakeInteraction(steps=STEPS, cut_after=(3,))
    with FakeGemini(interactions=[script]) as fake:
        source = from_interactions(BODY, api_key=KEY, base_url=fake.base_url, resume=0)
        body, error = collect(source)
        assert len(fake.requests) == 1
    assert isinstance(error, GeminiTransportError)
    assert "resume=0" in str(error)
    assert events_of(body) == events_of(whole(script))[:3]


def test_http_errors_are_typed_and_the_create_is_retried() -> None:
    unavailable = FakeResponse(
        status=503, error={"code": 503, "message": "Overloaded.", "status": "UNAVAILABLE"}
    )
    script = FakeInteraction(steps=STEPS)
    with FakeGemini(interactions=[unavailable, script]) as fake:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url, retry=2))
        assert error is None
        assert body == whole(script, "v1_fake-1")
        _, unknown = collect(
            from_interactions(
                {"model": "gemini-0", "input": "x"}, api_key=KEY, base_url=fake.base_url
            )
        )
    assert isinstance(unknown, GeminiAPIError)
    assert unknown.http_status == 404
    assert unknown.status == "NOT_FOUND"
    with FakeGemini(interactions=[unavailable]) as fake:
        _, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
    assert isinstance(error, GeminiAPIError)
    assert error.http_status == 503


def test_a_connection_refused_is_a_transport_error_without_the_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeGemini() as fake:
        base_url = fake.base_url
    caplog.set_level(logging.DEBUG)
    _, error = collect(from_interactions(BODY, api_key=KEY, base_url=base_url))
    assert isinstance(error, GeminiTransportError)
    assert KEY not in str(error)
    assert KEY not in caplog.text


def test_an_event_over_the_limit_stops_the_stream() -> None:
    script = FakeInteraction(steps=(text_step("x" * 5000),))
    with FakeGemini(interactions=[script]) as fake:
        source = from_interactions(BODY, api_key=KEY, base_url=fake.base_url, max_line_bytes=1000)
        body, error = collect(source)
    assert isinstance(error, MalformedStreamError)
    assert events_of(body) == events_of(whole(script))[:3]


def test_the_framer_reads_ids_from_json_and_any_line_end() -> None:
    framer = EventFramer()
    created = {"event_type": "interaction.created", "event_id": "e1"}
    created["interaction"] = {"id": "v1_x", "status": "in_progress"}  # type: ignore[assignment]
    data = json.dumps(created).encode()
    out = framer.feed(b"data: " + data + b"\r\n\r")
    assert out == b"data: " + data + b"\r\n\r"  # a blank line, whether an LF follows or not
    out = framer.feed(b'\n: keep-alive\r\rdata: {"event_type":"step.stop",')
    assert out == b"\n: keep-alive\r\r"  # the stray LF: an empty line, then a comment
    assert (framer.interaction_id, framer.last_event_id, framer.events) == ("v1_x", "e1", 1)
    assert framer.feed(b'"index":0,"event_id":"e2"}\n\n') == (
        b'data: {"event_type":"step.stop","index":0,"event_id":"e2"}\n\n'
    )
    assert framer.last_event_id == "e2"
    assert not framer.finished
    framer.feed(b"event: interaction.completed\nid: e3\ndata: {}\n\n")
    assert framer.finished
    assert framer.last_event_id == "e3"


def test_the_background_helpers_create_poll_cancel_and_delete() -> None:
    slow = FakeInteraction(steps=(text_step("a b c d e f", pieces=6),), pace=0.05)

    async def main(base_url: str) -> None:
        options: dict[str, Any] = {"api_key": KEY, "environ": {}}
        async with httpx.AsyncClient() as client:
            background = {**BODY, "background": True}
            created = await create_interaction(client, background, base_url, **options)
            assert created["status"] == "in_progress"
            polled = created
            for _ in range(200):
                polled = await get_interaction(client, created["id"], base_url, **options)
                if polled["status"] != "in_progress":
                    break
                await asyncio.sleep(0.02)
            assert polled["status"] == "completed"
            assert polled["steps"][0]["content"][0]["text"] == "a b c d e f"

            second = await create_interaction(client, background, base_url, **options)
            cancelled = await cancel_interaction(client, second["id"], base_url, **options)
            assert cancelled["status"] == "cancelled"
            assert await delete_interaction(client, second["id"], base_url, **options) == {}
            with pytest.raises(GeminiAPIError) as gone:
                await get_interaction(client, second["id"], base_url, **options)
            assert gone.value.http_status == 404
            with pytest.raises(InvalidRequestError):
                await get_interaction(client, "../models", base_url, **options)

    with FakeGemini(interactions=[slow]) as fake:
        asyncio.run(main(fake.base_url))
        assert all(r.headers["x-goog-api-key"] == KEY for r in fake.requests)
        assert fake.requests[0].json == {**BODY, "background": True, "stream": False}


def test_a_background_stream_is_resumed_while_it_runs() -> None:
    slow = FakeInteraction(steps=STEPS, pace=0.01, cut_after=(4, 3.5))
    with FakeGemini(interactions=[slow]) as fake:
        source = from_interactions(
            {**BODY, "background": True}, api_key=KEY, base_url=fake.base_url
        )
        body, error = collect(source)
    assert error is None
    assert body == whole(slow)


def test_a_stored_run_is_read_again_from_its_start() -> None:
    script = FakeInteraction(steps=STEPS)
    with FakeGemini(interactions=[script]) as fake:
        first, _ = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
        (run_id,) = fake.interaction_ids
        source = from_interactions({}, interaction_id=run_id, api_key=KEY, base_url=fake.base_url)
        body, error = collect(source)
        reads = fake.requests[1:]
    assert error is None
    assert body == first  # the same events, from interaction.created on
    assert [(r.method, r.path) for r in reads] == [("GET", f"/v1beta/interactions/{run_id}")]
    assert reads[0].query == {"stream": "true"}
    with pytest.raises(InvalidRequestError):
        from_interactions({}, interaction_id="../models", api_key=KEY)


def read_items(body: bytes) -> list[Any]:
    """The core Interactions reader's items for a body: SSE decoder, parser, step reader."""
    decoder, parser, reader = SSEDecoder(), InteractionsParser(), StepReader()
    items: list[Any] = []
    for event in decoder.feed(body) + decoder.close():
        for parsed in parser.feed(event):
            items += reader.feed(parsed)
    for parsed in parser.close():
        items += reader.feed(parsed)
    return items + reader.close()


def test_the_reader_reads_a_resumed_stream_as_the_uncut_one() -> None:
    cut = FakeInteraction(steps=STEPS, cut_after=(3, 4.5, 2.2))
    with FakeGemini(interactions=[cut]) as fake:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url))
    assert error is None
    items = read_items(body)
    assert items == read_items(whole(FakeInteraction(steps=STEPS)))
    text = "".join(i.text for i in items if isinstance(i, Text) and not i.thought)
    assert text == "The weather in Paris is sunny today."
    (call,) = [i for i in items if isinstance(i, ToolCall)]
    assert (call.name, call.id, call.arguments) == ("get_weather", "call_1", '{"city":"Paris"}')
    assert [i.reason for i in items if isinstance(i, End)] == ["requires_action"]


def test_reset_http2_streams_are_resumed() -> None:
    pytest.importorskip("h2", reason="h2 is missing (pip install 'rxgem[http2]')")
    script = FakeInteraction(steps=STEPS, cut_after=(2, 3.5))
    with (
        FakeGemini(interactions=[script], http2=True) as fake,
        httpx.Client(http2=True, http1=False) as client,
    ):
        source = from_interactions(BODY, api_key=KEY, base_url=fake.base_url, client=client)
        body, error = collect(source)
        assert len(fake.requests) == 3
    assert error is None
    assert body == whole(script)


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_the_framer_gives_the_same_events_however_the_body_is_cut(newline: bytes) -> None:
    body = whole(FakeInteraction(steps=STEPS)).replace(b"\n", newline)
    framer = EventFramer()
    framer.feed(body)
    assert framer.finished
    expected = (framer.events, framer.interaction_id, framer.last_event_id)
    rng = random.Random(27)
    for _ in range(40):
        cuts = sorted(rng.sample(range(1, len(body)), rng.randint(1, 60)))
        pieces = [body[a:b] for a, b in itertools.pairwise([0, *cuts, len(body)])]
        framer = EventFramer()
        out = [framer.feed(piece) for piece in pieces]
        assert b"".join(out) == body
        for emitted in filter(None, out):
            assert emitted.endswith((newline * 2, b"\r\n\r"))
        assert (framer.events, framer.interaction_id, framer.last_event_id) == expected
