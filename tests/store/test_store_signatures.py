"""Signature memory, on SQLite and on a real Redis: what a store remembers for whom, for
how long, how many, and what it skips rather than fail a request."""

from __future__ import annotations

import asyncio

import pytest
from store_helpers import OWNER_A, OWNER_B, StoreFactory, run

from rxgem.store import (
    DEFAULT_MAX_SIGNATURES,
    DEFAULT_SIGNATURE_TTL,
    MAX_RECALL,
    MAX_SIGNATURE_BYTES,
    MAX_SIGNATURE_KEY,
    InvalidIdError,
    open_store,
)

CALL = "call:gemini-3-flash-preview:call_abc"
TEXT = "text:gemini-3-flash-preview:" + "0f" * 32


def test_remembered_signatures_are_recalled_by_key(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await store.remember_signatures(OWNER_A, {CALL: "c2lnLWNhbGw=", TEXT: "c2lnLXRleHQ="})
            assert await store.recall_signatures(OWNER_A, [CALL, TEXT, "call:m:missing"]) == {
                CALL: "c2lnLWNhbGw=",
                TEXT: "c2lnLXRleHQ=",
            }
            assert await store.recall_signatures(OWNER_A, [TEXT]) == {TEXT: "c2lnLXRleHQ="}
            assert await store.recall_signatures(OWNER_A, []) == {}
            await store.remember_signatures(OWNER_A, {})  # nothing to do, no error

    run(scenario)


def test_one_owner_never_recalls_anothers_signatures(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await store.remember_signatures(OWNER_A, {CALL: "sig-a"})
            assert await store.recall_signatures(OWNER_B, [CALL]) == {}
            await store.remember_signatures(OWNER_B, {CALL: "sig-b"})
            assert await store.recall_signatures(OWNER_A, [CALL]) == {CALL: "sig-a"}
            assert await store.recall_signatures(OWNER_B, [CALL]) == {CALL: "sig-b"}

    run(scenario)


def test_a_signature_remembered_again_replaces_the_first(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await store.remember_signatures(OWNER_A, {CALL: "first", TEXT: "text"})
            await store.remember_signatures(OWNER_A, {CALL: "second"})
            assert await store.recall_signatures(OWNER_A, [CALL, TEXT]) == {
                CALL: "second",
                TEXT: "text",
            }

    run(scenario)


def test_signatures_expire_after_their_ttl(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store(signature_ttl=1.0) as store:
            await store.remember_signatures(OWNER_A, {CALL: "old"})
            await asyncio.sleep(1.1)
            await store.remember_signatures(OWNER_A, {TEXT: "new"})
            assert await store.recall_signatures(OWNER_A, [CALL, TEXT]) == {TEXT: "new"}
            await store.remember_signatures(OWNER_A, {CALL: "again"})  # a new life
            assert await store.recall_signatures(OWNER_A, [CALL]) == {CALL: "again"}

    run(scenario)


def test_beyond_the_bound_the_oldest_signatures_go(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store(max_signatures=3) as store:
            for key in "abc":
                await store.remember_signatures(OWNER_A, {key: f"sig-{key}"})
            await store.remember_signatures(OWNER_B, {"x": "b's", "y": "b's", "z": "b's"})
            await store.remember_signatures(OWNER_A, {"a": "sig-a2"})  # now the newest
            await store.remember_signatures(OWNER_A, {"d": "sig-d"})
            assert await store.recall_signatures(OWNER_A, list("abcd")) == {
                "a": "sig-a2",
                "c": "sig-c",
                "d": "sig-d",
            }
            # Of one call's signatures, the last ones stay.
            await store.remember_signatures(OWNER_A, {k: f"sig-{k}" for k in "efghij"})
            assert await store.recall_signatures(OWNER_A, list("abcdefghij")) == {
                "h": "sig-h",
                "i": "sig-i",
                "j": "sig-j",
            }
            await store.remember_signatures(OWNER_A, {"k": "sig-k", "l": "sig-l"})
            assert list(await store.recall_signatures(OWNER_A, list("abcdefghijkl"))) == [
                "j",
                "k",
                "l",
            ]
            # Within one call, the order given is the order remembered.
            await store.remember_signatures(OWNER_A, {"r": "s", "q": "s", "p": "s"})
            await store.remember_signatures(OWNER_A, {"o": "s"})
            assert list(await store.recall_signatures(OWNER_A, list("opqr"))) == ["o", "p", "q"]
            # Another owner's signatures were neither counted nor evicted.
            assert len(await store.recall_signatures(OWNER_B, list("xyz"))) == 3

    run(scenario)


def test_the_order_of_many_signatures_in_one_call_is_kept(make_store: StoreFactory) -> None:
    keys = [f"call:m:{n:04d}" for n in range(300)]

    async def scenario() -> None:
        async with make_store(max_signatures=250) as store:
            await store.remember_signatures(OWNER_A, dict.fromkeys(keys[:200], "s"))
            await store.remember_signatures(OWNER_A, dict.fromkeys(reversed(keys[200:]), "s"))
            found = await store.recall_signatures(OWNER_A, keys)
            assert sorted(found) == keys[50:]
            await store.remember_signatures(OWNER_A, {"call:m:new": "s"})
            found = await store.recall_signatures(OWNER_A, keys)
            assert sorted(found) == keys[51:]

    run(scenario)


def test_keys_and_values_out_of_bounds_are_skipped(make_store: StoreFactory) -> None:
    long_key = "k" * (MAX_SIGNATURE_KEY + 1)
    longest_key = "k" * MAX_SIGNATURE_KEY
    big = "s" * (MAX_SIGNATURE_BYTES + 1)
    biggest = "s" * MAX_SIGNATURE_BYTES
    wide = "é" * (MAX_SIGNATURE_BYTES // 2 + 1)  # few characters, too many bytes
    lone = "\ud800"  # valid in JSON, not in UTF-8

    async def scenario() -> None:
        async with make_store() as store:
            await store.remember_signatures(
                OWNER_A,
                {
                    long_key: "s",
                    longest_key: "kept",
                    "big": big,
                    "biggest": biggest,
                    "wide": wide,
                    "": "empty key",
                    "empty": "",
                    lone: "s",
                    "lone": lone,
                    CALL: "kept too",
                },
            )
            keys = [long_key, longest_key, "big", "biggest", "wide", "", "empty", lone, "lone"]
            assert await store.recall_signatures(OWNER_A, [*keys, CALL]) == {
                longest_key: "kept",
                "biggest": biggest,
                CALL: "kept too",
            }
            await store.remember_signatures(OWNER_A, {"big": big, lone: "s"})  # all skipped
            assert await store.recall_signatures(OWNER_A, [lone, long_key]) == {}

    run(scenario)


def test_many_keys_are_recalled_up_to_the_limit(make_store: StoreFactory) -> None:
    keys = [f"call:gemini-3-pro-preview:call_{n:05d}" for n in range(MAX_RECALL + 100)]

    async def scenario() -> None:
        async with make_store() as store:
            await store.remember_signatures(OWNER_A, {key: f"sig{key[-5:]}" for key in keys})
            found = await store.recall_signatures(OWNER_A, keys)
            assert found == {key: f"sig{key[-5:]}" for key in keys[:MAX_RECALL]}
            assert await store.recall_signatures(OWNER_A, keys[-700:]) == {
                key: f"sig{key[-5:]}" for key in keys[-700:]
            }
            # The limit counts the keys as given, repeats included.
            assert await store.recall_signatures(OWNER_A, [keys[0]] * MAX_RECALL + keys[1:2]) == {
                keys[0]: "sig00000"
            }

    run(scenario)


def test_two_store_objects_share_their_signatures(make_store: StoreFactory) -> None:
    # Two workers of one server on the same file, or two servers on the same Redis.
    async def scenario() -> None:
        async with make_store(max_signatures=2) as one, make_store(max_signatures=2) as two:
            await one.remember_signatures(OWNER_A, {"a": "from one"})
            assert await two.recall_signatures(OWNER_A, ["a"]) == {"a": "from one"}
            await two.remember_signatures(OWNER_A, {"a": "from two", "b": "b"})
            assert await one.recall_signatures(OWNER_A, ["a", "b"]) == {"a": "from two", "b": "b"}
            await one.remember_signatures(OWNER_A, {"c": "c"})  # the bound is the owner's
            assert await two.recall_signatures(OWNER_A, ["a", "b", "c"]) == {"b": "b", "c": "c"}

    run(scenario)


def test_signatures_outlive_the_store_object(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        first = make_store()
        await first.remember_signatures(OWNER_A, {CALL: "kept"})
        await first.aclose()
        async with make_store() as second:
            assert await second.recall_signatures(OWNER_A, [CALL]) == {CALL: "kept"}

    run(scenario)


def test_concurrent_remembering_keeps_every_signature(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            await asyncio.gather(
                *(store.remember_signatures(OWNER_A, {f"k{n}": f"s{n}"}) for n in range(40))
            )
            found = await store.recall_signatures(OWNER_A, [f"k{n}" for n in range(40)])
            assert found == {f"k{n}": f"s{n}" for n in range(40)}

    run(scenario)


def test_a_malformed_owner_is_refused_like_everywhere(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store() as store:
            with pytest.raises(InvalidIdError):
                await store.remember_signatures("not-an-owner", {CALL: "s"})
            with pytest.raises(InvalidIdError):
                await store.recall_signatures("A" * 64, [CALL])

    run(scenario)


def test_the_signature_options_and_their_defaults(make_store: StoreFactory) -> None:
    assert DEFAULT_SIGNATURE_TTL == 86_400
    assert DEFAULT_MAX_SIGNATURES == 10_000
    store = make_store()
    assert (store.signature_ttl, store.max_signatures) == (86_400, 10_000)  # type: ignore[attr-defined]
    run(store.aclose)
    for bad in ({"signature_ttl": 0}, {"max_signatures": 0}, {"max_signatures": 1.5}):
        with pytest.raises(ValueError, match=r"signature_ttl|max_signatures"):
            make_store(**bad)


def test_open_store_passes_the_signature_options(tmp_path: object) -> None:
    store = open_store(f"{tmp_path}/r.sqlite3", signature_ttl=60, max_signatures=5)
    assert (store.signature_ttl, store.max_signatures) == (60, 5)  # type: ignore[attr-defined]
    run(store.aclose)
    pytest.importorskip(
        "redis", reason="the redis package is missing (pip install 'rxgem[server]')"
    )
    redis_store = open_store("redis://127.0.0.1:1/0", signature_ttl=61, max_signatures=6)
    assert (redis_store.signature_ttl, redis_store.max_signatures) == (61, 6)  # type: ignore[attr-defined]
    run(redis_store.aclose)


def test_expiry_is_measured_from_remembering(make_store: StoreFactory) -> None:
    async def scenario() -> None:
        async with make_store(signature_ttl=2.0) as store:
            await store.remember_signatures(OWNER_A, {"a": "a"})
            await asyncio.sleep(1.5)
            await store.remember_signatures(OWNER_A, {"b": "b"})
            await asyncio.sleep(0.6)  # a's two seconds are over, b's are not
            assert await store.recall_signatures(OWNER_A, ["a", "b"]) == {"b": "b"}

    run(scenario)
