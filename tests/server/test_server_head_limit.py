"""The head limit (``max_head_bytes``) on the bytes received, however they arrive.

Before: ``_runner``'s guard counted bytes only while a head was still incomplete after
the parser ran, so a 98 KB head in one write got a 200 though the limit was 64 KB. Now a
head past the limit gets a 431 (OpenAI error body, ``connection: close``) in one write,
in many, and pipelined behind other requests (with and without bodies), with httptools
and with h11; heads within the limit pass. The meter itself is checked against a model
of the framing over random requests cut at random places.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from server_harness import settings_for

from rxgem.server import create_app
from rxgem.server.http._head_meter import HeadMeter
from rxgem.server.run._runner import protocol_named, uvicorn_config
from rxgem.testing import FakeGemini

LIMIT = 64 * 1024
PARSERS = ["httptools", "h11"]


@contextlib.contextmanager
def serving_with(parser: str) -> Iterator[int]:
    """The app in uvicorn on ``parser`` (the guarded protocol); yields its port."""
    with FakeGemini() as fake:
        settings = settings_for(fake, max_head_bytes=LIMIT)
        config = uvicorn_config(
            create_app(settings),
            settings,
            host="127.0.0.1",
            port=0,
            log_config=None,
            http=protocol_named(parser),
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            assert thread.is_alive()
            assert time.monotonic() < deadline
            time.sleep(0.005)
        try:
            yield server.servers[0].sockets[0].getsockname()[1]
        finally:
            server.should_exit = True
            thread.join(10)


def head(padding: int, method: bytes = b"GET", path: bytes = b"/healthz") -> bytes:
    """A request head of about ``padding`` bytes of headers (no body)."""
    lines = [b"X-Pad-%d: " % i + b"a" * 990 for i in range(padding // 1000)]
    start = method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    return start + b"".join(line + b"\r\n" for line in lines) + b"\r\n"


def exchange(port: int, pieces: list[bytes], seconds: float = 5.0) -> bytes:
    """Send ``pieces`` (one write each) and read until the server closes (or ``seconds``)."""
    received = b""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for piece in pieces:
            try:
                sock.sendall(piece)
            except OSError:
                break  # the server hung up mid-send
        sock.settimeout(0.1)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                break
            if not data:
                break
            received += data
    return received


def statuses(received: bytes) -> list[int]:
    return [int(status) for status in re.findall(rb"HTTP/1\.1 (\d{3}) ", received)]


def assert_431(received: bytes) -> None:
    assert statuses(received)[-1] == 431, received[:300]
    reply = received[received.rindex(b"HTTP/1.1 431") :]
    assert b"\r\nconnection: close\r\n" in reply.lower()
    body = json.loads(reply.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["code"] == "request_header_fields_too_large"
    assert str(LIMIT) in body["error"]["message"]


BIG = head(98_000)
FITS = head(60_000)
POST_BODY = b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b"x" * 5000
POST_CHUNKED = (
    b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    + b"".join(b"%x\r\n" % 700 + b"y" * 700 + b"\r\n" for _ in range(10))
    + b"0\r\n\r\n"
)


def _pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


SHAPES = {
    "one-write": ([BIG], [431]),
    "many-writes": (_pieces(BIG, 1000), [431]),
    "pipelined-behind-a-get": ([head(0) + BIG], [200, 431]),
    "pipelined-behind-a-body": ([POST_BODY + BIG], [405, 431]),
    "pipelined-behind-a-chunked-body": ([POST_CHUNKED + BIG], [405, 431]),
    "pipelined-in-pieces": (_pieces(head(0) + POST_BODY + BIG, 7000), [200, 405, 431]),
}


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_head_past_the_limit_is_a_431_however_it_arrives(parser: str, shape: str) -> None:
    pieces, expected = SHAPES[shape]
    with serving_with(parser) as port:
        received = exchange(port, pieces)
    assert statuses(received) == expected, received[:500]
    assert_431(received)


@pytest.mark.parametrize("parser", PARSERS)
def test_heads_within_the_limit_pass_in_one_write_and_pipelined(parser: str) -> None:
    closing = head(0).replace(b"Host:", b"Connection: close\r\nHost:")
    with serving_with(parser) as port:
        one = exchange(port, [FITS + closing])
        pieces = exchange(port, _pieces(FITS + FITS + closing, 4096))
    assert statuses(one) == [200, 200]
    assert statuses(pieces) == [200, 200, 200]


# --------------------------------------------------------------------------- the meter


def _request(rng: random.Random, limit: int) -> tuple[bytes, int]:
    """A random request and its head's length (sometimes past ``limit``)."""
    blank = b"\r\n" * rng.choice([0, 0, 0, 1, 2])
    eol = rng.choice([b"\r\n", b"\r\n", b"\n"])
    pad = rng.choice([0, 10, 200, limit // 3, limit - 100, limit + 50])
    headers = [b"Host: x", b"X-Pad: " + b"p" * pad]
    body = b""
    kind = rng.choice(["none", "length", "chunked"])
    if kind == "length":
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000)))
        headers.append(b"Content-Length: %d" % len(body))
    elif kind == "chunked":
        headers.append(b"Transfer-Encoding: chunked")
        sizes = [rng.randrange(1, 900) for _ in range(rng.randrange(0, 5))]
        body = b"".join(b"%x;ext=1\r\n" % n + b"\n" * n + b"\r\n" for n in sizes)
        body += b"0\r\nX-Trailer: t\r\n\r\n"
    rng.shuffle(headers)
    head_bytes = blank + b"POST /x HTTP/1.1" + eol + eol.join(headers) + eol + eol
    return head_bytes + body, len(head_bytes)


@pytest.mark.parametrize("seed", range(300))
def test_the_meter_cuts_at_the_first_head_past_the_limit_whatever_the_reads(seed: int) -> None:
    rng = random.Random(seed)
    limit = 2000
    stream = b""
    first_over: int | None = None
    for _ in range(rng.randrange(1, 6)):
        request, head_length = _request(rng, limit)
        if head_length > limit and first_over is None:
            first_over = len(stream)
        stream += request
    meter = HeadMeter(limit)
    passed = 0
    pos = 0
    while pos < len(stream):
        size = rng.choice([1, 7, 100, 1500, 5000, len(stream)])
        piece = stream[pos : pos + size]
        allowed = meter.feed(piece)
        assert 0 <= allowed <= len(piece)
        passed += allowed
        if allowed < len(piece):
            break
        pos += size
    if first_over is None:
        assert passed == len(stream)
        assert not meter.over
    else:
        assert meter.over
        assert first_over <= passed <= first_over + limit
        assert meter.feed(b"GET / HTTP/1.1\r\n\r\n") == 0  # nothing more once refused


def test_the_meter_is_linear() -> None:
    """Heads of many tiny lines and bodies of many tiny chunks: a bounded cost per byte."""
    lines = b"GET / HTTP/1.1\r\n" + b"a:b\r\n" * 12_000 + b"\r\n"
    chunks = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + b"1\r\nx\r\n" * 150_000
    for data, size in ((lines, 1), (lines, 4096), (chunks, 65536)):
        meter = HeadMeter(64 * 1024)
        started = time.perf_counter()
        for i in range(0, len(data), size):
            meter.feed(data[i : i + size])
        assert time.perf_counter() - started < 2.0
        assert not meter.over
