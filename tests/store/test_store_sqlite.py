"""The SQLite store's own promises: a private file in WAL mode, several processes
writing at once, retention on an injected clock, bounded purging, timeouts."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import stat
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from store_helpers import OWNER_A, run, turn

from rxgem.store import SQLiteStore, StoreTimeoutError, StoreUnavailableError
from rxgem.store._paths import default_path


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_the_file_is_private_and_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "new" / "folder" / "responses.sqlite3"

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            await store.save(turn("resp_1"))
            assert stat.S_IMODE(path.stat().st_mode) == 0o600
            assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
            wal = path.with_name(path.name + "-wal")
            assert stat.S_IMODE(wal.stat().st_mode) == 0o600

    run(scenario)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(3,)]


def test_no_token_is_stored_in_clear(tmp_path: Path) -> None:
    token = "sk-very-secret-client-token"
    path = tmp_path / "r.sqlite3"

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            owner = await store.owner(token)
            await store.save(turn("resp_1", owner))

    run(scenario)
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert token.encode() not in stored


def test_a_file_of_a_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    run(lambda: SQLiteStore(path).owner("t"))
    with sqlite3.connect(path) as db:
        db.execute("UPDATE schema_version SET version = 99")

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            with pytest.raises(StoreUnavailableError, match="schema version 99"):
                await store.get("resp_1", OWNER_A)

    run(scenario)


_VERSION_1_TURNS = """CREATE TABLE turns (
    owner TEXT NOT NULL, id TEXT NOT NULL, created_at REAL NOT NULL, expires_at REAL,
    previous_id TEXT, document BLOB NOT NULL, PRIMARY KEY (owner, id))"""


def test_a_file_of_version_1_is_brought_to_version_3_keeping_its_turns(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    run(lambda: SQLiteStore(path).owner("t"))
    with sqlite3.connect(path) as db:  # what rxgem made before turns had an interaction id
        db.execute("DROP TABLE turns")
        db.execute(_VERSION_1_TURNS)
        db.execute("UPDATE schema_version SET version = 1")
        db.execute("INSERT INTO turns VALUES (?, 'resp_old', 1.5, NULL, NULL, X'7B7D')", (OWNER_A,))

    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            old = await store.get("resp_old", OWNER_A)
            assert old is not None
            assert old.interaction_id is None
            assert old.document == b"{}"
            await store.save(replace(turn("resp_new"), interaction_id="v1_abc"))
            new = await store.get("resp_new", OWNER_A)
            assert new is not None
            assert new.interaction_id == "v1_abc"

    run(scenario)
    run(scenario)  # a second opening finds it done
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version FROM schema_version").fetchall() == [(3,)]


def test_turns_expire_after_the_ttl(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> None:
        async with SQLiteStore(tmp_path / "r.sqlite3", ttl=60, clock=clock) as store:
            await store.save(turn("resp_1"))
            clock.now += 59.9
            assert await store.get("resp_1", OWNER_A) is not None
            clock.now += 0.2
            assert await store.get("resp_1", OWNER_A) is None
            assert await store.input_items("resp_1", OWNER_A) is None
            assert await store.items(["in_0_1"], OWNER_A) == {}
            assert await store.chain("resp_1", OWNER_A) is None
            assert await store.delete("resp_1", OWNER_A) is False

    run(scenario)


def test_a_conversation_lives_as_long_as_its_latest_turn(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> None:
        async with SQLiteStore(tmp_path / "r.sqlite3", ttl=100, clock=clock) as store:
            await store.save(turn("resp_a"))
            clock.now += 60
            await store.save(turn("resp_b", previous="resp_a"))
            await store.save(turn("resp_other"))
            clock.now += 60  # resp_a's own ttl is over, resp_b's is not
            assert [t.id for t in await store.chain("resp_b", OWNER_A) or []] == [
                "resp_a",
                "resp_b",
            ]
            assert list(await store.items(["out_0_a"], OWNER_A)) == ["out_0_a"]
            clock.now += 50
            assert await store.chain("resp_b", OWNER_A) is None

    run(scenario)


def test_writes_purge_a_bounded_number_of_expired_turns(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "r.sqlite3"

    async def scenario() -> None:
        async with SQLiteStore(path, ttl=10, clock=clock, purge_batch=4) as store:
            for n in range(10):
                await store.save(turn(f"resp_{n}"))
            clock.now += 11
            await store.save(turn("resp_new"))

    def rows() -> tuple[int, int]:
        with sqlite3.connect(path) as db:
            (turns,) = db.execute("SELECT count(*) FROM turns").fetchone()
            (items,) = db.execute("SELECT count(*) FROM items").fetchone()
        return turns, items

    run(scenario)
    assert rows() == (11 - 4, (11 - 4) * 3)


def test_an_operation_past_its_timeout_raises(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    run(lambda: SQLiteStore(path).owner("t"))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process holding the write lock

    async def scenario() -> float:
        async with SQLiteStore(path, timeout=0.3) as store:
            started = time.monotonic()
            with pytest.raises(StoreTimeoutError):
                await store.save(turn("resp_1"))
            return time.monotonic() - started

    try:
        assert run(scenario) < 2
    finally:
        blocker.close()


def _writer(path: str, worker: int, count: int) -> None:
    async def scenario() -> None:
        async with SQLiteStore(path) as store:
            owner = await store.owner("shared-token")
            for start in range(0, count, 5):  # several connections of this process at once
                await asyncio.gather(
                    *(
                        store.save(turn(f"resp_w{worker}_{n}", owner))
                        for n in range(start, start + 5)
                    )
                )

    run(scenario)


def test_several_processes_write_one_file(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(path), w, 25)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert [worker.exitcode for worker in workers] == [0, 0, 0]

    async def scenario() -> list[bool]:
        async with SQLiteStore(path) as store:
            owner = await store.owner("shared-token")
            return [
                await store.get(f"resp_w{w}_{n}", owner) == turn(f"resp_w{w}_{n}", owner)
                for w in range(3)
                for n in range(25)
            ]

    assert all(run(scenario))


def test_opening_a_file_keeps_this_processs_sqlite_locks(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite3"
    run(lambda: SQLiteStore(path).owner("t"))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN")
    holder.execute("SELECT count(*) FROM turns").fetchone()  # a read in progress
    # SQLite's shared lock on the database file, the one whose loss lets another
    # process think it is the last connection (and checkpoint and delete the WAL).
    probe = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002)\n"
        "except OSError:\n    print('locked')\nelse:\n    print('free')\n"
    )

    def lock_seen_from_another_process() -> str:
        result = subprocess.run(
            [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=60
        )
        return result.stdout.strip()

    async def scenario() -> None:
        async with SQLiteStore(path) as store:  # another store of this process, same file
            await store.get("resp_1", OWNER_A)

    try:
        assert lock_seen_from_another_process() == "locked"
        run(scenario)
        assert lock_seen_from_another_process() == "locked"
    finally:
        holder.close()


def test_the_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "rxgem" / "responses.sqlite3"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_path() == tmp_path / ".local" / "share" / "rxgem" / "responses.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert SQLiteStore().path == tmp_path / ".local" / "share" / "rxgem" / "responses.sqlite3"


def test_a_closed_store_refuses_work(tmp_path: Path) -> None:
    async def scenario() -> None:
        store = SQLiteStore(tmp_path / "r.sqlite3")
        await store.aclose()
        with pytest.raises(StoreUnavailableError):
            await store.get("resp_1", OWNER_A)

    run(scenario)
