"""What an Interactions upstream sends is checked as it comes, and resumption is bounded.

An outside probe found: an ``interaction.created`` id such as ``../../models/x`` followed by
a cut made the reconnection raise outside the loop's ``try``, so the task died and the
subscriber heard nothing, ever; an upstream that repeats the event it was resumed after
had it delivered twice (text ``<1><2><2><3>...``), and one that cuts every response after
one new event was reconnected to without limit or pause (5,769 requests in 15 s). The
upstreams here are real HTTP servers on 127.0.0.1: FakeGemini, or a small one of the test's
own that misbehaves as the probe's did.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import reactivex
import reactivex.operators as ops
from pipeline_harness import collect_sync

from rxgem.core import MalformedStreamError, TruncatedStreamError
from rxgem.testing import FakeGemini, FakeInteraction, text_step
from rxgem.transport import (
    cancel_interaction,
    create_interaction,
    from_interactions,
    get_interaction,
    is_google_interaction_id,
)
from rxgem.transport._interaction_frames import EventFramer
from rxgem.transport._interactions_exchange import DEFAULT_MAX_RESUMES

KEY = "test-key-secret"
BODY: dict[str, Any] = {"model": "gemini-3-flash-preview", "input": "Hi"}
BAD_IDS = ["../../models/x", "a/b", "x?alt=sse", "%2e%2e", ".hidden", "", "x" * 257, "a b"]


def collect(source: reactivex.Observable[bytes], timeout: float = 15) -> tuple[bytes, Any]:
    items, error = collect_sync(source, timeout=timeout)
    return b"".join(items), error


# -- the ids Google gives, checked where they are received ------------------------------


def test_ids_as_google_gives_them_and_others() -> None:
    for good in (
        "v1_ChdzdW40YWFHNkNOT0V6N0lQbjduUnVRWRIXc3VuNGFhRzZDTk9FejdJUG43blJ1UVk",
        "v1_fake-1",
        "abc.def=",
        "_x",
    ):
        assert is_google_interaction_id(good), good
    for bad in [*BAD_IDS, None, 7]:
        assert not is_google_interaction_id(bad), bad


@pytest.mark.parametrize("bad", BAD_IDS)
def test_the_framer_stops_at_a_created_event_whose_id_is_not_one(bad: str) -> None:
    framer = EventFramer()
    created = {"event_type": "interaction.created", "interaction": {"id": bad}}
    body = b": hello\n\nevent: interaction.created\nid: e1\ndata: " + json.dumps(created).encode()
    out = framer.feed(body + b"\n\nevent: step.start\nid: e2\ndata: {}\n\n")
    assert out == b": hello\n\n"  # what came before it, and not it
    assert isinstance(framer.failure, MalformedStreamError)
    assert framer.interaction_id is None
    assert framer.feed(b"data: {}\n\n") == b""


def _cut_after_created(bad: str) -> FakeInteraction:
    return FakeInteraction(id=bad, steps=(text_step("a b c", pieces=3),), cut_after=(1,))


@pytest.mark.parametrize("bad", ["../../models/x", "x?alt=sse#"])
def test_a_bad_id_then_a_cut_ends_the_stream_typed_and_asks_nothing_more(bad: str) -> None:
    with FakeGemini(interactions=[_cut_after_created(bad)]) as fake:
        start = time.monotonic()
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=fake.base_url), 10)
        assert len(fake.requests) == 1  # no request made with the id
    assert time.monotonic() - start < 5
    assert isinstance(error, MalformedStreamError)
    assert "not an interaction id" in str(error)
    assert body == b""


def test_a_bad_id_on_an_async_client_ends_the_stream_typed() -> None:
    async def main(base_url: str) -> tuple[list[bytes], BaseException | None]:
        async with httpx.AsyncClient() as client:
            source = from_interactions(BODY, api_key=KEY, base_url=base_url, client=client)
            try:
                items = await asyncio.wait_for(source.pipe(ops.to_list()), 10)
            except MalformedStreamError as error:
                return [], error
            return items, None

    with FakeGemini(interactions=[_cut_after_created("../../models/x")]) as fake:
        items, error = asyncio.run(main(fake.base_url))
        assert len(fake.requests) == 1
    assert isinstance(error, MalformedStreamError)
    assert items == []


def test_the_resources_refuse_an_answer_whose_id_is_not_one() -> None:
    run = FakeInteraction(id="../../models/x", steps=(text_step("a"),))

    async def main(base_url: str) -> list[BaseException]:
        options: dict[str, Any] = {"api_key": KEY, "environ": {}}
        errors: list[BaseException] = []
        async with httpx.AsyncClient() as client:
            for call in (
                create_interaction(client, {**BODY, "background": True}, base_url, **options),
                get_interaction(client, "v1_fine", base_url, **options),
                cancel_interaction(client, "v1_fine", base_url, **options),
            ):
                try:
                    await call
                except Exception as error:
                    errors.append(error)
        return errors

    answer = json.dumps({"id": "../../models/x", "status": "completed"}).encode()
    with FakeGemini(interactions=[run]) as fake:
        create_error, *_ = asyncio.run(main(fake.base_url))
    assert isinstance(create_error, MalformedStreamError)
    with _serving(lambda handler: handler.answer(200, answer, "application/json")) as base_url:
        errors = asyncio.run(main(base_url))
    assert len(errors) == 3
    assert all(isinstance(e, MalformedStreamError) for e in errors), errors


# -- any exception of the loops reaches the subscriber -----------------------------------


def test_an_exception_of_the_generate_content_loop_reaches_the_subscriber() -> None:
    import rxgem

    with FakeGemini() as fake:
        source = rxgem.from_gemini(
            {"contents": [], "x": object()}, model="m", api_key=KEY, base_url=fake.base_url
        )
        _, error = collect(source, 10)
    assert isinstance(error, TypeError)


# -- an upstream that repeats itself, or cuts forever ------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, *_: Any) -> None:
        pass

    def answer(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.requests.append(("POST", self.path))
        self.server.behave(self)

    def do_GET(self) -> None:
        self.server.requests.append(("GET", self.path))
        self.server.behave(self)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    requests: list[tuple[str, str]]
    behave: Any


@contextmanager
def _serving(behave: Any) -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.requests = []
    server.behave = behave
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1beta"
    finally:
        server.shutdown()
        server.server_close()


def _event(number: int, last: int | None = None) -> bytes:
    """Event ``e<number>``: the created one, a text delta ``<n>``, or the completed one."""
    if number == 1:
        kind = "interaction.created"
        data: dict[str, Any] = {"interaction": {"id": "v1_loop", "status": "in_progress"}}
    elif number == last:
        kind = "interaction.completed"
        data = {"interaction": {"id": "v1_loop", "status": "completed"}}
    else:
        kind = "step.delta"
        data = {"index": 0, "delta": {"type": "text", "text": f"<{number - 1}>"}}
    payload = json.dumps({"event_type": kind, "event_id": f"e{number}", **data})
    return f"event: {kind}\nid: e{number}\ndata: {payload}\n\n".encode()


def _after(handler: _Handler) -> int:
    """The number of the event the request resumes after (0 for the create)."""
    query = parse_qs(urlsplit(handler.path).query)
    return int(query["last_event_id"][0][1:]) if "last_event_id" in query else 0


def _repeats_then_one_more(last: int | None) -> Any:
    """Each response: the event it resumes after again, then one new one, then a cut
    (the body ends without the stream's end); with ``last``, event ``last`` completes."""

    def behave(handler: _Handler) -> None:
        after = _after(handler)
        first = max(1, after)
        numbers = range(first, after + 2) if after else range(1, 3)
        body = b"".join(_event(n, last) for n in numbers)
        handler.answer(200, body, "text/event-stream")

    return behave


def _texts(body: bytes) -> str:
    out = ""
    for block in body.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                delta = json.loads(line[6:]).get("delta")
                out += delta["text"] if delta else ""
    return out


def test_an_event_the_upstream_repeats_is_delivered_once() -> None:
    with _serving(_repeats_then_one_more(last=7)) as base_url:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=base_url))
    assert error is None
    assert _texts(body) == "<1><2><3><4><5>"
    ids = [line for line in body.split(b"\n") if line.startswith(b"id: ")]
    assert len(ids) == len(set(ids)) == 7


def test_reconnections_are_capped_in_all_and_end_typed() -> None:
    with _serving(_repeats_then_one_more(last=None)) as base_url:
        source = from_interactions(BODY, api_key=KEY, base_url=base_url, max_resumes=5)
        start = time.monotonic()
        body, error = collect(source, 20)
        elapsed = time.monotonic() - start
    assert isinstance(error, TruncatedStreamError)
    assert "max_resumes=5" in str(error)
    assert _texts(body) == "<1><2><3><4><5><6>"  # the create's one, then one per reconnection
    assert elapsed < 10


def test_the_default_cap_holds_an_endless_upstream_to_a_few_requests() -> None:
    server_requests: list[Any] = []

    def behave(handler: _Handler) -> None:
        server_requests.append(handler.path)
        _repeats_then_one_more(last=None)(handler)

    with _serving(behave) as base_url:
        source = from_interactions(BODY, api_key=KEY, base_url=base_url)
        _, error = collect(source, 60)
    assert isinstance(error, TruncatedStreamError)
    assert len(server_requests) == 1 + DEFAULT_MAX_RESUMES


def test_reconnections_without_a_new_event_back_off_and_stop() -> None:
    """An upstream that sends only the event it resumes after, again and again."""
    times: list[float] = []

    def behave(handler: _Handler) -> None:
        times.append(time.monotonic())
        after = _after(handler)
        numbers = [1, 2] if not after else [after]
        handler.answer(200, b"".join(_event(n) for n in numbers), "text/event-stream")

    with _serving(behave) as base_url:
        body, error = collect(from_interactions(BODY, api_key=KEY, base_url=base_url, resume=3))
    assert isinstance(error, TruncatedStreamError)
    assert "3 reconnections in a row failed" in str(error)
    assert _texts(body) == "<1>"
    assert len(times) == 4  # the create, then three reconnections
    waits = [b - a for a, b in itertools.pairwise(times)]
    assert waits[1] >= 0.12  # the second in a row waits half of 0.25 s at least
    assert waits[2] >= 0.25  # the third, half of 0.5 s at least
    assert max(waits) < 2


def test_resume_options_are_checked_at_call_time() -> None:
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="max_resumes"):
            from_interactions(BODY, api_key=KEY, max_resumes=bad)  # type: ignore[arg-type]
