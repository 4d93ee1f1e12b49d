"""The SQLite store's signature memory: expiry on the store's clock, bounded sweeping,
a file of the previous schema upgraded in place, several processes, timeouts."""

from __future__ import annotations

import multiprocessing
import sqlite3
import time
from pathlib import Path

import pytest
from store_helpers import OWNER_A, OWNER_B, run, turn

from rxgem.store import SQLiteStore, StoreTimeoutError, StoreUnavailableError


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _rows(path: Path) -> tuple[int, list[tuple[str, int]]]:
    with sqlite3.connect(path) as db:
        (count,) = db.execute("SELECT count(*) FROM signatures").fetchone()
        counts = db.execute("SELECT owner, count FROM signature_counts ORDER BY owner").fetchall()
    return count, counts


def test_signatures_expire_on_the_stores_clock(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> None:
        async with SQLiteStore(tmp_path / "r.sqlite3", signature_ttl=60, clock=clock) as store:
            await store.remember_signatures(OWNER_A, {"a": "sig"})
            clock.now += 59.9
            assert await store.recall_signatures(OWNER_A, ["a"]) == {"a": "sig"}
            clock.now += 0.1
            assert await store.recall_signatures(OWNER_A, ["a"]) == {}

    run(scenario)


def test_remembering_sweeps_a_bounded_number_of_expired_signatures(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "r.sqlite3"

    async def scenario() -> None:
        async with SQLiteStore(path, signature_ttl=10, clock=clock, purge_batch=4) as store:
            await store.remember_signatures(OWNER_A, {f"a{n}": "s" for n in range(6)})
            await store.remember_signatures(OWNER_B, {f"b{n}": "s" for n in range(4)})
            clock.now += 11
            await store.remember_signatures(OWNER_B, {"new": "s"})

    run(scenario)
    # 4 of the 10 expired rows went, the oldest first; the counts followed.
    assert _rows(path) == (11 - 4, [(OWNER_A, 2), (OWNER_B, 5)])


def test_the_counts_follow_replacement_and_eviction(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"

    async def scenario() -> None:
        async with SQLiteStore(path, max_signatures=3) as store:
            await store.remember_signatures(OWNER_A, {"a": "1", "b": "1"})
            await store.remember_signatures(OWNER_A, {"a": "2", "b": "2"})
            await store.remember_signatures(OWNER_A, {"c": "1", "d": "1", "e": "1"})
            await store.remember_signatures(OWNER_B, {"a": "1"})

    run(scenario)
    assert _rows(path) == (4, [(OWNER_A, 3), (OWNER_B, 1)])


_VERSION_2_TABLES = ("signatures", "signature_counts")


def test_a_file_of_version_2_gains_signatures_keeping_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"

    async def save() -> None:
        async with SQLiteStore(path) as store:
            await store.save(turn("resp_old"))

    run(save)
    with sqlite3.connect(path) as db:  # what rxgem made before it remembered signatures
        for table in _VERSION_2_TABLES:
            db.execute(f"DROP TABLE {table}")
        db.execute("UPDATE schema_version SET version = 2")

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            assert await store.get("resp_old", OWNER_A) == turn("resp_old")
            await store.remember_signatures(OWNER_A, {"a": "sig"})
            assert await store.recall_signatures(OWNER_A, ["a"]) == {"a": "sig"}

    run(scenario)
    run(scenario)  # a second opening finds it done
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(3,)]
    assert _rows(path) == (1, [(OWNER_A, 1)])


def _rememberer(path: str, worker: int, count: int) -> None:
    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            owner = await store.owner("shared-token")
            for n in range(count):
                await store.remember_signatures(owner, {f"w{worker}:{n}": f"s{worker}.{n}"})

    run(scenario)


def test_worker_processes_share_signatures(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_rememberer, args=(str(path), w, 20)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0, 0]

    async def scenario() -> dict[str, str]:
        async with SQLiteStore(path) as store:
            owner = await store.owner("shared-token")
            keys = [f"w{w}:{n}" for w in range(3) for n in range(20)]
            return await store.recall_signatures(owner, keys)

    assert run(scenario) == {f"w{w}:{n}": f"s{w}.{n}" for w in range(3) for n in range(20)}


def test_remembering_past_the_timeout_raises(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    run(lambda: SQLiteStore(path).owner("t"))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holding the write lock

    async def scenario() -> float:
        async with SQLiteStore(path, timeout=0.3) as store:
            started = time.monotonic()
            with pytest.raises(StoreTimeoutError):
                await store.remember_signatures(OWNER_A, {"a": "s"})
            assert await store.recall_signatures(OWNER_A, ["a"]) == {}  # readers never wait
            return time.monotonic() - started

    try:
        assert run(scenario) < 2
    finally:
        blocker.close()


def test_a_closed_or_broken_store_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()

    async def scenario() -> None:
        store = SQLiteStore(tmp_path / "r.sqlite3")
        await store.aclose()
        with pytest.raises(StoreUnavailableError):
            await store.remember_signatures(OWNER_A, {"a": "s"})
        with pytest.raises(StoreUnavailableError):
            await store.recall_signatures(OWNER_A, ["a"])
        async with SQLiteStore(tmp_path / "folder") as directory:  # not a file
            with pytest.raises(StoreUnavailableError):
                await directory.recall_signatures(OWNER_A, ["a"])

    run(scenario)
