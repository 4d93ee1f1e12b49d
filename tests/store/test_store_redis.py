"""The Redis store's own promises: real expiry, extended conversations, keys only under
the prefix and the owner's tag, no token in clear, errors for a dead or silent server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from store_helpers import OWNER_A, OWNER_B, run, turn

from rxgem.store import StoreTimeoutError, StoreUnavailableError

redis = pytest.importorskip(
    "redis", reason="the redis package is missing (pip install 'rxgem[server]')"
)

from rxgem.store import RedisStore  # noqa: E402


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(redis_url) as connection:
        yield connection


def test_turns_expire_with_redis(redis_url: str) -> None:
    async def scenario() -> None:
        async with RedisStore(redis_url, prefix="rxgem:expiry:", ttl=1) as store:
            await store.save(turn("resp_1"))
            assert await store.get("resp_1", OWNER_A) is not None
            time.sleep(1.3)
            assert await store.get("resp_1", OWNER_A) is None
            assert await store.input_items("resp_1", OWNER_A) is None
            assert await store.items(["in_0_1", "out_0_1"], OWNER_A) == {}

    run(scenario)


def test_a_new_turn_extends_the_conversation(redis_url: str, client: redis.Redis) -> None:
    prefix = "rxgem:extend:"

    async def scenario() -> None:
        async with RedisStore(redis_url, prefix=prefix, ttl=100) as store:
            await store.save(turn("resp_a"))
            await store.save(turn("resp_b", previous="resp_a"))

    run(scenario)
    base = f"{prefix}{{{OWNER_A}}}:"
    for key in (f"{base}t:resp_a", f"{base}t:resp_a:in", f"{base}i:out_0_a"):
        client.pexpire(key, 5_000)

    async def another_owner_continues() -> None:
        async with RedisStore(redis_url, prefix=prefix, ttl=100) as store:
            await store.save(turn("resp_c", OWNER_B, previous="resp_b"))

    run(another_owner_continues)  # it names A's turn, and extends nothing of A's
    assert client.pttl(f"{base}t:resp_a") <= 5_000

    async def continue_it() -> None:
        async with RedisStore(redis_url, prefix=prefix, ttl=100) as store:
            await store.save(turn("resp_c", previous="resp_b"))

    run(continue_it)
    for key in (f"{base}t:resp_a", f"{base}t:resp_a:in", f"{base}i:out_0_a"):
        assert client.pttl(key) > 90_000, key


def test_keys_stay_under_the_prefix_and_hold_no_token(redis_url: str, client: redis.Redis) -> None:
    prefix = "rxgem:layout:"
    token = "sk-a-client-token-never-stored"

    async def scenario() -> str:
        async with RedisStore(redis_url, prefix=prefix) as store:
            owner = await store.owner(token)
            await store.save(turn("resp_1", owner, inputs=1, outputs=1))
            await store.save(turn("resp_2", owner, inputs=0, outputs=0, previous="resp_1"))
            return owner

    owner = run(scenario)
    keys = sorted(key.decode() for key in client.scan_iter(match=f"{prefix}*"))
    base = f"{prefix}{{{owner}}}:"
    assert keys == sorted(
        [
            f"{prefix}secret",
            f"{base}t:resp_1",
            f"{base}t:resp_1:in",
            f"{base}t:resp_1:out",
            f"{base}t:resp_2",
            f"{base}i:in_0_1",
            f"{base}i:out_0_1",
        ]
    )
    for key in keys:
        kind = client.type(key).decode()
        values = (
            [client.get(key)]
            if kind == "string"
            else client.lrange(key, 0, -1)
            if kind == "list"
            else [v for pair in client.hgetall(key).items() for v in pair]
        )
        assert all(token.encode() not in value for value in values if value), key


def test_an_unreachable_server_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused

        async def scenario() -> None:
            async with RedisStore(f"redis://127.0.0.1:{port}/0", timeout=2) as store:
                with pytest.raises(StoreUnavailableError):
                    await store.get("resp_1", OWNER_A)

        run(scenario)


def test_a_silent_server_times_out() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        try:
            while True:
                accepted.append(listener.accept()[0])  # then never answers
        except OSError:
            pass

    threading.Thread(target=accept, daemon=True).start()
    port = listener.getsockname()[1]

    async def scenario() -> float:
        async with RedisStore(f"redis://127.0.0.1:{port}/0", timeout=0.5) as store:
            started = time.monotonic()
            with pytest.raises(StoreTimeoutError):
                await store.get("resp_1", OWNER_A)
            return time.monotonic() - started

    try:
        assert run(scenario) < 3
    finally:
        listener.close()
        for connection in accepted:
            connection.close()


def test_a_prefix_with_pattern_characters_is_refused(redis_url: str) -> None:
    for prefix in ("rxgem:*:", "a b", "{x}", "a?"):
        with pytest.raises(ValueError, match="prefix"):
            RedisStore(redis_url, prefix=prefix)
