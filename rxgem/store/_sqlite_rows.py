"""Rows of the SQLite store into records, and the pieces its queries share."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from ._records import StoredItem, StoredTurn

__all__ = [
    "INPUT",
    "NOT_EXPIRED",
    "OUTPUT",
    "PARAMS_PER_QUERY",
    "batches",
    "item_row",
    "read_turns",
]

INPUT, OUTPUT = 0, 1
"""The ``kind`` of an input item and of an output item."""

NOT_EXPIRED = "(expires_at IS NULL OR expires_at > ?)"
"""The condition a live turn meets, given the time."""

PARAMS_PER_QUERY = 500
"""The most ids one query names (SQLite's default limit is far above)."""


def read_turns(
    db: sqlite3.Connection, now: float, owner: str, turn_ids: Sequence[str]
) -> list[StoredTurn]:
    """The turns of ``turn_ids`` that are there and not expired, in that order, with
    their items (in the caller's transaction)."""
    marks = ", ".join("?" * len(turn_ids))
    rows = db.execute(
        f"SELECT id, created_at, previous_id, document, interaction_id FROM turns"
        f" WHERE owner = ? AND id IN ({marks}) AND {NOT_EXPIRED}",
        (owner, *turn_ids, now),
    ).fetchall()
    items: dict[tuple[str, int], list[StoredItem]] = {}
    for turn_id, kind, item_id, data, opaque in db.execute(
        f"SELECT turn_id, kind, item_id, data, opaque FROM items"
        f" WHERE owner = ? AND turn_id IN ({marks}) ORDER BY turn_id, kind, position",
        (owner, *turn_ids),
    ):
        items.setdefault((turn_id, kind), []).append(item_row(item_id, data, opaque))
    found = {
        turn_id: StoredTurn(
            id=turn_id,
            owner=owner,
            created_at=created_at,
            document=bytes(document),
            input=tuple(items.get((turn_id, INPUT), ())),
            output=tuple(items.get((turn_id, OUTPUT), ())),
            previous_id=previous_id,
            interaction_id=interaction_id,
        )
        for turn_id, created_at, previous_id, document, interaction_id in rows
    }
    return [found[turn_id] for turn_id in turn_ids if turn_id in found]


def item_row(item_id: str, data: bytes, opaque: bytes | None) -> StoredItem:
    """An item from its row's columns."""
    return StoredItem(item_id, bytes(data), None if opaque is None else bytes(opaque))


def batches(values: Sequence[str], size: int) -> Iterable[Sequence[str]]:
    """``values`` in slices of at most ``size``, for queries naming each value."""
    for start in range(0, len(values), size):
        yield values[start : start + size]
