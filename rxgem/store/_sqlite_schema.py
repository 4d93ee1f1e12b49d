"""The SQLite store's schema, and the version this code reads and writes."""

from __future__ import annotations

import sqlite3

__all__ = ["SCHEMA", "SCHEMA_VERSION", "migrate"]

SCHEMA_VERSION = 3

_TURNS = """
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

SIGNATURES = (
    """CREATE TABLE IF NOT EXISTS signatures (
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at REAL NOT NULL,
    PRIMARY KEY (owner, key)
)""",
    "CREATE INDEX IF NOT EXISTS signatures_by_owner ON signatures (owner)",
    "CREATE INDEX IF NOT EXISTS signatures_by_expiry ON signatures (expires_at)",
    "CREATE TABLE IF NOT EXISTS signature_counts"
    " (owner TEXT PRIMARY KEY, count INTEGER NOT NULL) WITHOUT ROWID",
    """CREATE TRIGGER IF NOT EXISTS signature_counted AFTER INSERT ON signatures BEGIN
    INSERT INTO signature_counts (owner, count) VALUES (new.owner, 1)
        ON CONFLICT (owner) DO UPDATE SET count = count + 1;
END""",
    """CREATE TRIGGER IF NOT EXISTS signature_uncounted AFTER DELETE ON signatures BEGIN
    UPDATE signature_counts SET count = count - 1 WHERE owner = old.owner;
    DELETE FROM signature_counts WHERE owner = old.owner AND count <= 0;
END""",
)
"""``signatures``: one row per remembered signature, keyed by owner and the server's key.
A new row's rowid is above every other row's (SQLite's rule while rowids stay below
2**63), so ``signatures_by_owner`` (owner, rowid) lists an owner's oldest first; a
signature remembered again is deleted and inserted, and so becomes the newest.
``signature_counts``: each owner's number of rows, kept by the triggers whichever
statement inserts or deletes, so that bounding an owner never counts its rows."""

SCHEMA = (*(s.strip() for s in _TURNS.split(";") if s.strip()), *SIGNATURES)
"""The statements that set up a new file, in order."""

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: ("ALTER TABLE turns ADD COLUMN interaction_id TEXT",),
    2: SIGNATURES,
}
"""The statements that bring a file from each older version to the next."""


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a file at ``version`` to :data:`SCHEMA_VERSION`, in one write transaction
    (read again inside it: another process may have done it meanwhile). Columns are
    only added (columns, tables), so an older file's turns read back as they were."""
    db.execute("BEGIN IMMEDIATE")
    (current,) = db.execute("SELECT max(version) FROM schema_version").fetchone()
    for step in range(current if current is not None else version, SCHEMA_VERSION):
        for statement in _MIGRATIONS[step]:
            db.execute(statement)
    db.execute("DELETE FROM schema_version")
    db.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
    db.execute("COMMIT")
