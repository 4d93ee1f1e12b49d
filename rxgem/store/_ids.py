"""Which ids a store accepts. Ids come from clients (a path segment, an ``after`` cursor, an
``item_reference``); they become SQL parameters and Redis key suffixes, never patterns or
file names, and a store looks up only ids that pass these checks (any other is not found).
"""

from __future__ import annotations

import re

__all__ = ["MAX_ID_LENGTH", "TURN_ID_PREFIXES", "valid_item_id", "valid_owner", "valid_turn_id"]

MAX_ID_LENGTH = 128
"""The longest turn or item id a store accepts."""

TURN_ID_PREFIXES = ("resp_",)
"""The prefixes a turn id may have: Responses API ids. A later kind of turn adds its own."""

_SAFE = re.compile(r"[A-Za-z0-9_-]+")
_ITEM = re.compile(r"[A-Za-z0-9_.:-]+")
_OWNER = re.compile(r"[0-9a-f]{64}")


def valid_turn_id(value: object) -> bool:
    """Whether ``value`` is a turn id: a known prefix, then letters, digits, ``_`` and ``-``,
    at most :data:`MAX_ID_LENGTH` characters in all."""
    return (
        isinstance(value, str)
        and len(value) <= MAX_ID_LENGTH
        and value.startswith(TURN_ID_PREFIXES)
        and value.isascii()
        and _SAFE.fullmatch(value) is not None
        and not any(value == prefix for prefix in TURN_ID_PREFIXES)
    )


def valid_item_id(value: object) -> bool:
    """Whether ``value`` is an item id: 1 to :data:`MAX_ID_LENGTH` ASCII letters, digits,
    ``_``, ``-``, ``.`` or ``:`` (the ids clients give their items fit; a server gives an
    item without a fitting id one of its own)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_ID_LENGTH
        and value.isascii()
        and _ITEM.fullmatch(value) is not None
    )


def valid_owner(value: object) -> bool:
    """Whether ``value`` is an owner id as :meth:`ResponseStore.owner` makes them: 64
    lowercase hex digits (an HMAC-SHA256)."""
    return isinstance(value, str) and _OWNER.fullmatch(value) is not None
