"""Building turns and running coroutines for the store tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from rxgem.store import ResponseStore, StoredItem, StoredTurn

T = TypeVar("T")

StoreFactory = Callable[..., ResponseStore]
"""Makes a store of the backend under test (the ``make_store`` fixture)."""

OWNER_A = "a" * 64
OWNER_B = "b" * 64


def run(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    return asyncio.run(scenario())


def item(item_id: str, text: str = "", opaque: bytes | None = None) -> StoredItem:
    data = json.dumps({"id": item_id, "type": "message", "content": text or item_id})
    return StoredItem(item_id, data.encode(), opaque)


def turn(
    turn_id: str,
    owner: str = OWNER_A,
    *,
    inputs: int = 2,
    outputs: int = 1,
    previous: str | None = None,
    created_at: float = 1_700_000_000.5,
) -> StoredTurn:
    """A turn whose items are named after it: ``in_<n>_<turn>`` and ``out_<n>_<turn>``."""
    name = turn_id.removeprefix("resp_")
    return StoredTurn(
        id=turn_id,
        owner=owner,
        created_at=created_at,
        document=json.dumps({"id": turn_id, "object": "response", "output": []}).encode(),
        input=tuple(item(f"in_{n}_{name}") for n in range(inputs)),
        output=tuple(item(f"out_{n}_{name}", opaque=b"\x00sig" * n) for n in range(outputs)),
        previous_id=previous,
    )
