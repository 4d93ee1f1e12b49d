"""Stored responses through ``rxgem serve``: retrieve, delete and list input items with the
``openai`` SDK, each client seeing only its own, two ``rxgem serve`` processes sharing one
Redis, and what a hostile client sends (huge and deep input, ids that try to be paths,
pages out of bounds, a client that never reads).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from redis_server import redis_url
from server_harness import KEY, MODEL, sdk, serve_process, serving, settings_for

from rxgem.cli.serve import add_serve_parser
from rxgem.server import ServerSettings, settings_from_env
from rxgem.server.observe._access import route_of
from rxgem.testing import FakeGemini, FakeResponse, event, finish, text, usage

__all__ = ["redis_url"]  # the session's redis-server

TOKEN_A = "tok-A-6b0f2e"
TOKEN_B = "tok-B-91c4aa"
INPUT: Any = [
    {"role": "developer", "content": "Answer briefly."},
    {"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
    {"type": "message", "role": "user", "content": "And again", "id": "msg_mine"},
]


@pytest.fixture
def two_clients(tmp_path: Path) -> Iterator[tuple[str, openai.OpenAI, openai.OpenAI]]:
    """A server with a store, and SDK clients of two tokens."""
    store = str(tmp_path / "responses.sqlite3")
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, client_tokens=(TOKEN_A, TOKEN_B), store=store)) as url,
        sdk(url, TOKEN_A, _strict_response_validation=True) as a,
        sdk(url, TOKEN_B, _strict_response_validation=True) as b,
    ):
        yield url, a, b


# --------------------------------------------------------------------------- the SDK


def test_retrieve_list_input_items_and_delete_with_the_sdk(
    two_clients: tuple[str, openai.OpenAI, openai.OpenAI],
) -> None:
    _, a, _ = two_clients
    response = a.responses.create(model=MODEL, input=INPUT)
    assert a.responses.retrieve(response.id).output_text == response.output_text
    items = a.responses.input_items.list(response.id, order="asc")
    assert [item.type for item in items.data] == ["message", "message", "message"]
    assert items.data[2].id == "msg_mine"  # a client's own well-formed id is kept
    first = items.data[1]
    assert first.type == "message"
    assert first.content[0].type == "input_text"
    page = a.responses.input_items.list(response.id, limit=1, order="desc")
    assert [item.id for item in page.data] == ["msg_mine"]
    assert page.has_more is True
    every = [item.id for item in a.responses.input_items.list(response.id, limit=1)]
    assert every == [item.id for item in reversed(items.data)]  # auto-paging with `after`
    a.responses.delete(response.id)
    with pytest.raises(openai.NotFoundError):
        a.responses.retrieve(response.id)
    with pytest.raises(openai.NotFoundError):
        a.responses.delete(response.id)


def test_the_delete_body_is_openais(two_clients: tuple[str, openai.OpenAI, openai.OpenAI]) -> None:
    url, a, _ = two_clients
    response = a.responses.create(model=MODEL, input="Hi")
    deleted = httpx.delete(
        f"{url}/v1/responses/{response.id}", headers={"authorization": f"Bearer {TOKEN_A}"}
    )
    assert deleted.json() == {"id": response.id, "object": "response", "deleted": True}


def test_one_client_cannot_see_anothers_responses(
    two_clients: tuple[str, openai.OpenAI, openai.OpenAI],
) -> None:
    _url, a, b = two_clients
    mine = a.responses.create(model=MODEL, input="Hi")
    with pytest.raises(openai.NotFoundError) as refused:
        b.responses.retrieve(mine.id)
    assert refused.value.body == {  # the same as for an id never stored
        "message": f"no response with id {mine.id!r}",
        "type": "invalid_request_error",
        "param": None,
        "code": "not_found",
    }
    with pytest.raises(openai.NotFoundError):
        b.responses.input_items.list(mine.id)
    with pytest.raises(openai.NotFoundError):
        b.responses.delete(mine.id)
    with pytest.raises(openai.BadRequestError):
        b.responses.create(model=MODEL, input="more", previous_response_id=mine.id)
    item_id = a.responses.input_items.list(mine.id).data[0].id
    reference: Any = [{"type": "item_reference", "id": item_id}]
    with pytest.raises(openai.BadRequestError):
        b.responses.create(model=MODEL, input=reference)
    assert a.responses.retrieve(mine.id).id == mine.id  # still there for its owner
    a.responses.create(model=MODEL, input=reference)  # and its items resolve for it


def test_an_open_server_keeps_token_less_clients_under_one_owner(tmp_path: Path) -> None:
    store = str(tmp_path / "responses.sqlite3")
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, client_tokens=(), store=store)) as url,
    ):
        created = httpx.post(f"{url}/v1/responses", json={"model": MODEL, "input": "Hi"})
        assert created.status_code == 200
        response_id = created.json()["id"]
        assert httpx.get(f"{url}/v1/responses/{response_id}").status_code == 200
        other = httpx.get(
            f"{url}/v1/responses/{response_id}", headers={"authorization": "Bearer someone"}
        )
        assert other.status_code == 404


# --------------------------------------------------------------------------- settings


def test_the_store_settings_reach_the_workers() -> None:
    settings = ServerSettings(api_key=KEY, store="redis://127.0.0.1:6379/2", store_ttl=60.0)
    assert settings_from_env(settings.to_env()) == settings
    off = ServerSettings(api_key=KEY, no_store=True)
    assert settings_from_env(off.to_env()) == off


@pytest.mark.parametrize(
    "values",
    [{"store": "ftp://x/y"}, {"store": ""}, {"store_ttl": 0}, {"store_ttl": float("inf")}],
)
def test_bad_store_settings_are_refused(values: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="store"):
        ServerSettings(api_key=KEY, **values)


def test_two_servers_sharing_one_redis_continue_each_others_conversations(
    redis_url: str,
) -> None:
    answers = [event(text(f"answer {i}"), finish("STOP"), usage(3, 2)) for i in range(3)]
    argv = ("--store", redis_url, "--client-token", TOKEN_A, "--store-ttl", "600")
    env = {"RXGEM_API_KEY": KEY}
    with (
        FakeGemini(*answers) as fake,
        serve_process(*argv, "--upstream", fake.base_url, "--workers", "1", env=env) as (one, _),
        serve_process(*argv, "--upstream", fake.base_url, "--workers", "2", env=env) as (two, _),
        sdk(one, TOKEN_A, _strict_response_validation=True) as first,
        sdk(two, TOKEN_A, _strict_response_validation=True) as second,
    ):
        started = first.responses.create(model=MODEL, input="Hello")
        followed = second.responses.create(
            model=MODEL, input="Go on", previous_response_id=started.id
        )
        last = first.responses.create(model=MODEL, input="End", previous_response_id=followed.id)
        assert second.responses.retrieve(last.id).output_text == "answer 2"
        contents = fake.requests[2].json["contents"]
        assert [c["parts"][0]["text"] for c in contents] == [
            "Hello",
            "answer 0",
            "Go on",
            "answer 1",
            "End",
        ]


# --------------------------------------------------------------------------- attacks


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def _raw(url: str, request: bytes) -> bytes:
    """Send ``request`` as is (no client-side path normalization); the whole answer."""
    with socket.create_connection(("127.0.0.1", _port(url)), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                received += chunk
        return received


@pytest.mark.parametrize(
    "path",
    [
        "/v1/responses/../x",
        "/v1/responses/..%2F..%2Fetc%2Fpasswd",
        "/v1/responses/resp_x%2F..",
        "/v1/responses/resp_a'%20OR%201=1--",
        "/v1/responses/resp_%00",
        "/v1/responses/" + "resp_" + "a" * 5000,
        "/v1/responses/resp_x/input_items/../../..",
    ],
)
def test_ids_that_try_to_be_paths_or_queries_are_not_found(path: str, tmp_path: Path) -> None:
    store = tmp_path / "responses.sqlite3"
    with FakeGemini() as fake, serving(settings_for(fake, store=str(store))) as url:
        head = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN_A}\r\n"
        answer = _raw(url, (head + "Connection: close\r\n\r\n").encode())
    status = answer.split(b" ", 2)[1]
    assert status in (b"401", b"404")
    body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        p.name for p in tmp_path.iterdir() if p.name.startswith("responses.sqlite3")
    )


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("limit=1000000000", "limit"),
        ("limit=0", "limit"),
        ("limit=-1", "limit"),
        ("limit=1e3", "limit"),
        ("order=sideways", "order"),
        ("after=..%2F..", "after"),
        ("after=msg_not_in_this_response", "after"),
    ],
)
def test_pages_out_of_bounds_are_400(
    query: str, param: str, two_clients: tuple[str, openai.OpenAI, openai.OpenAI]
) -> None:
    url, a, _ = two_clients
    response = a.responses.create(model=MODEL, input="Hi")
    answer = httpx.get(
        f"{url}/v1/responses/{response.id}/input_items?{query}",
        headers={"authorization": f"Bearer {TOKEN_A}"},
    )
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == param


def test_huge_and_deep_inputs_are_refused_before_gemini(tmp_path: Path) -> None:
    store = str(tmp_path / "responses.sqlite3")
    limits = {"max_request_bytes": 300_000, "max_json_depth": 40, "store": store}
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, client_tokens=(TOKEN_A,), **limits)) as url,
        sdk(url, TOKEN_A) as client,
    ):
        huge = {"model": MODEL, "input": "x" * 301_000}
        headers = {"authorization": f"Bearer {TOKEN_A}"}
        assert httpx.post(f"{url}/v1/responses", json=huge, headers=headers).status_code == 413
        deep: Any = "x"
        for _ in range(60):
            deep = [deep]
        with pytest.raises(openai.BadRequestError):
            client.responses.create(model=MODEL, input=[{"role": "user", "content": deep}])
        many: Any = [{"role": "user", "content": "x"}] * 5000
        assert client.responses.create(model=MODEL, input=many).status == "completed"
        assert len(fake.requests) == 1


def test_a_client_that_never_reads_is_cut_off(tmp_path: Path) -> None:
    piece = "x" * 65536
    big = b"".join(event(text(piece)) for _ in range(600)) + event(finish("STOP"), usage(1, 1))
    body = json.dumps({"model": MODEL, "input": "Hi", "stream": True}).encode()
    overrides = {"send_timeout": 1.0, "keep_alive": 0.3, "store": str(tmp_path / "r.sqlite3")}
    head = (
        b"POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
        + TOKEN_A.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    with (
        FakeGemini(FakeResponse(body=big, chunk_size=65536)) as fake,
        serving(settings_for(fake, client_tokens=(TOKEN_A,), **overrides)) as url,
        socket.create_connection(("127.0.0.1", _port(url))) as client,
    ):
        client.sendall(head + body)
        time.sleep(0.5)  # the client reads nothing; the server's sends stall
        assert fake.wait_for_disconnect(timeout=10)  # the upstream request was cancelled
        client.settimeout(10)
        started = time.monotonic()
        received = 0
        with contextlib.suppress(ConnectionResetError):
            while chunk := client.recv(1 << 20):
                received += len(chunk)
        assert time.monotonic() - started < 5
        assert fake.completed == 0
    assert received < len(big)


def test_the_responses_paths_have_their_own_route_labels() -> None:
    assert route_of("/v1/responses") == "/v1/responses"
    assert route_of("/v1/responses/resp_1") == "/v1/responses/{response_id}"
    assert route_of("/v1/responses/resp_1/input_items") == (
        "/v1/responses/{response_id}/input_items"
    )
    assert route_of("/v1/responses/resp_1/other") == "other"
    assert route_of("/v1/responses/a/b/input_items") == "other"


def test_a_store_that_is_down_refuses_only_what_needs_it() -> None:
    pytest.importorskip(
        "redis", reason="the redis package is missing (pip install 'rxgem[server]')"
    )
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        nowhere = f"redis://127.0.0.1:{probe.getsockname()[1]}/0"
    with (
        FakeGemini() as fake,
        serving(settings_for(fake, client_tokens=(TOKEN_A,), store=nowhere)) as url,
        sdk(url, TOKEN_A, _strict_response_validation=True) as client,
    ):
        with pytest.raises(openai.InternalServerError) as refused:
            client.responses.create(model=MODEL, input="Hi")
        assert refused.value.status_code == 503
        assert refused.value.code == "store_unavailable"
        assert client.responses.create(model=MODEL, input="Hi", store=False).status == "completed"
        with pytest.raises(openai.InternalServerError):
            client.responses.retrieve("resp_1")


def test_the_store_flags_become_the_settings() -> None:
    from rxgem.cli.serve import _environment

    parser = argparse.ArgumentParser(prog="rxgem")
    add_serve_parser(parser.add_subparsers(dest="command"))
    argv = ["serve", "--store", "sqlite:///x.db", "--store-ttl", "90", "--no-store"]
    env = _environment(parser.parse_args(argv))
    settings = settings_from_env({**env, "RXGEM_API_KEY": KEY})
    assert (settings.store, settings.store_ttl, settings.no_store) == ("sqlite:///x.db", 90.0, True)
    plain = settings_from_env({**_environment(parser.parse_args(["serve"])), "RXGEM_API_KEY": KEY})
    assert (plain.store, plain.store_ttl, plain.no_store) == (None, None, False)
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--store-ttl", "0"])
