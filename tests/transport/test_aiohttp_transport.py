"""The aiohttp transport behaves as httpx's own: each fault, made by a real
loopback server, raises the same httpx exception class through both; bodies stream,
closing a response returns or closes its connection, an abandoned one leaks nothing."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from rxgem.transport import AiohttpTransport

Handler = Callable[[socket.socket], None]
TRANSPORTS = ["httpx", "aiohttp"]


def make_transport(kind: str, **options: object) -> httpx.AsyncBaseTransport:
    if kind == "httpx":
        return httpx.AsyncHTTPTransport(**options)  # type: ignore[arg-type]
    return AiohttpTransport(**options)  # type: ignore[arg-type]


@contextlib.contextmanager
def raw_server(handle: Handler, *, backlog: int = 16) -> Iterator[tuple[int, list[socket.socket]]]:
    """A TCP server on 127.0.0.1 running ``handle`` on each connection in a thread;
    yields its port and the accepted sockets (closed at the end)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(backlog)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            accepted.append(conn)
            threading.Thread(target=_run, args=(handle, conn), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(5)
        listener.close()
        for conn in accepted:
            with contextlib.suppress(OSError):
                conn.close()


def _run(handle: Handler, conn: socket.socket) -> None:
    with contextlib.suppress(OSError):
        handle(conn)


def read_head(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            break
        data += piece
    return data


def read_request(conn: socket.socket) -> bool:
    """Read one request; False when the client closed the connection instead."""
    head = read_head(conn)
    if b"\r\n\r\n" not in head:
        return False
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    body = head.split(b"\r\n\r\n", 1)[1]
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return True


def answer(body: bytes = b"hello", *, keep: bool = True) -> Handler:
    def handle(conn: socket.socket) -> None:
        while read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
            if not keep:
                return

    return handle


def reset(conn: socket.socket) -> None:
    """Close with an RST (SO_LINGER 0), as a crashed peer or a middlebox does."""
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def never_answers(conn: socket.socket) -> None:
    read_request(conn)
    time.sleep(3)


def never_reads(conn: socket.socket) -> None:
    time.sleep(5)


def slow_head(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\n")
    time.sleep(3)


def cut_mid_body(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789")
    time.sleep(0.1)
    conn.shutdown(socket.SHUT_RDWR)


def cut_mid_chunked(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\na\r\n0123456789\r\n")
    time.sleep(0.1)
    conn.shutdown(socket.SHUT_RDWR)


def reset_mid_body(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n0123456789")
    time.sleep(0.1)
    reset(conn)


def pause_mid_body(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\na\r\n0123456789\r\n")
    time.sleep(3)


def closes_without_answer(conn: socket.socket) -> None:
    read_request(conn)
    conn.shutdown(socket.SHUT_RDWR)


def resets_without_answer(conn: socket.socket) -> None:
    read_request(conn)
    reset(conn)


def malformed_status(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"HTTP/1.1 OK twohundred\r\ncontent-length: 0\r\n\r\n")
    time.sleep(0.5)


def garbage_head(conn: socket.socket) -> None:
    read_request(conn)
    conn.sendall(b"\x00\x01\x02 not http at all\r\n\r\n")
    time.sleep(0.5)


async def fetch(
    transport: httpx.AsyncBaseTransport,
    url: str,
    *,
    timeout: httpx.Timeout | None = None,
    content: bytes = b"{}",
) -> bytes:
    async with (
        httpx.AsyncClient(transport=transport, timeout=timeout or httpx.Timeout(2.0)) as client,
        client.stream("POST", url, content=content) as response,
    ):
        return b"".join([chunk async for chunk in response.aiter_raw()])


FAULTS: dict[str, tuple[Handler, type[httpx.HTTPError], httpx.Timeout | None]] = {
    "never-answers": (never_answers, httpx.ReadTimeout, httpx.Timeout(2.0, read=0.3)),
    "slow-head": (slow_head, httpx.ReadTimeout, httpx.Timeout(2.0, read=0.3)),
    "pause-mid-body": (pause_mid_body, httpx.ReadTimeout, httpx.Timeout(2.0, read=0.3)),
    "cut-mid-body": (cut_mid_body, httpx.RemoteProtocolError, None),
    "cut-mid-chunked": (cut_mid_chunked, httpx.RemoteProtocolError, None),
    "reset-mid-body": (reset_mid_body, httpx.ReadError, None),
    "closes-without-answer": (closes_without_answer, httpx.RemoteProtocolError, None),
    "resets-without-answer": (resets_without_answer, httpx.ReadError, None),
    "malformed-status": (malformed_status, httpx.RemoteProtocolError, None),
    "garbage-head": (garbage_head, httpx.RemoteProtocolError, None),
}


@pytest.mark.parametrize("kind", TRANSPORTS)
@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_fault_raises_httpx_class(kind: str, fault: str) -> None:
    handle, error, timeout = FAULTS[fault]
    with raw_server(handle) as (port, _), pytest.raises(error):
        asyncio.run(fetch(make_transport(kind), f"http://127.0.0.1:{port}/", timeout=timeout))


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_refused_port_is_a_connect_error(kind: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(httpx.ConnectError):
            asyncio.run(fetch(make_transport(kind), f"http://127.0.0.1:{port}/"))


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_a_connection_never_accepted_is_a_connect_timeout(kind: str) -> None:
    # a full backlog on Linux drops further SYNs: the connect hangs
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        fillers = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.1)
        try:
            with pytest.raises(httpx.ConnectTimeout):
                asyncio.run(
                    fetch(
                        make_transport(kind),
                        f"http://127.0.0.1:{port}/",
                        timeout=httpx.Timeout(2.0, connect=0.3),
                    )
                )
        finally:
            for filler in fillers:
                filler.close()


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_a_peer_that_never_reads_a_large_body_is_a_write_timeout(kind: str) -> None:
    with raw_server(never_reads) as (port, _), pytest.raises(httpx.WriteTimeout):
        asyncio.run(
            fetch(
                make_transport(kind),
                f"http://127.0.0.1:{port}/",
                timeout=httpx.Timeout(2.0, write=0.3),
                content=b"x" * (64 * 1024 * 1024),
            )
        )


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_no_free_connection_in_time_is_a_pool_timeout(kind: str) -> None:
    async def main(port: int) -> None:
        limits = httpx.Limits(max_connections=1)
        async with httpx.AsyncClient(
            transport=make_transport(kind, limits=limits), timeout=httpx.Timeout(2.0, pool=0.2)
        ) as client:
            async with client.stream("POST", f"http://127.0.0.1:{port}/", content=b"{}"):
                with pytest.raises(httpx.PoolTimeout):
                    await client.post(f"http://127.0.0.1:{port}/", content=b"{}")
            # the slot is free again once the first response is closed
            assert (await client.post(f"http://127.0.0.1:{port}/", content=b"{}")).content == b"ok"

    with raw_server(answer(b"ok")) as (port, _):
        asyncio.run(main(port))


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_unsupported_scheme(kind: str) -> None:
    with pytest.raises(httpx.UnsupportedProtocol):
        asyncio.run(fetch(make_transport(kind), "ftp://127.0.0.1:1/"))


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    key, cert = tmp / "key.pem", tmp / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return key, cert


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_tls_verify_refuses_an_unknown_certificate_and_trusts_a_given_one(
    kind: str, tmp_path: Path
) -> None:
    key, cert = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def handle(conn: socket.socket) -> None:
        with context.wrap_socket(conn, server_side=True) as tls:
            answer(b"secure", keep=False)(tls)

    with raw_server(handle) as (port, _):
        url = f"https://127.0.0.1:{port}/"
        with pytest.raises(httpx.ConnectError):
            asyncio.run(fetch(make_transport(kind), url))
        assert (
            asyncio.run(
                fetch(
                    make_transport(kind, verify=ssl.create_default_context(cafile=str(cert))), url
                )
            )
            == b"secure"
        )
        assert asyncio.run(fetch(make_transport(kind, verify=False), url)) == b"secure"


def test_a_closed_response_returns_its_connection_to_the_pool() -> None:
    async def main(port: int) -> list[bytes]:
        async with httpx.AsyncClient(transport=AiohttpTransport()) as client:
            bodies = []
            for _ in range(3):
                async with client.stream("POST", f"http://127.0.0.1:{port}/", content=b"{}") as r:
                    bodies.append(await r.aread())
            return bodies

    with raw_server(answer(b"again")) as (port, accepted):
        assert asyncio.run(main(port)) == [b"again"] * 3
        assert len(accepted) == 1  # one connection, kept alive


def test_a_response_closed_early_or_abandoned_frees_its_connection() -> None:
    body = b"x" * 1_000_000

    async def main(port: int) -> None:
        limits = httpx.Limits(max_connections=1)
        timeout = httpx.Timeout(2.0, pool=1.0)
        async with httpx.AsyncClient(
            transport=AiohttpTransport(limits=limits), timeout=timeout
        ) as client:
            # closed before its end: the connection cannot be reused, and is closed
            async with client.stream("POST", f"http://127.0.0.1:{port}/", content=b"{}") as r:
                async for _ in r.aiter_raw():
                    break
            # abandoned without closing: collected, its slot is given back
            request = client.build_request("POST", f"http://127.0.0.1:{port}/", content=b"{}")
            abandoned = await client.send(request, stream=True)
            del abandoned
            gc.collect()
            assert len(
                (await client.post(f"http://127.0.0.1:{port}/", content=b"{}")).content
            ) == len(body)

    with raw_server(answer(body)) as (port, accepted):
        asyncio.run(main(port))
        assert len(accepted) == 3


def test_headers_body_and_compression_are_httpx_s() -> None:
    seen: list[bytes] = []
    import gzip

    packed = gzip.compress(b"unpacked by httpx")

    def handle(conn: socket.socket) -> None:
        head = read_head(conn)
        seen.append(head)
        conn.sendall(
            b"HTTP/1.1 201 Created\r\ncontent-encoding: gzip\r\nx-two: a\r\nx-two: b\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(packed), packed)
        )

    async def main(port: int) -> httpx.Response:
        async with httpx.AsyncClient(transport=AiohttpTransport()) as client:
            return await client.post(
                f"http://127.0.0.1:{port}/p?q=a%20b", json={"a": 1}, headers={"x-key": "v"}
            )

    with raw_server(handle) as (port, _):
        response = asyncio.run(main(port))
    assert response.status_code == 201
    assert response.reason_phrase == "Created"
    assert response.http_version == "HTTP/1.1"
    assert response.headers.get_list("x-two") == ["a", "b"]
    assert response.text == "unpacked by httpx"
    head = seen[0].lower()
    assert head.startswith(b"post /p?q=a%20b http/1.1\r\n")
    assert b"\r\nx-key: v\r\n" in head
    assert b"\r\ncontent-type: application/json\r\n" in head
    assert b"user-agent: python-httpx/" in head


# --------------------------------------------------------------------------- the server's choice


@pytest.mark.parametrize(
    ("choice", "kind"),
    [
        ("auto", AiohttpTransport),
        ("aiohttp", AiohttpTransport),
        ("httpx", httpx.AsyncHTTPTransport),
    ],
)
def test_the_server_upstream_client_follows_the_setting(
    choice: str, kind: type[httpx.AsyncBaseTransport]
) -> None:
    from server_harness import settings_for

    from rxgem.server._upstream import server_gateway

    async def main() -> None:
        upstream = server_gateway(
            settings_for("http://127.0.0.1:9/v1beta", upstream_client=choice)
        ).pools
        try:
            assert all(isinstance(c._transport, kind) for c in upstream.clients)
        finally:
            await upstream.aclose()

    asyncio.run(main())


def test_the_upstream_client_setting_is_checked_and_travels_to_workers() -> None:
    from server_harness import settings_for

    from rxgem.server import SettingsError, settings_from_env

    with pytest.raises(SettingsError, match="upstream client must be one of auto, aiohttp, httpx"):
        settings_for("http://127.0.0.1:9/v1beta", upstream_client="curl")
    settings = settings_for("http://127.0.0.1:9/v1beta", upstream_client="httpx")
    assert settings_from_env(settings.to_env()).upstream_client == "httpx"
    assert settings_from_env(
        {**settings.to_env(), "RXGEM_UPSTREAM_CLIENT": ""}
    ).upstream_client == ("auto")


def test_the_upstream_client_flag_becomes_the_setting() -> None:
    import argparse

    from rxgem.cli.serve import _environment, add_serve_parser
    from rxgem.server import settings_from_env

    parser = argparse.ArgumentParser(prog="rxgem")
    add_serve_parser(parser.add_subparsers(dest="command"))
    env = _environment(parser.parse_args(["serve", "--upstream-client", "httpx"]))
    assert settings_from_env({**env, "RXGEM_API_KEY": "k"}).upstream_client == "httpx"
    plain = _environment(parser.parse_args(["serve"]))
    assert settings_from_env({**plain, "RXGEM_API_KEY": "k"}).upstream_client == "auto"
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--upstream-client", "curl"])


async def fetch_through_client(kind: str, url: str) -> bytes:
    """As a client with ``trust_env`` does it: httpx's own mounts a proxy transport."""
    transport = AiohttpTransport() if kind == "aiohttp" else None
    async with httpx.AsyncClient(transport=transport) as client:
        return (await client.post(url, content=b"{}")).content


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_the_proxy_of_the_environment_is_used(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    heads: list[bytes] = []

    def proxy(conn: socket.socket) -> None:
        heads.append(read_head(conn))
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 7\r\n\r\nproxied")

    with raw_server(proxy) as (port, _):
        monkeypatch.setenv("HTTP_PROXY", f"http://user:secret@127.0.0.1:{port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        url = "http://gemini.invalid/v1beta/models"
        body = asyncio.run(fetch_through_client(kind, url))
        monkeypatch.setenv("NO_PROXY", "gemini.invalid")
        with pytest.raises(httpx.ConnectError):  # not through the proxy: no such host
            asyncio.run(fetch_through_client(kind, url))
    assert body == b"proxied"
    head = heads[0].lower()
    assert head.startswith(b"post http://gemini.invalid/v1beta/models http/1.1\r\n")
    assert b"\r\nproxy-authorization: basic dxnlcjpzzwnyzxq=\r\n" in head


@pytest.mark.parametrize("choice", ["aiohttp", "httpx"])
def test_a_cookie_the_upstream_sets_goes_to_no_later_request(choice: str) -> None:
    """The server's pools serve every client: before, httpx's client kept the upstream's
    cookies and sent them with every later request, whoever made it."""
    from server_harness import settings_for

    from rxgem.server._upstream import server_gateway

    heads: list[bytes] = []

    def handle(conn: socket.socket) -> None:
        while True:
            head = read_head(conn)
            if not head:
                return
            heads.append(head)
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nset-cookie: session=client-a; Path=/\r\n"
                b"content-length: 2\r\n\r\nok"
            )

    async def main(port: int) -> None:
        upstream = server_gateway(
            settings_for(f"http://127.0.0.1:{port}/v1beta", upstream_client=choice)
        ).pools
        try:
            for _ in range(2):
                await upstream.client.get(f"http://127.0.0.1:{port}/v1beta/models")
        finally:
            await upstream.aclose()

    with raw_server(handle) as (port, _):
        asyncio.run(main(port))
    assert len(heads) == 2
    assert b"cookie" not in heads[1].lower()


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_the_read_timeout_counts_only_while_reading(kind: str) -> None:
    """A consumer that holds the stream back (a slow client of the server) longer than
    the read timeout, while the upstream has sent everything: no timeout, as with httpx.
    Before: aiohttp's timer counted from the last bytes received, reader or not."""

    def handle(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n")
        time.sleep(0.1)
        conn.sendall(b"4\r\nlast\r\n")
        time.sleep(1.2)  # the consumer waits for the end from 1.0 s on: 0.2 s
        conn.sendall(b"0\r\n\r\n")
        time.sleep(2)

    async def main(port: int) -> list[bytes]:
        timeout = httpx.Timeout(2.0, read=0.5)
        async with (
            httpx.AsyncClient(transport=make_transport(kind), timeout=timeout) as client,
            client.stream("POST", f"http://127.0.0.1:{port}/", content=b"{}") as response,
        ):
            chunks = []
            async for chunk in response.aiter_raw():
                chunks.append(chunk)
                if len(chunks) == 1:
                    await asyncio.sleep(1.0)  # not reading, the upstream silent meanwhile
            return chunks

    with raw_server(handle) as (port, _):
        assert b"".join(asyncio.run(main(port))) == b"firstlast"
