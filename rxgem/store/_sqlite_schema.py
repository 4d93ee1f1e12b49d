"""The SQLite store's schema, and the version this code reads and writes."""

from __future__ import annotations

import sqlite3

__all__ = ["SCHEMA", "SCHEMA_VERSION", "migrate"]

SCHEMA_VERSION = 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL,
    previous_id TEXT,
    document BLOB NOT NULL,
    interaction_id TEXT,
    PRIMARY KEY (owner, id)
);
CREATE INDEX IF NOT EXISTS turns_by_expiry ON turns (expires_at)
    WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS items (
    owner TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    kind INTEGER NOT NULL,
    position INTEGER NOT NULL,
    item_id TEXT NOT NULL,
    data BLOB NOT NULL,
    opaque BLOB,
    UNIQUE (owner, turn_id, kind, position),
    FOREIGN KEY (owner, turn_id) REFERENCES turns (owner, id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS items_by_id ON items (owner, item_id);
"""
"""``turns``: one row per stored turn, keyed by owner and id (an id is only ever looked
up with its owner). ``items``: the input (``kind`` 0) and output (``kind`` 1) items of
each turn in order, deleted with their turn; ``items_by_id`` resolves
``item_reference``. ``meta``: the owner secret. ``expires_at`` is ``NULL`` for a turn
kept until deleted; ``interaction_id`` for a turn Google does not keep."""

_MIGRATIONS = {
    1: ("ALTER TABLE turns ADD COLUMN interaction_id TEXT",),
}
"""The statements that bring a file from each older version to the next."""


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a file at ``version`` to :data:`SCHEMA_VERSION`, in one write transaction
    (read again inside it: another process may have done it meanwhile). Columns are
    only added, so an older file's turns read back as they were."""
    db.execute("BEGIN IMMEDIATE")
    (current,) = db.execute("SELECT max(version) FROM schema_version").fetchone()
    for step in range(current if current is not None else version, SCHEMA_VERSION):
        for statement in _MIGRATIONS[step]:
            db.execute(statement)
    db.execute("DELETE FROM schema_version")
    db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    db.execute("COMMIT")
