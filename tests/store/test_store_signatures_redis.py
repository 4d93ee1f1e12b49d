"""The Redis store's signature memory: real expiry, keys only under the prefix and the
owner's tag, an index that expires with the owner's latest signature, errors for a dead
or silent server."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
from store_helpers import OWNER_A, OWNER_B, run

from rxgem.store import StoreTimeoutError, StoreUnavailableError

redis = pytest.importorskip(
    "redis", reason="the redis package is missing (pip install 'rxgem[server]')"
)

from rxgem.store import RedisStore  # noqa: E402

CALL = "call:gemini-3-flash-preview:call_{x}*?"  # braces and pattern characters stay inert


@pytest.fixture
def client(redis_url: str) -> Iterator[redis.Redis]:
    with redis.Redis.from_url(redis_url) as connection:
        yield connection


def test_signature_keys_stay_under_the_prefix_and_expire(
    redis_url: str, client: redis.Redis
) -> None:
    prefix = "rxgem:sigs:"

    async def scenario() -> None:
        async with RedisStore(redis_url, prefix=prefix, signature_ttl=100) as store:
            await store.remember_signatures(OWNER_A, {CALL: "sig-a"})
            await store.remember_signatures(OWNER_B, {"text:m:00": "sig-b"})

    run(scenario)
    keys = sorted(key.decode() for key in client.scan_iter(match=f"{prefix}*"))
    a, b = f"{prefix}{{{OWNER_A}}}:", f"{prefix}{{{OWNER_B}}}:"
    assert keys == sorted([f"{a}s:{CALL}", f"{a}signatures", f"{b}s:text:m:00", f"{b}signatures"])
    for key in keys:
        assert 90_000 < client.pttl(key) <= 100_000, key
    assert client.zrange(f"{a}signatures", 0, -1) == [CALL.encode()]
    assert client.get(f"{a}s:{CALL}") == b"sig-a"


def test_the_index_forgets_expired_signatures(redis_url: str, client: redis.Redis) -> None:
    prefix = "rxgem:sigs-expiry:"
    index = f"{prefix}{{{OWNER_A}}}:signatures"

    async def scenario() -> None:
        async with RedisStore(redis_url, prefix=prefix, signature_ttl=1.5) as store:
            await store.remember_signatures(OWNER_A, {"a": "s", "b": "s"})
            time.sleep(0.8)
            await store.remember_signatures(OWNER_A, {"c": "s"})  # the index lives on
            time.sleep(0.8)  # a and b are gone from Redis, and then from the index
            await store.remember_signatures(OWNER_A, {"d": "s"})
            assert client.zrange(index, 0, -1) == [b"c", b"d"]
            time.sleep(1.6)
            assert client.exists(index) == 0

    run(scenario)


def test_evicted_signatures_leave_redis(redis_url: str, client: redis.Redis) -> None:
    prefix = "rxgem:sigs-evict:"
    base = f"{prefix}{{{OWNER_A}}}:"

    async def scenario() -> None:
        async with RedisStore(redis_url, prefix=prefix, max_signatures=2) as store:
            await store.remember_signatures(OWNER_A, {"a": "s", "b": "s"})
            await store.remember_signatures(OWNER_A, {"c": "s"})

    run(scenario)
    kept = sorted(key.decode() for key in client.scan_iter(match=f"{base}s:*"))
    assert kept == [f"{base}s:b", f"{base}s:c"]
    assert client.zrange(f"{base}signatures", 0, -1) == [b"b", b"c"]


def test_an_unreachable_server_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused

        async def scenario() -> None:
            async with RedisStore(f"redis://127.0.0.1:{port}/0", timeout=2) as store:
                with pytest.raises(StoreUnavailableError):
                    await store.remember_signatures(OWNER_A, {"a": "s"})
                with pytest.raises(StoreUnavailableError):
                    await store.recall_signatures(OWNER_A, ["a"])

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
                await store.remember_signatures(OWNER_A, {"a": "s"})
            with pytest.raises(StoreTimeoutError):
                await store.recall_signatures(OWNER_A, ["a"])
            return time.monotonic() - started

    try:
        assert run(scenario) < 5
    finally:
        listener.close()
        for connection in accepted:
            connection.close()
