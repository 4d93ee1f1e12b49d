"""The access line cannot be forged: every value is one escaped token, fields in one order.

Before: the line kept spaces in logged values, so a path like
``/healthz%20200%20model=gpt-4%20request_id=forged`` wrote a second ``request_id=``
field into the line. Now a value is printable ASCII without a space, a quote, a
backslash or an ``=`` (the rest escaped), so nothing a client sends (the path, the
model, the method) makes a field or a line of its own: the exact probe through a real
server, and a seeded property test of the line over hostile values.
"""

from __future__ import annotations

import codecs
import logging
import random
import socket

import httpx
import pytest
from server_harness import KEY, TOKEN, serving, settings_for

from rxgem.server.observe._access import access_line, log_value
from rxgem.testing import FakeGemini

KEYS = ["model", "duration_ms", "tokens", "request_id"]


def parse(line: str) -> tuple[list[str], dict[str, str], bool]:
    """The positional tokens, the ``key=value`` fields (in order), ``client_gone``; fails
    on a line that has anything else."""
    assert "\n" not in line
    assert "\r" not in line
    assert all(" " <= c <= "~" for c in line), line
    tokens = line.split(" ")
    method, path, status, *rest = tokens
    assert "=" not in method + path + status
    gone = rest[-1:] == ["client_gone"]
    if gone:
        rest = rest[:-1]
    fields = dict(token.split("=", 1) for token in rest)
    assert all(token.count("=") == 1 for token in rest), rest
    assert list(fields) in (KEYS, [*KEYS, "error"]), list(fields)
    return [method, path, status], fields, gone


def unescape(value: str) -> str:
    if value == '""':
        return ""
    return codecs.decode(value, "unicode_escape")


def test_the_probe_cannot_forge_a_field(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="rxgem.server")
    probe = b"GET /healthz%20200%20model=gpt-4%20request_id=forged HTTP/1.1\r\nHost: x\r\n"
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(probe + b"Connection: close\r\n\r\n")
            while sock.recv(65536):
                pass
        newline = {"model": "gemini-x\nGET /healthz 200 model=m request_id=forged", "messages": []}
        httpx.post(
            f"{url}/v1/chat/completions",
            json=newline,
            headers={"authorization": f"Bearer {TOKEN}"},
        )
    lines = [r.getMessage() for r in caplog.records if r.name == "rxgem.server"]
    assert len(lines) == 2, lines
    for line in lines:
        assert line.count("request_id=") == 1, line
        assert "forged" not in parse(line)[1]["request_id"]
    (_method, path, _status), fields, _ = parse(lines[0])
    assert unescape(path) == "/healthz 200 model=gpt-4 request_id=forged"
    assert fields["model"] == "-"
    assert unescape(parse(lines[1])[1]["model"]) == newline["model"]


NASTY = [
    " ", "=", '"', "\\", "\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\u2028", "\u202e", "é", "😀",
    "request_id=", " 200 ", "model=", "client_gone", "-", "[redacted]", KEY, "a", "/", "%20",
]  # fmt: skip


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(NASTY) for _ in range(rng.randrange(0, 12)))


@pytest.mark.parametrize("seed", range(200))
def test_no_value_makes_a_field_or_a_line(seed: int) -> None:
    rng = random.Random(seed)
    method, path, model, error = (_text(rng) for _ in range(4))
    gone = rng.random() < 0.3
    line = access_line(
        method or "GET",
        path,
        rng.choice([200, 400, 499]),
        model=model or None,
        duration_ms=rng.randrange(10_000),
        tokens=rng.choice([None, 17]),
        request_id="req_0123abcd",
        error=error or None,
        client_gone=gone,
        secrets=(KEY,),
    )
    (shown_method, shown_path, _), fields, client_gone = parse(line)
    assert client_gone == gone
    assert KEY not in line
    assert fields["request_id"] == "req_0123abcd"
    # the values come back, scrubbed of the secret and cut
    assert unescape(shown_path) == _expected(path, 200)
    assert unescape(shown_method) == _expected(method or "GET", 16)
    if model:
        assert unescape(fields["model"]) == _expected(model, 200)
    if error:
        assert unescape(fields["error"]) == _expected(error, 200)


def _expected(text: str, limit: int) -> str:
    text = text.replace(KEY, "[redacted]")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def test_log_value_keeps_plain_values_and_escapes_the_rest() -> None:
    assert log_value("/v1/chat/completions") == "/v1/chat/completions"
    assert log_value("gemini-2.5-flash") == "gemini-2.5-flash"
    assert log_value('a b=c"d\\e\n') == "a\\x20b\\x3dc\\x22d\\x5ce\\x0a"
    assert log_value("") == '""'
    assert log_value("-") == "\\x2d"
    assert log_value("\u202e") == "\\u202e"
