"""The SQLite store's schema, and the version this code reads and writes."""

from __future__ import annotations

__all__ = ["SCHEMA", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1

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
kept until deleted."""
