"""rxgem.testing.FakeGemini, exercised over loopback with real httpx clients."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import socket
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pipeline_harness import QUOTA_ERROR

import rxgem.testing
from rxgem import samples
from rxgem.testing import FakeGemini, FakeResponse, ReceivedRequest, gemini_request_problems
from rxgem.testing._gemini_validation import invalid_argument

STREAM = "/models/gemini-2.5-flash:streamGenerateContent"
REQUEST = {"contents": [{"role": "user", "parts": [{"text": "Hello"}]}]}
TEXT = samples.read("text")
KEEPALIVE = b": keep-alive\n\n"


def event_ends(body: bytes) -> list[int]:
    """The offsets just after each SSE event (for ``split_at``)."""
    return [m.end() for m in re.finditer(rb"\r?\n\r?\n", body)]


def stream_raw(
    client: httpx.Client, fake: FakeGemini, **kwargs: Any
) -> tuple[httpx.Response, list[tuple[float, bytes]]]:
    """POST to the stream endpoint; every raw piece with its arrival time."""
    pieces: list[tuple[float, bytes]] = []
    with client.stream(
        "POST", f"{fake.base_url}{STREAM}", params={"alt": "sse"}, json=REQUEST, **kwargs
    ) as response:
        for piece in response.iter_raw():
            pieces.append((time.monotonic(), piece))
    return response, pieces


def drain(response: httpx.Response, received: bytearray) -> None:
    """Collect every raw piece into ``received`` as it arrives."""
    for piece in response.iter_raw():
        received += piece


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as c:
        yield c


# --------------------------------------------------------------------------- bodies


def test_every_sample_arrives_byte_exact(client: httpx.Client) -> None:
    names = samples.names()
    with FakeGemini(*(samples.read(name) for name in names)) as fake:
        for name in names:
            response, pieces = stream_raw(client, fake)
            assert response.status_code == 200
            assert response.headers["content-type"] == "text/event-stream"
            assert response.headers["transfer-encoding"] == "chunked"
            assert b"".join(p for _, p in pieces) == samples.read(name), name
        assert fake.completed == len(names)
        assert fake.disconnects == 0


def test_default_response_is_the_text_sample(client: httpx.Client) -> None:
    with FakeGemini() as fake:
        response = client.post(f"{fake.base_url}{STREAM}?alt=sse", json=REQUEST)
    assert response.content == TEXT


def test_empty_body_and_iter_bytes(client: httpx.Client) -> None:
    with FakeGemini(b"", FakeResponse(body=TEXT, chunk_size=7)) as fake:
        assert client.post(f"{fake.base_url}{STREAM}", json=REQUEST).content == b""
        with client.stream("POST", f"{fake.base_url}{STREAM}", json=REQUEST) as response:
            assert b"".join(response.iter_bytes()) == TEXT


def test_pieces_arrive_separately_after_the_pause(client: httpx.Client) -> None:
    cuts = event_ends(TEXT)[:2]
    pause = 0.2
    with FakeGemini(FakeResponse(body=TEXT, split_at=cuts, pause=pause)) as fake:
        _, pieces = stream_raw(client, fake)
    expected = [TEXT[: cuts[0]], TEXT[cuts[0] : cuts[1]], TEXT[cuts[1] :]]
    assert [p for _, p in pieces] == expected
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(pieces)]
    assert all(gap >= pause - 0.02 for gap in gaps), gaps


def test_chunk_size_trickle(client: httpx.Client) -> None:
    body = TEXT[:1000]
    with FakeGemini(FakeResponse(body=body, chunk_size=300, pause=0.03)) as fake:
        _, pieces = stream_raw(client, fake)
    assert [len(p) for _, p in pieces] == [300, 300, 300, 100]
    assert b"".join(p for _, p in pieces) == body


def test_split_at_and_chunk_size_combine() -> None:
    response = FakeResponse(body=b"0123456789", split_at=[0, 3, 10], chunk_size=4)
    assert response._pieces() == [b"012", b"3", b"4567", b"89"]


# --------------------------------------------------------------------------- delay


def test_delay_holds_back_the_headers(client: httpx.Client) -> None:
    with FakeGemini(FakeResponse(body=TEXT, delay=0.3)) as fake:
        started = time.monotonic()
        with client.stream("POST", f"{fake.base_url}{STREAM}", json=REQUEST) as response:
            to_headers = time.monotonic() - started
            assert response.read() == TEXT
    assert to_headers >= 0.3


def test_read_timeout_shorter_than_delay() -> None:
    with FakeGemini(FakeResponse(body=TEXT, delay=2.0)) as fake:
        with httpx.Client(timeout=httpx.Timeout(5, read=0.1)) as short:
            started = time.monotonic()
            with pytest.raises(httpx.ReadTimeout):
                short.post(f"{fake.base_url}{STREAM}", json=REQUEST)
        # The client gave up during the delay: the server notices it at once.
        assert fake.wait_for_disconnect(1.0)
        assert time.monotonic() - started < 1.5
        assert fake.disconnects == 1
        assert fake.completed == 0


# --------------------------------------------------------------------------- errors


def test_error_object_uses_its_code_and_retry_after(client: httpx.Client) -> None:
    response = FakeResponse(error=QUOTA_ERROR, headers={"Retry-After": "2"})
    with FakeGemini(response) as fake:
        reply = client.post(f"{fake.base_url}{STREAM}", params={"alt": "sse"}, json=REQUEST)
    assert reply.status_code == 429
    assert reply.headers["retry-after"] == "2"
    assert reply.headers["content-type"] == "application/json; charset=UTF-8"
    assert "transfer-encoding" not in reply.headers
    assert int(reply.headers["content-length"]) == len(reply.content)
    assert reply.json() == {"error": QUOTA_ERROR}
    assert reply.json()["error"]["details"][1]["retryDelay"] == "34.4s"
    assert reply.text == json.dumps({"error": QUOTA_ERROR}, indent=2) + "\n"


def test_explicit_status_wins_over_error_code(client: httpx.Client) -> None:
    error = {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}
    with FakeGemini(FakeResponse(status=502, error=error)) as fake:
        reply = client.post(f"{fake.base_url}{STREAM}", json=REQUEST)
    assert reply.status_code == 502
    assert reply.json() == {"error": error}


def test_one_element_array_error_body(client: httpx.Client) -> None:
    body = b'[{"error": {"code": 500, "message": "Internal error.", "status": "INTERNAL"}}]'
    with FakeGemini(FakeResponse(status=500, body=body)) as fake:
        reply = client.post(f"{fake.base_url}{STREAM}", json=REQUEST)
    assert reply.status_code == 500
    assert reply.content == body
    assert reply.headers["content-type"] == "application/json; charset=UTF-8"
    assert reply.json()[0]["error"]["status"] == "INTERNAL"


def test_non_json_error_body(client: httpx.Client) -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
    response = FakeResponse(status=502, body=page, content_type="text/html; charset=UTF-8")
    with FakeGemini(response) as fake:
        reply = client.post(f"{fake.base_url}{STREAM}", json=REQUEST)
    assert reply.status_code == 502
    assert reply.reason_phrase == "Bad Gateway"
    assert reply.headers["content-type"] == "text/html; charset=UTF-8"
    assert reply.content == page


def test_raw_error_is_appended_pretty_printed(client: httpx.Client) -> None:
    events = TEXT[: event_ends(TEXT)[1]]
    cancelled = {"code": 499, "message": "The operation was cancelled.", "status": "CANCELLED"}
    with FakeGemini(FakeResponse(body=events, raw_error=cancelled)) as fake:
        response, pieces = stream_raw(client, fake)
    assert response.status_code == 200
    received = b"".join(p for _, p in pieces)
    raw = received[len(events) :]
    assert received.startswith(events)
    assert pieces[-1][1] == raw  # the raw error is written on its own
    assert raw == (json.dumps({"error": cancelled}, indent=2) + "\n").encode()
    assert raw.startswith(b'{\n  "error": {\n    "code": 499,\n')
    assert b"\r" not in raw
    assert json.loads(raw) == {"error": cancelled}


def test_raw_error_reproduces_the_error_mid_stream_sample() -> None:
    sample = samples.read("error_mid_stream")
    start = sample.index(b'{\n  "error"')
    response = FakeResponse(body=sample[:start], raw_error=json.loads(sample[start:])["error"])
    assert b"".join(response._pieces()) == sample


# --------------------------------------------------------------------------- dropped connections


@pytest.mark.parametrize(
    ("split_at", "drop_after"),
    [([], 100), ([100, 300], 300), ([100, 300], 250), ([], len(TEXT)), ([], 0)],
    ids=["mid-body", "piece-boundary", "mid-piece", "no-terminator", "no-body"],
)
def test_drop_after_cuts_the_body(
    client: httpx.Client, split_at: list[int], drop_after: int
) -> None:
    response = FakeResponse(body=TEXT, split_at=split_at, drop_after=drop_after)
    received = bytearray()
    with FakeGemini(response, TEXT) as fake:
        with client.stream("POST", f"{fake.base_url}{STREAM}", json=REQUEST) as reply:
            assert reply.status_code == 200
            with pytest.raises(httpx.RemoteProtocolError):
                drain(reply, received)
        assert bytes(received) == TEXT[:drop_after]
        assert (fake.completed, fake.disconnects) == (0, 0)
        # The next request opens a fresh connection and still works.
        assert client.post(f"{fake.base_url}{STREAM}", json=REQUEST).content == TEXT
        assert (fake.completed, fake.disconnects) == (1, 0)


def test_drop_after_in_an_error_body(client: httpx.Client) -> None:
    with (
        FakeGemini(FakeResponse(error=QUOTA_ERROR, drop_after=20)) as fake,
        pytest.raises(httpx.RemoteProtocolError),
    ):
        client.post(f"{fake.base_url}{STREAM}", json=REQUEST)


# --------------------------------------------------------------------------- keep-alive comments


def test_keepalive_comments_during_pauses(client: httpx.Client) -> None:
    cut = event_ends(TEXT)[0]
    response = FakeResponse(body=TEXT, split_at=[cut], pause=0.35, keepalive=0.1)
    with FakeGemini(response) as fake:
        _, pieces = stream_raw(client, fake)
    received = b"".join(p for _, p in pieces)
    assert received.startswith(TEXT[:cut] + KEEPALIVE)
    assert 2 <= received.count(KEEPALIVE) <= 3
    assert received.replace(KEEPALIVE, b"") == TEXT
    assert KEEPALIVE in [p for _, p in pieces]  # each comment is a chunk of its own


def test_no_keepalive_comments_for_short_pauses(client: httpx.Client) -> None:
    response = FakeResponse(body=TEXT, chunk_size=500, pause=0.02, keepalive=0.5)
    with FakeGemini(response) as fake:
        _, pieces = stream_raw(client, fake)
    assert b"".join(p for _, p in pieces) == TEXT


# --------------------------------------------------------------------------- requests


def test_request_log(client: httpx.Client) -> None:
    with FakeGemini() as fake:
        client.post(
            f"{fake.base_url}{STREAM}",
            params={"alt": "sse"},
            headers={"X-Goog-Api-Key": "secret", "X-Custom": "1"},
            json=REQUEST,
        )
        client.get(f"{fake.base_url}/models", params={"pageSize": "5"})
        log = fake.requests
        log.clear()  # a snapshot: the server's own log is untouched
        first, second = fake.requests
    assert isinstance(first, ReceivedRequest)
    assert first.method == "POST"
    assert first.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    assert first.query == {"alt": "sse"}
    assert first.headers["x-goog-api-key"] == "secret"
    assert first.headers["x-custom"] == "1"
    assert first.headers["content-type"] == "application/json"
    assert all(name == name.lower() for name in first.headers)
    assert first.json == REQUEST
    assert json.loads(first.body) == REQUEST
    assert (second.method, second.path, second.query, second.body) == (
        "GET",
        "/v1beta/models",
        {"pageSize": "5"},
        b"",
    )


def test_responses_in_order_then_the_last_repeats(client: httpx.Client) -> None:
    with FakeGemini(b"data: {}\n\n", FakeResponse(error=QUOTA_ERROR), b"last") as fake:
        url = f"{fake.base_url}{STREAM}"
        replies = [client.post(url, json=REQUEST) for _ in range(5)]
        assert client.get(url).status_code == 404  # uses up no response
        assert client.post(url, json=REQUEST).content == b"last"
    assert [r.status_code for r in replies] == [200, 429, 200, 200, 200]
    assert [r.content for r in replies[2:]] == [b"last"] * 3
    assert replies[0].content == b"data: {}\n\n"
    # keep-alive: every request went over the same connection
    ports = {r.extensions["network_stream"].get_extra_info("client_addr") for r in replies}
    assert len(ports) == 1
    assert "connection" not in replies[0].headers


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/v1beta/models/gemini-2.5-flash:generateContent"),
        ("POST", "/v1/models/gemini-2.5-flash:streamGenerateContent"),
        ("POST", "/nope"),
        ("GET", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
        ("PUT", "/v1beta/models/gemini-2.5-flash:streamGenerateContent"),
    ],
)
def test_unknown_route_is_a_google_404(client: httpx.Client, method: str, path: str) -> None:
    # scripted responses are for streamGenerateContent only (scenarios answer generateContent)
    with FakeGemini(TEXT) as fake:
        base = f"http://127.0.0.1:{fake.port}"
        reply = client.request(method, f"{base}{path}", json=REQUEST)
        assert reply.status_code == 404
        error = reply.json()["error"]
        assert error["code"] == 404
        assert error["status"] == "NOT_FOUND"
        assert path in error["message"]
        assert fake.requests[0].method == method
        assert fake.requests[0].json == REQUEST
        # the route still serves the first response afterwards
        assert client.post(f"{fake.base_url}{STREAM}", json=REQUEST).content == TEXT


def test_head_request_gets_no_body(client: httpx.Client) -> None:
    with FakeGemini() as fake:
        reply = client.head(f"{fake.base_url}{STREAM}")
        assert reply.status_code == 404
        assert reply.content == b""
        assert client.post(f"{fake.base_url}{STREAM}", json=REQUEST).content == TEXT


def test_raw_socket_chunked_request_body_pipelining_and_expect() -> None:
    body = json.dumps(REQUEST).encode()
    path = "/v1beta/models/m%2Dx:streamGenerateContent?alt=sse&x=1&x=2&empty="
    chunked = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{5:x}\r\n".encode()
        + body[:5]
        + f"\r\n{len(body) - 5:x};ext=1\r\n".encode()
        + body[5:]
        + b"\r\n0\r\nTrailer: t\r\n\r\n"
    )
    expect = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with (
        FakeGemini(b"one", b"two") as fake,
        socket.create_connection(("127.0.0.1", fake.port)) as s,
    ):
        s.settimeout(5)
        s.sendall(chunked + chunked)  # two pipelined requests in one write
        s.sendall(expect)
        data = b""
        while b"100 Continue" not in data:
            data += s.recv(65536)
        s.sendall(body)
        while chunk := s.recv(65536):
            data += chunk
        log = fake.requests
    assert data.count(b"HTTP/1.1 200 OK\r\n") == 3
    assert data.index(b"\r\n3\r\none\r\n0\r\n\r\n") < data.index(b"\r\n3\r\ntwo\r\n0\r\n\r\n")
    assert b"HTTP/1.1 100 Continue\r\n\r\n" in data
    assert data.endswith(b"3\r\ntwo\r\n0\r\n\r\n")
    assert b"Connection: close" in data
    assert [r.json for r in log] == [REQUEST] * 3
    assert log[0].path == "/v1beta/models/m-x:streamGenerateContent"
    assert log[0].query == {"alt": "sse", "x": "2", "empty": ""}
    assert log[0].headers["transfer-encoding"] == "chunked"


def test_raw_socket_malformed_request_gets_400() -> None:
    with FakeGemini() as fake, socket.create_connection(("127.0.0.1", fake.port)) as s:
        s.settimeout(5)
        s.sendall(b"NONSENSE\r\n\r\n")
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        assert fake.requests == []
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 Bad Request\r\n")
    assert json.loads(body)["error"]["code"] == 400


def exchange(fake: FakeGemini, data: bytes) -> bytes:
    """Send ``data`` on a new connection; all the server sends until it closes."""
    with socket.create_connection(("127.0.0.1", fake.port)) as s:
        s.settimeout(5)
        s.sendall(data)
        received = b""
        with contextlib.suppress(ConnectionResetError):  # unread input can reset
            while piece := s.recv(65536):
                received += piece
    return received


MODEL = b"GET /v1beta/models/gemini-2.5-flash HTTP/1.1\r\n"


def test_lenient_request_syntax_is_understood() -> None:
    """Obsolete line folding is unfolded into one space (RFC 9112 §5.2 allows it
    instead of a 400), and bare LF line ends and empty lines before a request are
    accepted (RFC 9112 §2.2)."""
    folded = MODEL + b"Host: x\r\nX-Folded: a\r\n \t b\r\nConnection: close\r\n\r\n"
    bare_lf = MODEL.replace(b"\r\n", b"\n") + b"Host: x\nX-Lf: 1\nConnection: close\n\n"
    with FakeGemini() as fake:
        for data in (folded, bare_lf, b"\r\n\n" + folded):
            assert exchange(fake, data).startswith(b"HTTP/1.1 200 OK\r\n")
        log = fake.requests
    assert log[0].headers["x-folded"] == log[2].headers["x-folded"] == "a b"
    assert log[1].headers["x-lf"] == "1"
    assert log[1].path == "/v1beta/models/gemini-2.5-flash"


BIG_VALUE = b"a" * 70_000


@pytest.mark.parametrize(
    ("data", "status"),
    [
        pytest.param(MODEL + b" x: 1\r\nHost: x\r\n\r\n", 400, id="fold-at-the-start"),
        pytest.param(MODEL + b"Host: x\r\nno colon here\r\n\r\n", 400, id="no-colon"),
        pytest.param(MODEL + b"Host : x\r\n\r\n", 400, id="space-before-colon"),
        pytest.param(MODEL + b"\r\n", 400, id="no-host-in-1.1"),
        pytest.param(b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400, id="two-spaces"),
        pytest.param(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400, id="tls-hello"),
        pytest.param(
            MODEL + b"Host: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
            400,
            id="conflicting-lengths",
        ),
        pytest.param(
            MODEL + b"Host: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX0\r\n\r\n",
            400,
            id="chunk-without-crlf",
        ),
        pytest.param(
            MODEL + b"Host: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, id="transfer-coding"
        ),
        pytest.param(MODEL + b"Host: x\r\nX-Big: " + BIG_VALUE, 431, id="endless-header-line"),
        pytest.param(
            MODEL + b"Host: x\r\nX-Big: " + BIG_VALUE + b"\r\n\r\n", 431, id="huge-header-line"
        ),
        pytest.param(
            MODEL + b"Host: x\r\n" + b"X-Many: abcdefgh\r\n" * 5000 + b"\r\n",
            431,
            id="huge-head",
        ),
        pytest.param(b"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505, id="http-2.0"),
    ],
)
def test_a_request_the_server_cannot_take_gets_a_google_error_and_a_close(
    data: bytes, status: int
) -> None:
    with FakeGemini() as fake:
        answer = exchange(fake, data)  # returns once the server closed the connection
        assert fake.requests == []
        assert exchange(fake, MODEL + b"Host: x\r\nConnection: close\r\n\r\n").startswith(
            b"HTTP/1.1 200 OK\r\n"
        )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode())
    assert b"\r\nConnection: close" in head
    assert json.loads(body)["error"]["code"] == status


def test_an_http_1_0_client_gets_its_stream_until_the_connection_closes() -> None:
    with FakeGemini(b"one", b"two") as fake:
        answer = exchange(fake, b"POST /v1beta/models/m:streamGenerateContent HTTP/1.0\r\n\r\n")
        keep_alive = exchange(
            fake,
            b"POST /v1beta/models/m:streamGenerateContent HTTP/1.1\r\nHost: x\r\n\r\n"
            b"POST /v1beta/models/m:streamGenerateContent HTTP/1.1\r\nHost: x\r\n"
            b"Content-Length: 2\r\nConnection: close\r\n\r\n{}",
        )
        assert [r.body for r in fake.requests] == [b"", b"", b"{}"]
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"\r\nConnection: close" in head
    assert b"Transfer-Encoding" not in head
    assert b"Content-Length" not in head
    assert body == b"one"
    assert keep_alive.count(b"HTTP/1.1 200 OK\r\n") == 2
    assert keep_alive.endswith(b"\r\n3\r\ntwo\r\n0\r\n\r\n")


# --------------------------------------------------------------------------- client going away


def test_client_going_away_mid_pause_is_noticed_within_a_second(client: httpx.Client) -> None:
    cut = event_ends(TEXT)[0]
    with FakeGemini(FakeResponse(body=TEXT, split_at=[cut], pause=30.0), TEXT) as fake:
        assert not fake.wait_for_disconnect(0.01)
        with client.stream("POST", f"{fake.base_url}{STREAM}", json=REQUEST) as response:
            pieces = response.iter_raw()  # (a discarded generator would close the response)
            assert next(pieces) == TEXT[:cut]
            time.sleep(0.1)
            assert fake.disconnects == 0
            gone_at = time.monotonic()  # leaving the block closes the connection
        assert fake.wait_for_disconnect(1.0)
        assert time.monotonic() - gone_at < 1.0
        assert fake.disconnects == 1
        assert fake.completed == 0
        # the server goes on serving other clients
        assert client.post(f"{fake.base_url}{STREAM}", json=REQUEST).status_code == 200
        closing = time.monotonic()
    assert time.monotonic() - closing < 1.0


def test_close_during_a_long_pause_is_prompt_and_cuts_the_body(client: httpx.Client) -> None:
    fake = FakeGemini(FakeResponse(body=TEXT, split_at=[10], pause=30.0)).start()
    try:
        with client.stream("POST", f"{fake.base_url}{STREAM}", json=REQUEST) as response:
            pieces = response.iter_raw()
            assert next(pieces) == TEXT[:10]
            closing = time.monotonic()
            fake.close()
            assert time.monotonic() - closing < 1.0
            with pytest.raises(httpx.RemoteProtocolError):
                next(pieces)
    finally:
        fake.close()
    assert fake.disconnects == 0


# --------------------------------------------------------------------------- asyncio


def test_async_client_streams_pieces() -> None:
    cuts = event_ends(TEXT)

    async def main() -> tuple[list[bytes], list[float], bytes]:
        response = FakeResponse(body=TEXT, split_at=cuts, pause=0.05)
        async with (
            FakeGemini(response, FakeResponse(error=QUOTA_ERROR)) as fake,
            httpx.AsyncClient(base_url=fake.base_url, timeout=10) as client,
        ):
            pieces: list[bytes] = []
            times: list[float] = []
            async with client.stream("POST", STREAM, json=REQUEST) as reply:
                async for piece in reply.aiter_raw():
                    pieces.append(piece)
                    times.append(time.monotonic())
            error = await client.post(STREAM, json=REQUEST)
            assert error.status_code == 429
            return pieces, times, fake.requests[1].body

    pieces, times, second_body = asyncio.run(main())
    assert b"".join(pieces) == TEXT
    assert len(pieces) == len(cuts)
    assert all(b - a >= 0.03 for a, b in itertools.pairwise(times))
    assert json.loads(second_body) == REQUEST


def test_async_delay_and_disconnect_do_not_block_the_loop() -> None:
    async def main() -> tuple[int, bool, float, int]:
        delayed = FakeResponse(body=TEXT, delay=0.3)
        slow = FakeResponse(body=TEXT, split_at=[50], pause=30.0)
        async with (
            FakeGemini(delayed, slow) as fake,
            httpx.AsyncClient(base_url=fake.base_url, timeout=10) as client,
        ):
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            task = asyncio.create_task(ticker())
            assert (await client.post(STREAM, json=REQUEST)).content == TEXT
            task.cancel()
            async with client.stream("POST", STREAM, json=REQUEST) as reply:
                pieces = reply.aiter_raw()
                assert await anext(pieces) == TEXT[:50]
                gone_at = time.monotonic()
            gone = await asyncio.to_thread(fake.wait_for_disconnect, 1.0)
            return ticks, gone, time.monotonic() - gone_at, fake.disconnects

    ticks, gone, took, disconnects = asyncio.run(main())
    assert ticks >= 10  # the loop kept running while the server was delaying
    assert gone
    assert took < 1.0
    assert disconnects == 1


def test_await_for_disconnect_waits_without_blocking_the_loop() -> None:
    async def main() -> tuple[bool, int, float, bool, int]:
        slow = FakeResponse(body=TEXT, split_at=[50], pause=30.0)
        async with (
            FakeGemini(slow) as fake,
            httpx.AsyncClient(base_url=fake.base_url, timeout=10) as client,
        ):
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            task = asyncio.create_task(ticker())
            early = await fake.await_for_disconnect(0.3)  # nobody went away yet
            waited = ticks
            async with client.stream("POST", STREAM, json=REQUEST) as reply:
                assert await anext(reply.aiter_raw()) == TEXT[:50]
                gone_at = time.monotonic()
            gone = await fake.await_for_disconnect(5.0)
            took = time.monotonic() - gone_at
            task.cancel()
            return early, waited, took, gone, fake.disconnects

    early, ticks, took, gone, disconnects = asyncio.run(main())
    assert not early
    assert ticks >= 10  # the loop kept ticking through the 0.3 s wait
    assert gone
    assert disconnects == 1
    assert took < 2.0


# --------------------------------------------------------------------------- lifecycle


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc/self/fd")
def test_close_is_idempotent_and_leaves_nothing_behind() -> None:
    with httpx.Client() as warmup:  # load lazily imported modules and certificates first
        del warmup
    threads_before, fds_before = threading.active_count(), open_fds()

    cut = event_ends(TEXT)[0]
    fake = FakeGemini(
        FakeResponse(body=TEXT, chunk_size=400),
        FakeResponse(body=TEXT, drop_after=123),
        FakeResponse(body=TEXT, split_at=[cut], pause=30.0),
        FakeResponse(body=TEXT, split_at=[cut], pause=30.0),
    ).start()
    url = f"{fake.base_url}{STREAM}"
    with httpx.Client(timeout=10) as client:
        assert client.post(url, json=REQUEST).content == TEXT
        with pytest.raises(httpx.RemoteProtocolError):
            client.post(url, json=REQUEST)
        with client.stream("POST", url, json=REQUEST) as response:
            pieces = response.iter_raw()
            next(pieces)
        assert fake.wait_for_disconnect(1.0)
        assert client.get(f"{fake.base_url}/unknown").status_code == 404
        # an idle keep-alive connection, and one still mid-response, when close() comes
        with client.stream("POST", url, json=REQUEST) as response:
            pieces = response.iter_raw()
            next(pieces)
            idle = socket.create_connection(("127.0.0.1", fake.port))
            assert threading.active_count() > threads_before
            fake.close()
            fake.close()
        idle.close()
    fake.close()
    assert (fake.completed, fake.disconnects, len(fake.requests)) == (2, 1, 5)
    assert threading.active_count() == threads_before
    assert open_fds() == fds_before
    assert not [t for t in threading.enumerate() if t.name.startswith("FakeGemini")]


def test_close_before_start_and_start_after_close() -> None:
    fake = FakeGemini()
    with pytest.raises(RuntimeError, match="not started"):
        _ = fake.base_url
    fake.close()
    fake.close()
    with pytest.raises(RuntimeError, match="closed"):
        fake.start()
    with FakeGemini() as running:
        assert running.start() is running  # starting twice is a no-op


def test_two_instances_get_different_ports(client: httpx.Client) -> None:
    with FakeGemini(b"a") as one, FakeGemini(b"b") as two:
        assert one.port != two.port
        assert one.base_url == f"http://127.0.0.1:{one.port}/v1beta"
        assert client.post(f"{one.base_url}{STREAM}", json=REQUEST).content == b"a"
        assert client.post(f"{two.base_url}{STREAM}", json=REQUEST).content == b"b"
        assert len(one.requests) == len(two.requests) == 1


def test_concurrent_clients_are_served_in_parallel() -> None:
    clients = [httpx.Client(timeout=10) for _ in range(8)]
    results: list[bytes] = []
    with FakeGemini(FakeResponse(body=TEXT, delay=0.5, chunk_size=200)) as fake:

        def fetch(own: httpx.Client) -> None:
            results.append(own.post(f"{fake.base_url}{STREAM}", json=REQUEST).content)

        workers = [threading.Thread(target=fetch, args=(c,)) for c in clients]
        started = time.monotonic()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        elapsed = time.monotonic() - started
        assert fake.completed == 8
    for own in clients:
        own.close()
    assert results == [TEXT] * 8
    assert elapsed < 2.0  # one after another would take 4 s


# --------------------------------------------------------------------------- FakeResponse


@pytest.mark.parametrize(
    "kwargs",
    [
        {"status": 204},
        {"status": 99},
        {"delay": -1.0},
        {"pause": -0.1},
        {"chunk_size": 0},
        {"keepalive": 0.0},
        {"split_at": [len(TEXT) + 1]},
        {"split_at": [-1]},
        {"drop_after": len(TEXT) + 1},
        {"status": 500, "raw_error": {"code": 500}},
        {"headers": {"Content-Length": "1"}},
        {"headers": {"Transfer-Encoding": "gzip"}},
        {"headers": {"X-Bad": "a\r\nInjected: 1"}},
        {"headers": {"Bad Name": "1"}},
        {"error": {"code": "429"}},
    ],
)
def test_fake_response_rejects_nonsense(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        FakeResponse(body=TEXT, **kwargs)


def test_fake_gemini_rejects_other_response_types() -> None:
    with pytest.raises(TypeError):
        FakeGemini("text")  # type: ignore[arg-type]


def test_docstring_example_runs() -> None:
    doc = rxgem.testing.__doc__
    assert doc is not None
    example = doc.split("Example (a complete pytest test)::\n", 1)[1]
    example = textwrap.dedent(example.split("\nThe Interactions API:", 1)[0])
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(example, "rxgem.testing example", "exec"), namespace)
    namespace["test_streams_a_capture"]()
    assert {"FakeGemini", "FakeResponse", "ReceivedRequest"} <= set(rxgem.testing.__all__)


def test_a_listen_backlog_of_512_serves_after_300_connects_at_once() -> None:
    with FakeGemini(backlog=512) as fake:
        sockets = [socket.create_connection(("127.0.0.1", fake.port)) for _ in range(300)]
        for sock in sockets:
            sock.close()
        with httpx.Client(base_url=fake.base_url) as client:
            response = client.post(
                "/models/gemini-2.5-flash:streamGenerateContent", params={"alt": "sse"}
            )
        assert response.status_code == 200


# --------------------------------------------------------------------------- strict mode

G3 = "gemini-3-pro-preview"
G25 = "gemini-2.5-flash"
SIGNATURE_MISSING = "Function call is missing a thought_signature in functionCall parts."
RESPONSE_COUNT = (
    "Please ensure that the number of function response parts is equal to the number of"
    " function call parts of the function call turn."
)
PARAMS = "tools[0].function_declarations[0].parameters"
RESPONSE_MATCH = (
    "Please ensure that the function response parts answer the function call parts of the"
    " function call turn"
)


def fn_call(name: str, call_id: str | None, sig: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": {}}}
    if call_id is not None:
        part["functionCall"]["id"] = call_id
    if sig is not None:
        part["thoughtSignature"] = sig
    return part


def fn_response(name: str, call_id: str | None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionResponse": {"name": name, "response": {"ok": True}}}
    if call_id is not None:
        part["functionResponse"]["id"] = call_id
    return part


DUMMY = "context_engineering_is_the_way_to_go"


def conversation(model: str) -> dict[str, Any]:
    """A valid request of one turn: a parallel step (two calls, signed on the first), a
    sequential step (signed), their responses; call ids on Gemini 3 only. The calls were
    not Gemini's, so they carry the dummy signature Google documents for such calls."""

    def i(call_id: str) -> str | None:
        return call_id if model.startswith("gemini-3") else None

    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris and Tokyo, and the gap?"}]},
            {
                "role": "model",
                "parts": [fn_call("weather", i("a"), DUMMY), fn_call("weather", i("b"))],
            },
            {
                "role": "user",
                "parts": [fn_response("weather", i("a")), fn_response("weather", i("b"))],
            },
            {
                "role": "model",
                "parts": [{"text": "Now the gap."}, fn_call("gap", i("c"), DUMMY)],
            },
            {"role": "user", "parts": [fn_response("gap", i("c"))]},
        ],
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "weather",
                        "parameters": {
                            "type": "OBJECT",
                            "properties": {
                                "city": {"type": "string", "description": "A city"},
                                "days": {"type": "ARRAY", "items": {"type": "INTEGER"}},
                                "unit": {"type": "STRING", "enum": ["C", "F"], "nullable": True},
                            },
                            "required": ["city"],
                        },
                    },
                    {
                        "name": "gap",
                        "parametersJsonSchema": {
                            "type": "object",
                            "properties": {"a": {"type": ["number", "null"]}},
                            "additionalProperties": False,
                        },
                    },
                ]
            }
        ],
    }


def _parts(body: dict[str, Any], index: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = body["contents"][index]["parts"]
    return parts


def _weather(body: dict[str, Any]) -> dict[str, Any]:
    declaration: dict[str, Any] = body["tools"][0]["functionDeclarations"][0]
    return declaration


def _lose_step_signature(body: dict[str, Any]) -> None:
    del _parts(body, 3)[1]["thoughtSignature"]


def _sign_second_call_only(body: dict[str, Any]) -> None:
    first, second = _parts(body, 1)
    second["thoughtSignature"] = first.pop("thoughtSignature")


def _drop_a_response(body: dict[str, Any]) -> None:
    del _parts(body, 2)[1]


def _swap_responses(body: dict[str, Any]) -> None:
    _parts(body, 2).reverse()


def _rename_response(body: dict[str, Any]) -> None:
    _parts(body, 4)[0]["functionResponse"]["name"] = "weather"


def _empty_response_name(body: dict[str, Any]) -> None:
    _parts(body, 4)[0]["functionResponse"]["name"] = ""


def _stray_responses(body: dict[str, Any]) -> None:
    body["contents"].insert(1, {"role": "user", "parts": [fn_response("weather", None)]})


def _leave_calls_unanswered(body: dict[str, Any]) -> None:
    del body["contents"][4]


def _no_contents(body: dict[str, Any]) -> None:
    body["contents"] = []


def _empty_parts(body: dict[str, Any]) -> None:
    body["contents"].append({"role": "user", "parts": []})


def _assistant_role(body: dict[str, Any]) -> None:
    body["contents"][1]["role"] = "assistant"


def _model_first(body: dict[str, Any]) -> None:
    del body["contents"][0]


def _ids_on_gemini_2(body: dict[str, Any]) -> None:
    _parts(body, 1)[0]["functionCall"]["id"] = "a"
    _parts(body, 2)[0]["functionResponse"]["id"] = "a"


def _additional_properties(body: dict[str, Any]) -> None:
    _weather(body)["parameters"]["additionalProperties"] = False


def _ref_and_defs(body: dict[str, Any]) -> None:
    parameters = _weather(body)["parameters"]
    parameters["$defs"] = {"City": {"type": "STRING"}}
    parameters["properties"]["city"] = {"$ref": "#/$defs/City"}


def _const(body: dict[str, Any]) -> None:
    _weather(body)["parameters"]["properties"]["unit"]["const"] = "C"


def _type_array(body: dict[str, Any]) -> None:
    _weather(body)["parameters"]["properties"]["days"]["items"]["type"] = ["INTEGER", "NULL"]


def _required_absent(body: dict[str, Any]) -> None:
    _weather(body)["parameters"]["required"].append("country")


def _array_without_items(body: dict[str, Any]) -> None:
    del _weather(body)["parameters"]["properties"]["days"]["items"]


def _both_schemas(body: dict[str, Any]) -> None:
    _weather(body)["parametersJsonSchema"] = {"type": "object"}


STRICT_CASES = [
    # (a) Gemini 3: every step of the current turn signed on its first call
    (G3, _lose_step_signature, f"{SIGNATURE_MISSING} This is required"),
    (G3, _lose_step_signature, "Additional data, function call `default_api:gap` , position 4."),
    (G3, _sign_second_call_only, "function call `default_api:weather` , position 2."),
    # (b) one response per call, names (and ids) in order
    (G3, _drop_a_response, RESPONSE_COUNT),
    (G25, _leave_calls_unanswered, RESPONSE_COUNT),
    (G3, _swap_responses, "answers function call `weather (id a)`"),
    (G25, _rename_response, f"{RESPONSE_MATCH}, in order. Additional data, function response"),
    (
        G25,
        _empty_response_name,
        "contents[4].parts[0].function_response.name: Name cannot be empty",
    ),
    (G25, _stray_responses, "function response turn comes immediately after a function call turn"),
    # (c) the contents' shape
    (G25, _no_contents, "* GenerateContentRequest.contents: contents is not specified\n"),
    (G3, _empty_parts, "* GenerateContentRequest.contents[5].parts: contents.parts must not be"),
    (G25, _assistant_role, "Please use a valid role: user, model."),
    (G25, _model_first, "function call turn comes immediately after a user turn"),
    # (d) no call ids on Gemini 2.x
    (
        G25,
        _ids_on_gemini_2,
        "Invalid JSON payload received. Unknown name \"id\" at 'contents[1].parts[0].function_call'"
        ': Cannot find field.\nInvalid JSON payload received. Unknown name "id" at'
        " 'contents[2].parts[0].function_response': Cannot find field.",
    ),
    # (e) tool schemas in Gemini's OpenAPI subset
    (
        G25,
        _additional_properties,
        f"Unknown name \"additionalProperties\" at '{PARAMS}': Cannot find field.",
    ),
    (
        G3,
        _ref_and_defs,
        f"Unknown name \"$ref\" at '{PARAMS}.properties[0].value'",
    ),
    (G3, _ref_and_defs, f"Unknown name \"$defs\" at '{PARAMS}'"),
    (
        G25,
        _const,
        f"Unknown name \"const\" at '{PARAMS}.properties[2].value'",
    ),
    (
        G25,
        _type_array,
        f"Unknown name \"type\" at '{PARAMS}.properties[1].value.items'"
        ": Proto field is not repeating, cannot start list.",
    ),
    (
        G3,
        _required_absent,
        f"* GenerateContentRequest.{PARAMS}.required[1]: property is not defined\n",
    ),
    (
        G25,
        _array_without_items,
        f"* GenerateContentRequest.{PARAMS}.properties[days].items: missing field.\n",
    ),
    (
        G3,
        _both_schemas,
        "tools[0].function_declarations[0].parameters_json_schema: parameters_json",
    ),
]
STRICT_IDS = [f"{model}-{mutate.__name__.strip('_')}" for model, mutate, _ in STRICT_CASES]


def refused(model: str, mutate: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    body = conversation(model)
    mutate(body)
    return body


@pytest.mark.parametrize("model", [G3, G25, "gemini-flash-latest"])
def test_the_valid_conversation_has_no_problems(model: str) -> None:
    assert gemini_request_problems(conversation(model), model=model) == []
    assert gemini_request_problems(json.dumps(conversation(model)).encode(), model=model) == []


@pytest.mark.parametrize(("model", "mutate", "message"), STRICT_CASES, ids=STRICT_IDS)
def test_each_rule_names_its_problem(
    model: str, mutate: Callable[[dict[str, Any]], None], message: str
) -> None:
    problems = gemini_request_problems(refused(model, mutate), model=model)
    assert problems
    assert message in invalid_argument(problems)["message"]


def test_the_current_turn_alone_needs_signatures_and_the_placeholder_passes() -> None:
    body = conversation(G3)
    body["contents"] += [
        {"role": "model", "parts": [{"text": "Paris is 6 degrees colder."}]},
        {"role": "user", "parts": [{"text": "Thanks"}]},
    ]
    for part in (*_parts(body, 1), *_parts(body, 3)):
        part.pop("thoughtSignature", None)  # an earlier turn: Gemini 3 does not check it
    assert gemini_request_problems(body, model=G3) == []
    body["contents"] += [{"role": "model", "parts": [fn_call("weather", "d")]}]
    body["contents"] += [{"role": "user", "parts": [fn_response("weather", "d")]}]
    (problem,) = gemini_request_problems(body, model=G3)
    assert "`default_api:weather` , position 8." in problem
    _parts(body, 7)[0]["thoughtSignature"] = "skip_thought_signature_validator"
    assert gemini_request_problems(body, model=G3) == []


def test_signatures_and_ids_are_rules_of_their_versions() -> None:
    lost = refused(G3, _lose_step_signature)
    assert gemini_request_problems(lost, model="gemini-3.1-flash-lite-preview")
    assert gemini_request_problems(lost, model="models/gemini-3-flash-preview")
    assert gemini_request_problems(lost, model="gemini-flash-latest") == []  # no version said
    with_ids = conversation(G3)
    assert gemini_request_problems(with_ids, model=G3) == []
    assert gemini_request_problems(with_ids, model="gemini-2.0-flash")
    assert gemini_request_problems(with_ids, model="gemini-flash-latest") == []


def test_a_response_id_must_match_its_call() -> None:
    body = conversation(G3)
    _parts(body, 4)[0]["functionResponse"]["id"] = "other"
    (problem,) = gemini_request_problems(body, model=G3)
    assert "function response `gap (id other)` , position 5, part 0" in problem


def test_the_first_stage_that_fails_is_the_one_reported() -> None:
    body = refused(G3, _lose_step_signature)  # a conversation problem,
    _empty_parts(body)  # a field problem,
    _additional_properties(body)  # a parse problem: Google stops at the first stage
    (parse,) = gemini_request_problems(body, model=G3)
    assert parse.startswith('Invalid JSON payload received. Unknown name "additionalProperties"')
    del _weather(body)["parameters"]["additionalProperties"]
    (field,) = gemini_request_problems(body, model=G3)
    assert field.startswith("* GenerateContentRequest.contents[5].parts:")
    body["contents"].pop()
    (conversation_problem,) = gemini_request_problems(body, model=G3)
    assert conversation_problem.startswith(SIGNATURE_MISSING)


def test_google_error_bodies() -> None:
    fields = invalid_argument(["* GenerateContentRequest.a: x", "* GenerateContentRequest.b: y"])
    assert fields == {
        "code": 400,
        "message": "* GenerateContentRequest.a: x\n* GenerateContentRequest.b: y\n",
        "status": "INVALID_ARGUMENT",
    }
    assert invalid_argument(["Invalid value a", "Invalid value b"])["message"] == (
        "Invalid value a\nInvalid value b"
    )
    assert (
        invalid_argument([RESPONSE_COUNT, "Please use a valid role: user, model."])["message"]
        == RESPONSE_COUNT
    )
    with pytest.raises(ValueError, match="no problems"):
        invalid_argument([])


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"{not json", "Invalid JSON payload received. Unexpected token."),
        ([], "Invalid JSON payload received. Expected an object, got []."),
        (
            {
                "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
                "generationConfig": {"responseSchema": {"type": "object", "oneOf": []}},
            },
            "Unknown name \"oneOf\" at 'generation_config.response_schema'",
        ),
        (
            {
                "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
                "tools": [{"functionDeclarations": [{"name": "9lives"}]}],
            },
            "function_declarations[0].name: [FIELD_INVALID] Invalid function name.",
        ),
        (
            {
                "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
                "tools": [
                    {
                        "functionDeclarations": [
                            {
                                "name": "f",
                                "parameters": {
                                    "type": "OBJECT",
                                    "properties": {
                                        "n": {"type": "null"},
                                        "x": {"type": "tuple", "enum": [1]},
                                    },
                                },
                            }
                        ]
                    }
                ],
            },
            f"Invalid value at '{PARAMS}.properties[1].value.type'",
        ),
    ],
    ids=["not-json", "not-an-object", "response-schema", "function-name", "type-enum"],
)
def test_other_refusals(body: Any, problem: str) -> None:
    problems = gemini_request_problems(body, model=G25)
    assert any(problem in p for p in problems), problems


def _post(client: httpx.Client, fake: FakeGemini, model: str, body: Any) -> httpx.Response:
    url = f"{fake.base_url}/models/{model}:streamGenerateContent"
    return client.post(url, params={"alt": "sse"}, json=body)


@pytest.mark.parametrize(("model", "mutate", "message"), STRICT_CASES, ids=STRICT_IDS)
def test_strict_fake_refuses_each_bad_request_like_google_and_serves_the_good_one(
    client: httpx.Client, model: str, mutate: Callable[[dict[str, Any]], None], message: str
) -> None:
    bad = refused(model, mutate)
    with FakeGemini(TEXT, strict=True) as fake:
        refusal = _post(client, fake, model, bad)
        answer = _post(client, fake, model, conversation(model))
        assert fake.completed == 2
        log = fake.requests
    assert refusal.status_code == 400
    assert refusal.headers["content-type"] == "application/json; charset=UTF-8"
    error = refusal.json()["error"]
    assert (error["code"], error["status"]) == (400, "INVALID_ARGUMENT")
    assert message in error["message"]
    assert answer.status_code == 200
    assert answer.content == TEXT
    assert [r.json for r in log] == [bad, conversation(model)]  # both recorded


def test_a_refusal_uses_up_no_response(client: httpx.Client) -> None:
    first, second = samples.read("text"), samples.read("thinking_tools")
    bad = refused(G3, _lose_step_signature)
    with FakeGemini(first, second, strict=True) as fake:
        assert fake.strict
        replies = [_post(client, fake, G3, body) for body in (bad, conversation(G3), bad)]
        replies.append(_post(client, fake, G3, conversation(G3)))
        assert len(fake.requests) == 4
    assert [r.status_code for r in replies] == [400, 200, 400, 200]
    assert [replies[1].content, replies[3].content] == [first, second]


def test_without_strict_anything_is_served(client: httpx.Client) -> None:
    with FakeGemini(TEXT) as fake:
        assert not fake.strict
        assert _post(client, fake, G3, refused(G3, _lose_step_signature)).content == TEXT
        reply = client.post(f"{fake.base_url}{STREAM}", content=b"{not json")
        assert reply.content == TEXT


def test_strict_fake_refuses_a_body_that_is_not_json(client: httpx.Client) -> None:
    with FakeGemini(TEXT, strict=True) as fake:
        reply = client.post(f"{fake.base_url}{STREAM}", content=b"{not json")
        other = client.get(f"{fake.base_url}/files")  # other routes: the usual 404
    assert reply.status_code == 400
    assert reply.json()["error"]["message"] == "Invalid JSON payload received. Unexpected token."
    assert other.status_code == 404


def test_strict_docstring_example_runs() -> None:
    doc = FakeGemini.__doc__
    assert doc is not None
    example = textwrap.dedent(doc.split("Example (strict)::\n", 1)[1])
    namespace: dict[str, Any] = {"FakeGemini": FakeGemini, "samples": samples, "httpx": httpx}
    exec(compile(example, "FakeGemini strict example", "exec"), namespace)


def test_the_model_list_and_one_model_as_gemini_serves_them(client: httpx.Client) -> None:
    with FakeGemini(TEXT, models=("gemini-2.5-flash", "gemini-3-pro-preview")) as fake:
        listing = client.get(f"{fake.base_url}/models", params={"pageSize": "1000"})
        one = client.get(f"{fake.base_url}/models/gemini-3-pro-preview")
        missing = client.get(f"{fake.base_url}/models/gemini-0")
        answer = client.post(f"{fake.base_url}{STREAM}", json=REQUEST)  # no response used
        assert [r.method for r in fake.requests] == ["GET", "GET", "GET", "POST"]
    assert listing.status_code == 200
    names = [m["name"] for m in listing.json()["models"]]
    assert names == ["models/gemini-2.5-flash", "models/gemini-3-pro-preview"]
    assert "streamGenerateContent" in listing.json()["models"][0]["supportedGenerationMethods"]
    assert one.json()["name"] == "models/gemini-3-pro-preview"
    assert missing.status_code == 404
    assert missing.json()["error"]["status"] == "NOT_FOUND"
    assert answer.content == TEXT


def test_the_servers_model_routes_work_offline_in_front_of_fakegemini() -> None:
    from server_harness import sdk, serving, settings_for

    with FakeGemini() as fake, serving(settings_for(fake)) as url, sdk(url) as openai_client:
        ids = [model.id for model in openai_client.models.list()]
        one = openai_client.models.retrieve("gemini-2.5-pro")
    assert ids == list(FakeGemini.DEFAULT_MODELS)
    assert one.id == "gemini-2.5-pro"
    assert one.owned_by == "google"
