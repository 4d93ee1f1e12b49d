"""The store's limits through ``rxgem serve``: a response the store cannot keep is refused
before Gemini is asked (400 naming the limit, its flag and ``store: false``), or kept;
never a 200 with ``store: true`` and no record. Each limit on SQLite and on Redis: items
per response, bytes per response, responses and bytes per conversation, and a store that
fails when the answer is already there (the answer then says ``store: false``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis_server import redis_url
from server_harness import KEY, MODEL, serving, settings_for

from rxgem.cli.serve import add_serve_parser
from rxgem.gateway._store_limits import Conversation, StoreLimits
from rxgem.server import ServerSettings, settings_from_env
from rxgem.store import StoredItem, StoredTurn, open_store
from rxgem.testing import FakeGemini, FakeResponse, event, finish, text, thought, usage

__all__ = ["redis_url"]  # the session's redis-server

TOKEN = "tok-limits-5e0c1d"
HEADERS = {"authorization": f"Bearer {TOKEN}"}
ANSWER = event(text("Fine."), finish("STOP"), usage(3, 1))
TWO_ITEMS = event(thought("Hmm."), text("Fine."), finish("STOP"), usage(3, 1))


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ``--store`` setting of each backend (Redis: the session's redis-server)."""
    if request.param == "sqlite":
        return str(tmp_path / "responses.sqlite3")
    url: str = request.getfixturevalue("redis_url")
    return url


@pytest.fixture
def backend(store: str) -> str:
    return "redis" if store.startswith("redis://") else "sqlite"


@contextlib.contextmanager
def _server(
    store: str, *answers: FakeResponse | bytes, **limits: Any
) -> Iterator[tuple[FakeGemini, str]]:
    """FakeGemini and a server in front of it with ``store`` and ``limits``."""
    with (
        FakeGemini(*(answers or (ANSWER,))) as fake,
        serving(settings_for(fake, client_tokens=(TOKEN,), store=store, **limits)) as url,
    ):
        yield fake, url


def _post(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{url}/v1/responses", json={"model": MODEL, **body}, headers=HEADERS)


def _get(url: str, response_id: str) -> httpx.Response:
    return httpx.get(f"{url}/v1/responses/{response_id}", headers=HEADERS)


def _messages(count: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"line {n}"} for n in range(count)]


def _terminal(body: bytes) -> dict[str, Any]:
    """The ``response`` of a stream's last event."""
    frames = [f for f in body.split(b"\n\n") if f.strip()]
    data = frames[-1].split(b"data: ", 1)[1]
    last: dict[str, Any] = json.loads(data)
    assert last["type"] in ("response.completed", "response.incomplete"), last
    response: dict[str, Any] = last["response"]
    return response


def _refused(answer: httpx.Response, code: str, param: str, *words: str) -> None:
    assert answer.status_code == 400, answer.text
    assert answer.headers["content-type"].startswith("application/json")
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", code, param)
    for word in words:
        assert word in error["message"], (word, error["message"])


# --------------------------------------------------------------------------- items per response


@pytest.mark.parametrize("stream", [False, True])
def test_the_probe_10001_input_items_are_refused_before_gemini(store: str, stream: bool) -> None:
    with _server(store) as (fake, url):
        answer = _post(url, {"input": _messages(10_001), "stream": stream})
        _refused(
            answer, "store_limit_exceeded", "input", "10001", "10000", "--store-max-items", "store"
        )
        assert "false" in answer.json()["error"]["message"]
        assert fake.requests == []  # Gemini was not asked
        unstored = _post(url, {"input": _messages(10_001), "store": False})
        assert unstored.status_code == 200
        assert unstored.json()["store"] is False
        assert len(fake.requests) == 1


def test_the_items_limit_is_a_setting(store: str) -> None:
    with _server(store, store_max_items=5) as (fake, url):
        _refused(_post(url, {"input": _messages(5)}), "store_limit_exceeded", "input", "5")
        assert fake.requests == []
        kept = _post(url, {"input": _messages(4)})  # 4 in, 1 out: 5 items
        assert kept.status_code == 200
        assert kept.json()["store"] is True
        assert _get(url, kept.json()["id"]).status_code == 200


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_takes_the_turn_past_the_items_limit_says_store_false(
    store: str, stream: bool
) -> None:
    with _server(store, TWO_ITEMS, store_max_items=3) as (fake, url):
        answer = _post(url, {"input": _messages(2), "stream": stream})  # 2 in, 2 out
        assert answer.status_code == 200
        response = _terminal(answer.content) if stream else answer.json()
        assert response["status"] == "completed"
        assert [item["type"] for item in response["output"]] == ["reasoning", "message"]
        assert response["store"] is False  # not kept, and the answer says so
        assert _get(url, response["id"]).status_code == 404
        assert len(fake.requests) == 1


# --------------------------------------------------------------------------- bytes per response


def test_input_bigger_than_a_record_is_refused_before_gemini(store: str) -> None:
    with _server(store, store_max_record_bytes=4000) as (fake, url):
        answer = _post(url, {"input": "x" * 5000, "stream": True})
        _refused(answer, "store_limit_exceeded", "input", "4000", "--store-max-record-bytes")
        assert fake.requests == []
        assert _post(url, {"input": "x" * 5000, "store": False}).status_code == 200
        kept = _post(url, {"input": "x" * 100})
        assert kept.json()["store"] is True
        assert _get(url, kept.json()["id"]).status_code == 200


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("limit", ["store_max_record_bytes", "store_max_conversation_bytes"])
def test_an_answer_past_a_bytes_limit_says_store_false(
    store: str, limit: str, stream: bool
) -> None:
    long_answer = event(text("y" * 8000), finish("STOP"), usage(3, 1))
    with _server(store, ANSWER, long_answer, **{limit: 10_000}) as (_, url):
        first = _post(url, {"input": "Hi"}).json()
        assert first["store"] is True
        more = {"input": "Go on", "previous_response_id": first["id"], "stream": stream}
        answer = _post(url, more)
        assert answer.status_code == 200
        response = _terminal(answer.content) if stream else answer.json()
        assert response["output"][0]["content"][0]["text"] == "y" * 8000
        assert response["store"] is False
        assert _get(url, response["id"]).status_code == 404
        assert _get(url, first["id"]).status_code == 200


# --------------------------------------------------------------------------- conversations


def _chain(url: str, turns: int, previous: str | None = None) -> list[str]:
    ids: list[str] = []
    for n in range(turns):
        more = {} if previous is None else {"previous_response_id": previous}
        answer = _post(url, {"input": f"turn {n}", **more})
        assert answer.status_code == 200, answer.text
        assert answer.json()["store"] is True
        previous = answer.json()["id"]
        ids.append(previous)
    return ids


@pytest.mark.parametrize("stream", [False, True])
def test_a_turn_past_the_chain_limit_is_refused_before_gemini(store: str, stream: bool) -> None:
    with _server(store, store_max_chain=3) as (fake, url):
        ids = _chain(url, 3)
        asked = len(fake.requests)
        more = {"input": "one more", "previous_response_id": ids[-1], "stream": stream}
        _refused(
            _post(url, more),
            "store_limit_exceeded",
            "previous_response_id",
            "3",
            "--store-max-chain",
            "store",
        )
        assert len(fake.requests) == asked  # Gemini was not asked
        assert _get(url, ids[-1]).status_code == 200
        unstored = _post(url, {**more, "stream": False, "store": False})
        assert unstored.status_code == 200, unstored.text  # the whole conversation is read
        assert unstored.json()["store"] is False
        texts = [c["parts"][0]["text"] for c in fake.requests[-1].json["contents"]]
        assert texts == ["turn 0", "Fine.", "turn 1", "Fine.", "turn 2", "Fine.", "one more"]


def test_a_conversation_longer_than_the_limit_says_so(store: str) -> None:
    with _server(store, store_max_chain=10) as (_, url):
        ids = _chain(url, 5)  # kept under a larger limit
    with _server(store, store_max_chain=3) as (fake, url):
        assert _get(url, ids[-1]).status_code == 200
        for stored in (False, True):
            answer = _post(url, {"input": "more", "previous_response_id": ids[-1], "store": stored})
            _refused(
                answer,
                "conversation_too_long",
                "previous_response_id",
                "3",
                "--store-max-chain",
                "new conversation",
            )
            assert "not found" not in answer.json()["error"]["message"]
        assert fake.requests == []
        assert _post(url, {"input": "more", "previous_response_id": ids[2]}).status_code == 400
        continued = _post(url, {"input": "more", "previous_response_id": ids[1], "store": False})
        assert continued.status_code == 200


def test_the_probe_a_conversation_past_its_bytes_is_refused_before_gemini(store: str) -> None:
    # Each request reads its whole conversation: heavy turns (metadata is kept, not sent
    # to Gemini) would make one small request read them all, a thousand times over.
    heavy = {"metadata": {"note": "m" * 3000}}
    with _server(store, store_max_conversation_bytes=12_000) as (fake, url):
        ids: list[str] = []
        while True:
            more = {"previous_response_id": ids[-1]} if ids else {}
            answer = _post(url, {"input": f"turn {len(ids)}", **heavy, **more})
            if answer.status_code != 200:
                break
            assert answer.json()["store"] is True
            ids.append(answer.json()["id"])
            assert len(ids) < 5
        _refused(
            answer,
            "store_limit_exceeded",
            "previous_response_id",
            "12000",
            "--store-max-conversation-bytes",
            "store",
        )
        assert len(fake.requests) == len(ids) >= 2  # the refused one was not sent
        for kept in ids:
            assert _get(url, kept).status_code == 200
        unstored = {"input": "more", "previous_response_id": ids[-1], "store": False}
        assert _post(url, unstored).json()["store"] is False


def _seed(store: str, turns: int) -> list[str]:
    """``turns`` stored responses of one conversation of the test's client, written
    straight into the store (a server would take minutes for a thousand)."""
    ids = [f"resp_seed{n:05d}" for n in range(turns)]

    async def write() -> None:
        async with open_store(store, max_chain=turns + 1) as opened:
            owner = await opened.owner(TOKEN)
            previous = None
            for n, turn_id in enumerate(ids):
                document = {"id": turn_id, "object": "response", "status": "completed"}
                said = {"type": "message", "role": "user", "content": f"turn {n}"}
                answered = {
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": f"answer {n}", "annotations": []}],
                }
                await opened.save(
                    StoredTurn(
                        turn_id,
                        owner,
                        1.7e9 + n,
                        json.dumps(document).encode(),
                        (StoredItem(f"msg_in{n}", json.dumps(said).encode()),),
                        (StoredItem(f"msg_out{n}", json.dumps(answered).encode()),),
                        previous,
                    )
                )
                previous = turn_id

    asyncio.run(write())
    return ids


def test_the_probe_a_chain_at_the_default_limit_of_1000(store: str) -> None:
    ids = _seed(store, 1001)
    with _server(store) as (fake, url):
        assert _get(url, ids[999]).status_code == 200
        full = {"input": "more", "previous_response_id": ids[999]}  # the 1,000th turn
        _refused(_post(url, full), "store_limit_exceeded", "previous_response_id", "1000")
        assert fake.requests == []
        read = _post(url, {**full, "store": False})
        assert read.status_code == 200, read.text
        assert len(fake.requests[-1].json["contents"]) == 2001
        assert _get(url, ids[1000]).status_code == 200
        past = {"input": "more", "previous_response_id": ids[1000], "store": False}
        _refused(_post(url, past), "conversation_too_long", "previous_response_id", "1000")
        assert len(fake.requests) == 1


def test_a_missing_previous_response_is_still_not_found(store: str) -> None:
    with _server(store, store_max_chain=3) as (fake, url):
        answer = _post(url, {"input": "more", "previous_response_id": "resp_never"})
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == "previous_response_not_found"
        assert fake.requests == []


# --------------------------------------------------------------------------- a store that fails


@pytest.mark.parametrize("stream", [False, True])
def test_a_store_failing_after_the_answer_says_store_false(
    store: str, backend: str, stream: bool
) -> None:
    with _server(store) as (fake, url):
        assert _post(url, {"input": "first"}).json()["store"] is True  # the store is set up
        with _failing_writes(store, backend):
            answer = _post(url, {"input": "Hi", "stream": stream})
        assert answer.status_code == 200
        response = _terminal(answer.content) if stream else answer.json()
        assert response["status"] == "completed"
        assert response["output"][0]["content"][0]["text"] == "Fine."
        assert response["store"] is False
        assert len(fake.requests) == 2
    with _server(store) as (_, url):
        assert _get(url, response["id"]).status_code == 404


@contextlib.contextmanager
def _failing_writes(store: str, backend: str) -> Iterator[None]:
    """Make the store's writes fail while reads still work: a SQLite trigger that
    aborts every insert of a turn; a Redis with no memory left for writes (the server
    has read its owner secret already, on an earlier request)."""
    if backend == "sqlite":
        with sqlite3.connect(store) as db:
            db.execute(
                "CREATE TRIGGER no_room BEFORE INSERT ON turns"
                " BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
            )
        try:
            yield
        finally:
            with sqlite3.connect(store) as db:
                db.execute("DROP TRIGGER no_room")
        return
    import redis

    with redis.Redis.from_url(store) as client:
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", "1")
        try:
            yield
        finally:
            client.config_set("maxmemory", "0")


# --------------------------------------------------------------------------- settings


STORE_LIMITS = {
    "store_max_items": ("--store-max-items", "RXGEM_STORE_MAX_ITEMS", 10_000, 7),
    "store_max_chain": ("--store-max-chain", "RXGEM_STORE_MAX_CHAIN", 1_000, 9),
    "store_max_record_bytes": (
        "--store-max-record-bytes",
        "RXGEM_STORE_MAX_RECORD_BYTES",
        64 * 1024 * 1024,
        4096,
    ),
    "store_max_conversation_bytes": (
        "--store-max-conversation-bytes",
        "RXGEM_STORE_MAX_CONVERSATION_BYTES",
        128 * 1024 * 1024,
        8192,
    ),
    "store_timeout": ("--store-timeout", "RXGEM_STORE_TIMEOUT", 10.0, 2.5),
}


@pytest.mark.parametrize("name", sorted(STORE_LIMITS))
def test_each_store_limit_is_a_setting_a_flag_and_a_variable(name: str) -> None:
    from rxgem.cli.serve import _environment

    flag, variable, default, value = STORE_LIMITS[name]
    assert getattr(ServerSettings(api_key=KEY), name) == default
    parser = argparse.ArgumentParser(prog="rxgem")
    add_serve_parser(parser.add_subparsers(dest="command"))
    env = _environment(parser.parse_args(["serve", flag, str(value)]))
    assert env == {variable: repr(value), "RXGEM_HOST": "127.0.0.1"}  # --host's default
    settings = settings_from_env({**env, "RXGEM_API_KEY": KEY})
    assert getattr(settings, name) == value
    assert settings_from_env(settings.to_env()) == settings
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", flag, "0"])
    with pytest.raises(ValueError, match=name):
        ServerSettings(api_key=KEY, **{name: 0})
    with pytest.raises(ValueError, match=variable):
        settings_from_env({variable: "lots", "RXGEM_API_KEY": KEY})


def test_the_store_is_opened_with_the_limits() -> None:
    from rxgem.server._app import open_response_store

    settings = ServerSettings(
        api_key=KEY,
        store="redis://127.0.0.1:1/0",
        store_max_items=7,
        store_max_chain=9,
        store_max_record_bytes=4096,
        store_timeout=2.5,
    )
    opened: Any = open_response_store(settings)
    try:
        limits = (opened.max_items, opened.max_chain, opened.max_record_bytes, opened.timeout)
        assert limits == (7, 9, 4096, 2.5)
    finally:
        asyncio.run(opened.aclose())


# --------------------------------------------------------------------------- the rule, exactly

LIMITS = StoreLimits(max_items=3, max_record_bytes=100, max_chain=2, max_conversation_bytes=300)


def _inputs(count: int, size: int = 10) -> tuple[StoredItem, ...]:
    """``count`` items of ``size`` bytes each (as the store counts them)."""
    return tuple(StoredItem(f"m{n}", b"x" * (size - 2)) for n in range(count))


@pytest.mark.parametrize(
    ("inputs", "echo", "conversation", "refused"),
    [
        (_inputs(2), 0, Conversation(), None),
        (_inputs(3), 0, Conversation(), "--store-max-items"),  # no item left for the answer
        (_inputs(1, 60), 39, Conversation(), None),
        (_inputs(1, 60), 40, Conversation(), "--store-max-record-bytes"),  # echo counts
        (_inputs(1), 0, Conversation("resp_a", 1, 50), None),
        (_inputs(1), 0, Conversation("resp_a", 2, 50), "--store-max-chain"),
        (_inputs(1), 0, Conversation("resp_a", 1, 289), None),
        (_inputs(1), 0, Conversation("resp_a", 1, 290), "--store-max-conversation-bytes"),
    ],
)
def test_what_the_limits_refuse_before_gemini(
    inputs: tuple[StoredItem, ...], echo: int, conversation: Conversation, refused: str | None
) -> None:
    reply = LIMITS.refusal(inputs, echo, conversation)
    if refused is None:
        assert reply is None
        return
    assert reply is not None
    assert (reply.status, reply.code) == (400, "store_limit_exceeded")
    assert refused in reply.message
    assert '"store": false' in reply.message
    assert reply.param == ("previous_response_id" if conversation.previous else "input")


def test_what_an_answer_takes_past_the_conversation_bytes() -> None:
    turn = StoredTurn("resp_b", "a" * 64, 1.0, b"d" * 40, _inputs(1))
    assert LIMITS.overflow(turn, Conversation("resp_a", 1, 250)) is None  # 300: at the limit
    reason = LIMITS.overflow(turn, Conversation("resp_a", 1, 251))
    assert reason is not None
    assert "301" in reason
    assert "--store-max-conversation-bytes" in reason
