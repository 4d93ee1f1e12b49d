"""The exceptions a store raises, as one tree (all are :class:`rxgem.RxGemError`)::

StoreError                  a store operation failed
├── ChainTooLongError       a conversation (``chain``) longer than the store's
│                           ``max_chain`` turns: it cannot be read back whole
├── InvalidIdError          a turn, item or owner id to save is malformed (also
│                           a ``ValueError``); a malformed id to look up is
│                           simply not found
├── InvalidPageError        a page request out of bounds: ``limit`` outside
│                           1-100, an ``order`` other than ``asc``/``desc``, an
│                           ``after`` cursor that is not an input item of the
│                           turn (also a ``ValueError``)
├── RecordTooLargeError     a turn bigger than the store's ``max_record_bytes``
│                           or with more than ``max_items`` items
├── StoreTimeoutError       the operation did not finish within the store's
│                           ``timeout`` (also a ``TimeoutError``)
└── StoreUnavailableError   the backend failed: a SQLite file that cannot be
                            opened or is of a newer schema, a Redis server that
                            cannot be reached; wraps the backend's exception
"""

from __future__ import annotations

from ..core import RxGemError

__all__ = [
    "ChainTooLongError",
    "InvalidIdError",
    "InvalidPageError",
    "RecordTooLargeError",
    "StoreError",
    "StoreTimeoutError",
    "StoreUnavailableError",
]


class StoreError(RxGemError):
    """Base class of every error a response store raises."""


class ChainTooLongError(StoreError):
    """A conversation has more turns than the store's ``max_chain``; nothing was read.

    Attributes:
        limit: the store's ``max_chain``.
    """

    def __init__(self, limit: int) -> None:
        super().__init__(f"the conversation is longer than the store's limit of {limit} turns")
        self.limit = limit

    def __reduce__(self) -> tuple[type[ChainTooLongError], tuple[int]]:
        return type(self), (self.limit,)


class InvalidIdError(StoreError, ValueError):
    """A turn, item or owner id to save is malformed (see :func:`rxgem.store.valid_turn_id`)."""


class InvalidPageError(StoreError, ValueError):
    """A page of input items was asked for with out-of-bounds parameters."""


class RecordTooLargeError(StoreError):
    """A turn exceeds the store's size limits; nothing was stored.

    Attributes:
        size: the turn's size (bytes, or items when ``what`` is ``"items"``).
        limit: the store's limit for it.
        what: ``"bytes"`` or ``"items"``.
    """

    def __init__(self, size: int, limit: int, what: str = "bytes") -> None:
        super().__init__(f"a stored turn of {size} {what} exceeds the store's limit of {limit}")
        self.size = size
        self.limit = limit
        self.what = what

    def __reduce__(self) -> tuple[type[RecordTooLargeError], tuple[int, int, str]]:
        return type(self), (self.size, self.limit, self.what)


class StoreTimeoutError(StoreError, TimeoutError):
    """A store operation took longer than the store's ``timeout``."""


class StoreUnavailableError(StoreError):
    """The backend failed; ``__cause__`` is its exception."""
