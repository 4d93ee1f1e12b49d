"""The SQLite store's signature memory: the two operations, each one transaction on a
pool thread of :class:`~rxgem.store.SQLiteStore` (see ``_sqlite_schema`` for the table).

Remembering deletes the owner's rows of the same keys, inserts the new ones, sweeps a
few expired rows of anyone's and deletes the owner's oldest beyond its bound (its count
is kept by triggers, never counted): work linear in the number of signatures. Recalling
reads the keys by primary key and skips expired rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from ._sqlite_rows import PARAMS_PER_QUERY, batches

__all__ = ["recall", "remember"]


def remember(
    db: sqlite3.Connection,
    now: float,
    owner: str,
    signatures: dict[str, str],
    *,
    ttl: float,
    most: int,
    purge_batch: int,
) -> None:
    """Keep ``signatures`` (already checked) for ``owner`` until ``now + ttl``."""
    db.execute("BEGIN IMMEDIATE")
    db.execute(
        "DELETE FROM signatures WHERE rowid IN (SELECT rowid FROM signatures"
        " WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
        (now, purge_batch),
    )
    keys = list(signatures)
    for batch in batches(keys, PARAMS_PER_QUERY):
        marks = ", ".join("?" * len(batch))
        db.execute(f"DELETE FROM signatures WHERE owner = ? AND key IN ({marks})", (owner, *batch))
    expires_at = now + ttl
    db.executemany(
        "INSERT INTO signatures (owner, key, value, expires_at) VALUES (?, ?, ?, ?)",
        [(owner, key, value, expires_at) for key, value in signatures.items()],
    )
    row = db.execute("SELECT count FROM signature_counts WHERE owner = ?", (owner,)).fetchone()
    over = 0 if row is None else row[0] - most
    if over > 0:
        db.execute(
            "DELETE FROM signatures WHERE rowid IN (SELECT rowid FROM signatures"
            " WHERE owner = ? ORDER BY rowid LIMIT ?)",
            (owner, over),
        )
    db.execute("COMMIT")


def recall(db: sqlite3.Connection, now: float, owner: str, keys: Sequence[str]) -> dict[str, str]:
    """The owner's unexpired signatures of ``keys`` (already checked)."""
    found: dict[str, str] = {}
    db.execute("BEGIN")
    for batch in batches(keys, PARAMS_PER_QUERY):
        marks = ", ".join("?" * len(batch))
        found.update(
            db.execute(
                "SELECT key, value FROM signatures"
                f" WHERE owner = ? AND key IN ({marks}) AND expires_at > ?",
                (owner, *batch, now),
            ).fetchall()
        )
    db.execute("COMMIT")
    return found
