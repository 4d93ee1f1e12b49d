"""The checks a turn passes before a store writes it: well-formed ids and bounded size."""

from __future__ import annotations

from ._errors import InvalidIdError, InvalidPageError, RecordTooLargeError
from ._ids import valid_item_id, valid_owner, valid_turn_id
from ._records import Order, StoredTurn

__all__ = [
    "DEFAULT_MAX_CHAIN",
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_RECORD_BYTES",
    "DEFAULT_TIMEOUT",
    "MAX_PAGE",
    "check_owner",
    "check_page",
    "check_turn",
]

DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
"""A turn's largest size by default: twice the server's largest request body (its input
and an output of the same order)."""

DEFAULT_MAX_ITEMS = 10_000
"""The most input and output items a turn may have by default."""

DEFAULT_MAX_CHAIN = 1_000
"""The most turns a ``previous_response_id`` chain may have by default."""

DEFAULT_TIMEOUT = 10.0
"""Seconds a store operation may take by default."""

MAX_PAGE = 100
"""The largest ``limit`` of a page of input items (OpenAI's)."""


def check_owner(owner: str) -> None:
    """Raise :class:`InvalidIdError` unless ``owner`` is an owner id."""
    if not valid_owner(owner):
        raise InvalidIdError("an owner id is 64 lowercase hex digits, from store.owner(token)")


def check_turn(turn: StoredTurn, *, max_record_bytes: int, max_items: int) -> None:
    """Raise unless ``turn`` may be stored: its ids well formed, its size within limits."""
    check_owner(turn.owner)
    if not valid_turn_id(turn.id):
        raise InvalidIdError(f"not a turn id: {turn.id[:140]!r}")
    if turn.previous_id is not None and not valid_turn_id(turn.previous_id):
        raise InvalidIdError(f"not a turn id: {turn.previous_id[:140]!r}")
    count = len(turn.input) + len(turn.output)
    if count > max_items:
        raise RecordTooLargeError(count, max_items, "items")
    for item in (*turn.input, *turn.output):
        if not valid_item_id(item.id):
            raise InvalidIdError(f"not an item id: {item.id[:140]!r}")
    size = turn.size
    if size > max_record_bytes:
        raise RecordTooLargeError(size, max_record_bytes)


def check_page(limit: int, order: Order) -> None:
    """Raise :class:`InvalidPageError` unless ``limit`` and ``order`` are in bounds."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidPageError(f"limit must be an integer from 1 to {MAX_PAGE}, not {limit!r}")
    if order not in ("asc", "desc"):
        raise InvalidPageError(f"order must be 'asc' or 'desc', not {order!r}")
