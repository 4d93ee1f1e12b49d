"""Only API clients, only its own host: the Content-Type and Host rules of ``rxgem serve``.

A web page may send a "simple" request (``Content-Type: text/plain``, no preflight) to
any address, a local server's too; and a page whose host name rebinds to 127.0.0.1 sends
same-origin requests with its own name in ``Host``. Before these rules both reached
Gemini with the server's key. Here on raw sockets and through the settings; in a real
browser in ``test_server_browser.py``.
"""

from __future__ import annotations

import argparse
import json
import socket
from typing import Any

import httpx
import pytest
from server_harness import (
    HELLO,
    KEY,
    MODEL,
    TOKEN,
    serve_process,
    serving,
    settings_for,
)

from rxgem import samples
from rxgem.cli.serve import add_serve_parser
from rxgem.server import ENV, ServerSettings, SettingsError, settings_from_env
from rxgem.testing import FakeGemini

CHAT = json.dumps({"model": MODEL, "messages": HELLO}).encode()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _exchange(url: str, head: bytes, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """Send ``head`` (without its blank line) and ``body`` on a raw socket; the status,
    the headers (lower-cased names) and the body of the answer."""
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=10) as sock:
        sock.sendall(head + b"Connection: close\r\n\r\n" + body)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    status_line, _, rest = received.partition(b"\r\n")
    raw_headers, _, payload = rest.partition(b"\r\n\r\n")
    headers = {}
    for line in raw_headers.split(b"\r\n"):
        name, _, value = line.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        payload = _unchunk(payload)
    return int(status_line.split()[1]), headers, payload


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, data = data.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            break
        out, data = out + data[:n], data[n + 2 :]
    return out


def _post(host: bytes | None, body: bytes = CHAT, path: bytes = b"/v1/chat/completions") -> bytes:
    head = b"POST " + path + b" HTTP/1.1\r\n"
    if host is not None:
        head += b"Host: " + host + b"\r\n"
    return head + (
        b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
    )


def _plain(path: bytes, host: bytes, length: int) -> bytes:
    """A head without a token, for a body sent as ``text/plain``."""
    head = b"POST %s HTTP/1.1\r\nHost: %s\r\n" % (path, host)
    return head + b"Content-Type: text/plain\r\nContent-Length: %d\r\n" % length


# --------------------------------------------------------------------------- Content-Type


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "application/jsonx", "json", ""],
)  # fmt: skip
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/responses"])
def test_a_body_not_sent_as_json_is_a_415_before_anything_goes_upstream(
    content_type: str | None, path: str, tmp_path: Any
) -> None:
    """Before: any Content-Type was parsed as JSON (``curl -d`` sends a form type)."""
    body = CHAT if path.endswith("completions") else json.dumps({"model": MODEL, "input": "Hi"})
    headers = {"authorization": f"Bearer {TOKEN}"}
    if content_type is not None:
        headers["content-type"] = content_type
    store = tmp_path / "store.sqlite3"
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, store=str(store))) as url,
    ):
        response = httpx.post(f"{url}{path}", content=body, headers=headers)
        assert fake.requests == []
    assert response.status_code == 415
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "unsupported_media_type"
    assert "Content-Type: application/json" in error["message"]
    assert "-H 'Content-Type: application/json'" in error["message"]  # the curl fix
    assert response.headers["x-should-retry"] == "false"


@pytest.mark.parametrize(
    "content_type",
    ["application/json", "application/json; charset=utf-8", "Application/JSON",
     "application/json;charset=UTF-8", "application/json ; charset=utf-8"],
)  # fmt: skip
def test_json_with_parameters_or_in_any_case_is_accepted(content_type: str) -> None:
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        response = httpx.post(
            f"{url}/v1/chat/completions",
            content=CHAT,
            headers={"authorization": f"Bearer {TOKEN}", "content-type": content_type},
        )
        assert len(fake.requests) == 1
    assert response.status_code == 200, response.text


def test_the_415_does_not_read_a_large_body() -> None:
    """The answer comes and the connection closes without the body being taken in."""
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        head = _plain(b"/v1/chat/completions", b"127.0.0.1", 30_000_000)
        status, headers, payload = _exchange(url, head, b"{")
    assert status == 415
    assert headers["connection"] == "close"
    assert json.loads(payload)["error"]["code"] == "unsupported_media_type"


# --------------------------------------------------------------------------- Host


REFUSED_HOSTS = [
    b"evil.example",
    b"evil.example:%d",
    b"localhost.evil.example:%d",
    b"127.0.0.1.nip.io:%d",
    b"localhost:%d@evil.example",
    b"[::1].evil.example",
    b"0x7f000001",
    b"2130706433",
    b"",
]
LOOPBACK_HOSTS = [
    b"localhost",
    b"localhost:%d",
    b"LOCALHOST:%d",
    b"LocalHost",
    b"127.0.0.1",
    b"127.0.0.1:%d",
    b"[::1]",
    b"[::1]:%d",
    b"[0:0:0:0:0:0:0:1]:%d",
]


def _host(template: bytes, url: str) -> bytes:
    return template % _port(url) if b"%d" in template else template


@pytest.mark.parametrize("host", REFUSED_HOSTS)
def test_a_loopback_server_refuses_another_host_name_with_421(host: bytes) -> None:
    """Before: ``Host: evil.example`` was answered, so a DNS-rebinding page read answers."""
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        status, headers, payload = _exchange(url, _post(_host(host, url)), CHAT)
        assert fake.requests == []
    assert status == 421
    error = json.loads(payload)["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "misdirected_request"
    assert "--allowed-host" in error["message"]
    assert headers["x-should-retry"] == "false"


def test_a_request_without_host_is_refused_by_a_loopback_server() -> None:
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        head = _post(None).replace(b"HTTP/1.1", b"HTTP/1.0")
        status, _, payload = _exchange(url, head, CHAT)
        assert fake.requests == []
    assert status == 421
    assert json.loads(payload)["error"]["code"] == "misdirected_request"


@pytest.mark.parametrize("host", LOOPBACK_HOSTS)
def test_a_loopback_server_answers_its_loopback_names(host: bytes) -> None:
    with FakeGemini(samples.read("text")) as fake, serving(settings_for(fake)) as url:
        status, _, payload = _exchange(url, _post(_host(host, url)), CHAT)
        assert len(fake.requests) == 1
    assert status == 200, payload


def test_the_host_is_checked_before_the_token_and_the_body() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        status, _, payload = _exchange(url, _plain(b"/v1/responses", b"evil.example", 5), b"{oops")
        assert fake.requests == []
    assert status == 421
    assert json.loads(payload)["error"]["code"] == "misdirected_request"


@pytest.mark.parametrize("path", [b"/healthz", b"/readyz"])
def test_probes_answer_whatever_the_host(path: bytes) -> None:
    """A load balancer probes with its own Host (an address): the probes are exempt."""
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        head = b"GET " + path + b" HTTP/1.1\r\nHost: 10.1.2.3:8000\r\n"
        status, _, payload = _exchange(url, head)
    assert status == 200, payload


def test_the_other_routes_check_the_host_too() -> None:
    with FakeGemini() as fake, serving(settings_for(fake)) as url:
        auth = b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
        for head in (
            b"GET /v1/models HTTP/1.1\r\nHost: evil.example\r\n" + auth,
            b"GET /v1/responses/resp_1 HTTP/1.1\r\nHost: evil.example\r\n" + auth,
            b"DELETE /v1/responses/resp_1 HTTP/1.1\r\nHost: evil.example\r\n" + auth,
            b"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\n"
            b"Origin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\n",
            b"GET /nowhere HTTP/1.1\r\nHost: evil.example\r\n",
        ):
            status, _, _ = _exchange(url, head)
            assert status == 421, head
        assert fake.requests == []


@pytest.mark.parametrize(
    ("allowed", "host", "answered"),
    [
        (("api.example.com",), b"api.example.com", True),
        (("api.example.com",), b"API.Example.com:443", True),
        (("api.example.com",), b"evil.example", False),
        (("api.example.com",), b"localhost", False),  # named hosts replace the default
        (("api.example.com", "localhost"), b"localhost:%d", True),
        (("*",), b"evil.example", True),
        (("[::1]",), b"[::1]:%d", True),
        (("10.0.0.7",), b"10.0.0.7:8000", True),
    ],
)
def test_a_deployment_names_its_hosts(
    allowed: tuple[str, ...], host: bytes, answered: bool
) -> None:
    with (
        FakeGemini(samples.read("text")) as fake,
        serving(settings_for(fake, allowed_hosts=allowed)) as url,
    ):
        status, _, payload = _exchange(url, _post(_host(host, url)), CHAT)
        assert len(fake.requests) == (1 if answered else 0)
    assert status == (200 if answered else 421), payload


def test_a_server_bound_to_another_address_checks_no_host_unless_told() -> None:
    with FakeGemini(samples.read("text")) as fake:
        argv = ("--workers", "1", "--upstream", fake.base_url, "--client-token", TOKEN)
        env = {"RXGEM_API_KEY": KEY}
        with serve_process("--host", "0.0.0.0", *argv, env=env) as (url, _):
            status, _, payload = _exchange(url, _post(b"evil.example"), CHAT)
            assert status == 200, payload
        with serve_process(
            "--host", "0.0.0.0", "--allowed-host", "api.example.com", *argv, env=env
        ) as (url, _):
            assert _exchange(url, _post(b"evil.example"), CHAT)[0] == 421
            assert _exchange(url, _post(b"api.example.com"), CHAT)[0] == 200
        with serve_process(*argv, env=env) as (url, _):  # 127.0.0.1 by default
            assert _exchange(url, _post(b"evil.example"), CHAT)[0] == 421
        with serve_process(
            "--allowed-host", "a.example", "--allowed-host", "b.example", *argv, env=env
        ) as (url, _):
            assert _exchange(url, _post(b"b.example:80"), CHAT)[0] == 200
            assert _exchange(url, _post(b"localhost"), CHAT)[0] == 421


def test_workers_get_the_allowed_hosts_from_the_environment() -> None:
    env = {"RXGEM_API_KEY": KEY, ENV["allowed_hosts"]: "api.example.com, b.example"}
    argv = ("--workers", "2", "--client-token", TOKEN)
    with (
        FakeGemini(*[samples.read("text")] * 4) as fake,
        serve_process("--upstream", fake.base_url, *argv, env=env) as (url, _),
    ):
        for _ in range(4):  # whichever worker answers
            assert _exchange(url, _post(b"evil.example"), CHAT)[0] == 421
            assert _exchange(url, _post(b"api.example.com"), CHAT)[0] == 200


# --------------------------------------------------------------------------- the settings


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="rxgem")
    add_serve_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["serve", *argv])


def test_allowed_hosts_round_trip_through_the_environment() -> None:
    settings = ServerSettings(
        api_key=KEY, host="::1", allowed_hosts=("API.example.com", "::1", "10.0.0.7")
    )
    assert settings.allowed_hosts == ("api.example.com", "[::1]", "10.0.0.7")
    env = settings.to_env()
    assert env[ENV["allowed_hosts"]] == "api.example.com,[::1],10.0.0.7"
    assert env[ENV["host"]] == "::1"
    assert settings_from_env(env) == settings
    assert settings_from_env({ENV["api_key"]: KEY}).allowed_hosts == ()
    assert settings_from_env({ENV["api_key"]: KEY}).host == "127.0.0.1"
    spaced = settings_from_env({ENV["api_key"]: KEY, ENV["allowed_hosts"]: " a.example , *"})
    assert spaced.allowed_hosts == ("*",)
    args = _serve_args("--allowed-host", "a.example", "--allowed-host", "b.example")
    assert args.allowed_host == ["a.example", "b.example"]


@pytest.mark.parametrize(
    "bad",
    ["https://api.example.com", "api.example.com/v1", "api.example.com:8000", "a b", "",
     "user@host", "[::1", "*.example.com"],
)  # fmt: skip
def test_an_allowed_host_is_a_bare_name_or_address(bad: str) -> None:
    with pytest.raises(SettingsError, match="allowed host"):
        ServerSettings(api_key=KEY, allowed_hosts=(bad,))
