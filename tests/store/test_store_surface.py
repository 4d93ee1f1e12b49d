"""``rxgem.store``'s face: one ``__all__`` (so the API never grows by accident), the
exception tree under :class:`rxgem.RxGemError`, the names shown where they are imported."""

from __future__ import annotations

import pickle

import rxgem
import rxgem.store
from rxgem.store import (
    ChainTooLongError,
    InvalidIdError,
    InvalidPageError,
    RecordTooLargeError,
    StoreError,
    StoreTimeoutError,
    StoreUnavailableError,
)

STORE = {
    # the interface, its records and the way to open one
    "ResponseStore",
    "StoredTurn",
    "StoredItem",
    "ItemsPage",
    "Order",
    "open_store",
    # the backends
    "SQLiteStore",
    "RedisStore",
    # the errors
    "StoreError",
    "ChainTooLongError",
    "InvalidIdError",
    "InvalidPageError",
    "RecordTooLargeError",
    "StoreTimeoutError",
    "StoreUnavailableError",
    # signature memory's bounds (docs/store.md)
    "MAX_SIGNATURE_KEY",
    "MAX_SIGNATURE_BYTES",
    "MAX_RECALL",
}


def test_the_store_exports_exactly_its_names() -> None:
    assert set(rxgem.store.__all__) == STORE
    assert len(rxgem.store.__all__) == len(STORE)
    assert all(getattr(rxgem.store, name) is not None for name in STORE - {"RedisStore"})


def test_the_errors_are_one_tree_under_rxgem_error() -> None:
    assert issubclass(StoreError, rxgem.RxGemError)
    for error in (ChainTooLongError, InvalidIdError, InvalidPageError, RecordTooLargeError):
        assert issubclass(error, StoreError)
    assert issubclass(StoreTimeoutError, StoreError)
    assert issubclass(StoreUnavailableError, StoreError)
    assert issubclass(InvalidIdError, ValueError)
    assert issubclass(InvalidPageError, ValueError)
    assert issubclass(StoreTimeoutError, TimeoutError)


def test_errors_are_named_where_imported_and_pickle() -> None:
    error = RecordTooLargeError(10, 5, "items")
    assert type(error).__module__ == "rxgem.store"
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), again.args, again.size, again.limit, again.what) == (
        RecordTooLargeError,
        error.args,
        10,
        5,
        "items",
    )
    chain = ChainTooLongError(1000)
    assert type(chain).__module__ == "rxgem.store"
    again_chain = pickle.loads(pickle.dumps(chain))
    assert (type(again_chain), again_chain.args, again_chain.limit) == (
        ChainTooLongError,
        chain.args,
        1000,
    )


def test_ids_are_checked_without_patterns_reaching_a_backend() -> None:
    assert rxgem.store.valid_turn_id("resp_abc-DEF_123")
    for bad in ("resp_", "resp_a/b", "resp_a*", "resp_a b", "RESP_a", "resp_é", None, 1):
        assert not rxgem.store.valid_turn_id(bad), bad
    assert rxgem.store.valid_item_id("fc_1.2:3")
    for bad in ("", "a b", "a*", "a{b}", "a\n", "x" * 129):
        assert not rxgem.store.valid_item_id(bad), bad
