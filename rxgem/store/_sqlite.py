"""The embedded store: one SQLite file, shared by every worker process of a server.

Each operation runs in a small thread pool (one connection per thread), so the event
loop never waits on the disk; a progress handler stops a statement at the operation's
deadline, and SQLite's busy timeout bounds the wait for another process's write lock.
The file is in WAL mode (readers never wait for the writer), made 0600 before SQLite
opens it. Writes take the lock up front (``BEGIN IMMEDIATE``); each write also deletes
a few expired turns, so expired rows go away without a sweeper and without unbounded
work in any one request. Reads skip expired rows.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import TypeVar

from ._errors import (
    ChainTooLongError,
    InvalidPageError,
    StoreError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from ._ids import valid_item_id, valid_turn_id
from ._limits import (
    DEFAULT_MAX_CHAIN,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_TIMEOUT,
    check_owner,
    check_page,
    check_turn,
)
from ._owner import derive_owner, new_secret
from ._paths import create_private_file, default_path
from ._records import ItemsPage, Order, StoredItem, StoredTurn
from ._signatures import (
    DEFAULT_MAX_SIGNATURES,
    DEFAULT_SIGNATURE_TTL,
    check_signature_options,
    keys_to_recall,
    signatures_to_keep,
)
from ._sqlite_rows import (
    INPUT,
    NOT_EXPIRED,
    OUTPUT,
    PARAMS_PER_QUERY,
    batches,
    item_row,
    read_turns,
)
from ._sqlite_schema import SCHEMA, SCHEMA_VERSION, migrate
from ._sqlite_signatures import recall, remember

__all__ = ["SQLiteStore"]

T = TypeVar("T")


class _Connection:
    """A thread's connection and the deadline its progress handler enforces."""

    def __init__(self, path: Path, timeout: float) -> None:
        self.deadline = float("inf")
        self.db = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.set_progress_handler(self._past_deadline, 1000)

    def _past_deadline(self) -> int:
        return 1 if time.monotonic() > self.deadline else 0


class SQLiteStore:
    """A :class:`ResponseStore` in a SQLite file (the default store).

    Args:
        path: the database file; by default ``responses.sqlite3`` under the user's
            data directory (:func:`default_path`). Created 0600, with its folders
            (0700), on first use.
        ttl: seconds a turn is kept after it is saved; ``None`` keeps it until deleted.
        secret: the owner secret (at least 16 bytes); by default one is created in the
            file on first use (see :mod:`rxgem.store` on owner ids).
        timeout: seconds an operation may take before :class:`StoreTimeoutError`.
        max_record_bytes: the largest turn :meth:`save` accepts.
        max_items: the most items a turn may have.
        max_chain: the most turns :meth:`chain` reads (:class:`ChainTooLongError`
            beyond).
        signature_ttl: seconds a remembered signature is kept.
        max_signatures: the most signatures an owner keeps (the oldest go beyond;
            :data:`~rxgem.store.DEFAULT_MAX_SIGNATURES` says what that costs).
        purge_batch: the most expired turns, and signatures, one write deletes.
        threads: the size of the thread pool (the connections of this object).
        clock: the time, in Unix seconds (for tests).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        ttl: float | None = None,
        secret: bytes | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
        max_items: int = DEFAULT_MAX_ITEMS,
        max_chain: int = DEFAULT_MAX_CHAIN,
        signature_ttl: float = DEFAULT_SIGNATURE_TTL,
        max_signatures: int = DEFAULT_MAX_SIGNATURES,
        purge_batch: int = 16,
        threads: int = 4,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl is not None and not ttl > 0:
            raise ValueError("ttl is a positive number of seconds, or None")
        if not timeout > 0:
            raise ValueError("timeout is a positive number of seconds")
        check_signature_options(signature_ttl, max_signatures)
        if secret is not None:
            derive_owner(secret, "")  # rejects a short secret now, not on first use
        self.path = Path(path) if path is not None else default_path()
        self.ttl = ttl
        self.timeout = timeout
        self.max_record_bytes = max_record_bytes
        self.max_items = max_items
        self.max_chain = max_chain
        self.signature_ttl = signature_ttl
        self.max_signatures = max_signatures
        self._secret = secret
        self._purge_batch = purge_batch
        self._clock = clock
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="rxgem-store")
        self._local = threading.local()
        self._connections: list[_Connection] = []
        self._lock = threading.Lock()
        self._ready = False
        self._closed = False

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, ttl={self.ttl!r})"

    async def __aenter__(self) -> SQLiteStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- the ResponseStore interface

    async def owner(self, token: str) -> str:
        if self._secret is None:
            await self._run(lambda db, now: None)
        assert self._secret is not None
        return derive_owner(self._secret, token)

    async def save(self, turn: StoredTurn) -> None:
        check_turn(turn, max_record_bytes=self.max_record_bytes, max_items=self.max_items)
        await self._run(lambda db, now: self._save(db, now, turn))

    async def get(self, turn_id: str, owner: str) -> StoredTurn | None:
        check_owner(owner)
        if not valid_turn_id(turn_id):
            return None
        turns = await self._run(lambda db, now: self._get(db, now, owner, turn_id))
        return turns[0] if turns else None

    async def delete(self, turn_id: str, owner: str) -> bool:
        check_owner(owner)
        if not valid_turn_id(turn_id):
            return False
        return await self._run(lambda db, now: self._delete(db, now, owner, turn_id))

    async def input_items(
        self,
        turn_id: str,
        owner: str,
        *,
        after: str | None = None,
        limit: int = 20,
        order: Order = "desc",
    ) -> ItemsPage | None:
        check_owner(owner)
        check_page(limit, order)
        if not valid_turn_id(turn_id):
            return None
        if after is not None and not valid_item_id(after):
            raise InvalidPageError("after is not an input item of this response")
        return await self._run(
            lambda db, now: self._input_items(db, now, owner, turn_id, after, limit, order)
        )

    async def items(self, item_ids: Sequence[str], owner: str) -> dict[str, StoredItem]:
        check_owner(owner)
        wanted = [item_id for item_id in dict.fromkeys(item_ids) if valid_item_id(item_id)]
        if not wanted:
            return {}
        return await self._run(lambda db, now: self._items(db, now, owner, wanted))

    async def chain(self, turn_id: str, owner: str) -> list[StoredTurn] | None:
        check_owner(owner)
        if not valid_turn_id(turn_id):
            return None
        return await self._run(lambda db, now: self._chain(db, now, owner, turn_id))

    async def remember_signatures(self, owner: str, signatures: Mapping[str, str]) -> None:
        check_owner(owner)
        kept = signatures_to_keep(signatures, self.max_signatures)
        if kept:
            ttl, most, batch = self.signature_ttl, self.max_signatures, self._purge_batch
            await self._run(
                lambda db, now: remember(
                    db, now, owner, kept, ttl=ttl, most=most, purge_batch=batch
                )
            )

    async def recall_signatures(self, owner: str, keys: Sequence[str]) -> dict[str, str]:
        check_owner(owner)
        wanted = keys_to_recall(keys)
        if not wanted:
            return {}
        return await self._run(lambda db, now: recall(db, now, owner, wanted))

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self._shutdown)

    # -- running an operation in the pool

    async def _run(self, operation: Callable[[sqlite3.Connection, float], T]) -> T:
        if self._closed:
            raise StoreUnavailableError("the store is closed")
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + self.timeout
        try:
            async with asyncio.timeout(self.timeout):
                return await loop.run_in_executor(self._executor, self._call, operation, deadline)
        except StoreError:
            raise
        except TimeoutError as exc:
            raise StoreTimeoutError(f"the store took longer than {self.timeout} s") from exc

    def _call(self, operation: Callable[[sqlite3.Connection, float], T], deadline: float) -> T:
        try:
            connection = self._connection()
            connection.deadline = deadline
            db = connection.db
            try:
                if not self._ready:
                    self._prepare(db)
                return operation(db, self._clock())
            finally:
                connection.deadline = float("inf")
                if db.in_transaction:
                    db.execute("ROLLBACK")
        except StoreError:
            raise
        except sqlite3.Error as exc:
            if time.monotonic() >= deadline:
                raise StoreTimeoutError(f"the store took longer than {self.timeout} s") from exc
            raise StoreUnavailableError(f"{self.path}: {exc}") from exc
        except OSError as exc:
            raise StoreUnavailableError(f"{self.path}: {exc}") from exc

    def _connection(self) -> _Connection:
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            create_private_file(self.path)
            connection = _Connection(self.path, self.timeout)
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _prepare(self, db: sqlite3.Connection) -> None:
        """Create or check the schema and read the owner secret, once per store object
        (several processes may do it at the same time). A file already set up is only
        read: opening a store never waits for another's write."""
        with self._lock:
            if self._ready:
                return
            if db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            secret = self._read_setup(db)
            if secret is None:
                db.execute("BEGIN IMMEDIATE")
                for statement in SCHEMA:
                    db.execute(statement)
                if self._read_version(db) is None:
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
                db.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('owner_secret', ?)",
                    (new_secret(),),
                )
                db.execute("COMMIT")
                secret = self._read_setup(db)
                assert secret is not None
            version = self._read_version(db)
            if version is not None and version < SCHEMA_VERSION:
                migrate(db, version)
            if self._secret is None:
                self._secret = secret
            self._ready = True

    def _read_setup(self, db: sqlite3.Connection) -> bytes | None:
        """The owner secret of a file set up at this schema version, or ``None``."""
        exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        if not db.execute(exists, ("schema_version",)).fetchone():
            return None
        if self._read_version(db) is None or not db.execute(exists, ("meta",)).fetchone():
            return None
        row = db.execute("SELECT value FROM meta WHERE key = 'owner_secret'").fetchone()
        return None if row is None else bytes(row[0])

    def _read_version(self, db: sqlite3.Connection) -> int | None:
        (version,) = db.execute("SELECT max(version) FROM schema_version").fetchone()
        if version is not None and version > SCHEMA_VERSION:
            raise StoreUnavailableError(
                f"{self.path} has schema version {version}; this rxgem reads"
                f" version {SCHEMA_VERSION}: upgrade rxgem or use another file"
            )
        return None if version is None else int(version)

    def _shutdown(self) -> None:
        self._executor.shutdown(wait=True)
        with self._lock:
            for connection in self._connections:
                connection.db.close()
            self._connections.clear()

    # -- the operations, each in one transaction on a pool thread

    def _save(self, db: sqlite3.Connection, now: float, turn: StoredTurn) -> None:
        expires_at = None if self.ttl is None else now + self.ttl
        db.execute("BEGIN IMMEDIATE")
        self._purge(db, now)
        db.execute("DELETE FROM turns WHERE owner = ? AND id = ?", (turn.owner, turn.id))
        db.execute(
            "INSERT INTO turns (owner, id, created_at, expires_at, previous_id, document,"
            " interaction_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                *(turn.owner, turn.id, turn.created_at, expires_at, turn.previous_id),
                *(turn.document, turn.interaction_id),
            ),
        )
        db.executemany(
            "INSERT INTO items (owner, turn_id, kind, position, item_id, data, opaque)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (turn.owner, turn.id, kind, position, item.id, item.data, item.opaque)
                for kind, items in ((INPUT, turn.input), (OUTPUT, turn.output))
                for position, item in enumerate(items)
            ],
        )
        if turn.previous_id is not None and expires_at is not None:
            # The turns this one continues live at least as long as it does.
            db.execute(
                "WITH RECURSIVE chain (id, depth) AS ("
                "  SELECT ?, 0"
                "  UNION ALL"
                "  SELECT t.previous_id, c.depth + 1 FROM chain c"
                "  JOIN turns t ON t.owner = ? AND t.id = c.id"
                "  WHERE t.previous_id IS NOT NULL AND c.depth < ?"
                ") UPDATE turns SET expires_at = max(expires_at, ?)"
                f" WHERE owner = ? AND id IN (SELECT id FROM chain) AND {NOT_EXPIRED}",
                (turn.previous_id, turn.owner, self.max_chain, expires_at, turn.owner, now),
            )
        db.execute("COMMIT")

    def _purge(self, db: sqlite3.Connection, now: float) -> None:
        db.execute(
            "DELETE FROM turns WHERE rowid IN (SELECT rowid FROM turns"
            " WHERE expires_at IS NOT NULL AND expires_at <= ? ORDER BY expires_at LIMIT ?)",
            (now, self._purge_batch),
        )

    def _delete(self, db: sqlite3.Connection, now: float, owner: str, turn_id: str) -> bool:
        db.execute("BEGIN IMMEDIATE")
        found = db.execute(
            f"SELECT 1 FROM turns WHERE owner = ? AND id = ? AND {NOT_EXPIRED}",
            (owner, turn_id, now),
        ).fetchone()
        db.execute("DELETE FROM turns WHERE owner = ? AND id = ?", (owner, turn_id))
        self._purge(db, now)
        db.execute("COMMIT")
        return found is not None

    def _get(
        self, db: sqlite3.Connection, now: float, owner: str, turn_id: str
    ) -> list[StoredTurn]:
        db.execute("BEGIN")
        turns = read_turns(db, now, owner, [turn_id])
        db.execute("COMMIT")
        return turns

    def _input_items(
        self,
        db: sqlite3.Connection,
        now: float,
        owner: str,
        turn_id: str,
        after: str | None,
        limit: int,
        order: Order,
    ) -> ItemsPage | None:
        db.execute("BEGIN")
        if not db.execute(
            f"SELECT 1 FROM turns WHERE owner = ? AND id = ? AND {NOT_EXPIRED}",
            (owner, turn_id, now),
        ).fetchone():
            return None
        if after is None:
            start = -1 if order == "asc" else 2**62
        else:
            (start,) = db.execute(
                "SELECT min(position) FROM items"
                " WHERE owner = ? AND turn_id = ? AND kind = ? AND item_id = ?",
                (owner, turn_id, INPUT, after),
            ).fetchone()
            if start is None:
                raise InvalidPageError("after is not an input item of this response")
        comparison, direction = (">", "ASC") if order == "asc" else ("<", "DESC")
        rows = db.execute(
            "SELECT item_id, data, opaque FROM items"
            f" WHERE owner = ? AND turn_id = ? AND kind = ? AND position {comparison} ?"
            f" ORDER BY position {direction} LIMIT ?",
            (owner, turn_id, INPUT, start, limit + 1),
        ).fetchall()
        db.execute("COMMIT")
        page = [item_row(*row) for row in rows[:limit]]
        return ItemsPage(items=tuple(page), has_more=len(rows) > limit)

    def _items(
        self, db: sqlite3.Connection, now: float, owner: str, item_ids: Sequence[str]
    ) -> dict[str, StoredItem]:
        found: dict[str, StoredItem] = {}
        db.execute("BEGIN")
        for batch in batches(item_ids, PARAMS_PER_QUERY):
            marks = ", ".join("?" * len(batch))
            # In the order stored, so that the latest of an id found twice wins.
            for item_id, data, opaque in db.execute(
                "SELECT i.item_id, i.data, i.opaque FROM items i"
                " JOIN turns t ON t.owner = i.owner AND t.id = i.turn_id"
                f" WHERE i.owner = ? AND i.item_id IN ({marks})"
                " AND (t.expires_at IS NULL OR t.expires_at > ?) ORDER BY i.rowid",
                (owner, *batch, now),
            ):
                found[item_id] = item_row(item_id, data, opaque)
        db.execute("COMMIT")
        return found

    def _chain(
        self, db: sqlite3.Connection, now: float, owner: str, turn_id: str
    ) -> list[StoredTurn] | None:
        db.execute("BEGIN")
        links = db.execute(
            "WITH RECURSIVE chain (id, previous_id, depth) AS ("
            f"  SELECT id, previous_id, 0 FROM turns WHERE owner = ? AND id = ? AND {NOT_EXPIRED}"
            "  UNION ALL"
            "  SELECT t.id, t.previous_id, c.depth + 1 FROM chain c"
            "  JOIN turns t ON t.owner = ? AND t.id = c.previous_id"
            "  WHERE c.depth < ? AND (t.expires_at IS NULL OR t.expires_at > ?)"
            ") SELECT id, previous_id FROM chain ORDER BY depth",
            (owner, turn_id, now, owner, self.max_chain, now),
        ).fetchall()
        if len(links) > self.max_chain:  # too long, or a cycle
            raise ChainTooLongError(self.max_chain)
        if not links or links[-1][1] is not None:
            return None  # no such turn, or a missing link
        ids = [link_id for link_id, _ in reversed(links)]
        turns: list[StoredTurn] = []
        for batch in batches(ids, PARAMS_PER_QUERY):
            turns += read_turns(db, now, owner, batch)
        return turns if len(turns) == len(ids) else None
