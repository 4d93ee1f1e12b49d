"""Stored responses: what ``previous_response_id``, ``item_reference`` and
``GET /v1/responses/{id}`` read back, kept per client.

A store keeps *turns* (:class:`StoredTurn`): one request answered, with its input
items, its output items and the response document, each item JSON bytes plus opaque
data of the server's own (Gemini's thought signatures, kept even when the client did
not ask for ``encrypted_content``). The Responses API stores its responses as turns;
an Interactions API reader can store its interactions the same way.

:class:`ResponseStore` is the interface, with two implementations:

- :class:`SQLiteStore`, the default: one file (``~/.local/share/rxgem/
  responses.sqlite3``, or ``$XDG_DATA_HOME/rxgem/...``), 0600, WAL, shared by the
  worker processes of one ``rxgem serve``;
- :class:`RedisStore`: one Redis for several instances behind a load balancer.

:func:`open_store` picks one from a path or URL. Every method is a coroutine bounded
by the store's ``timeout``; a turn bigger than ``max_record_bytes`` or with more than
``max_items`` items is refused with :class:`RecordTooLargeError`, a conversation of more
than ``max_chain`` turns is not read (:class:`ChainTooLongError`); with a ``ttl`` turns
expire.

Signature memory. A store also remembers Gemini's thought signatures for the server
(:meth:`ResponseStore.remember_signatures`, :meth:`ResponseStore.recall_signatures`),
under the owner and keys of the server's making (opaque to the store), so that a client
that echoes an id without its signature still gets it back to Gemini. Each expires
``signature_ttl`` seconds after it was remembered (:data:`DEFAULT_SIGNATURE_TTL`, a
day); beyond ``max_signatures`` per owner (:data:`DEFAULT_MAX_SIGNATURES`) the oldest
go. Keys and values out of bounds (:data:`MAX_SIGNATURE_KEY`,
:data:`MAX_SIGNATURE_BYTES`) are skipped, never an error, and a recall reads at most
:data:`MAX_RECALL` keys.

Owner ids. A client's turns are stored under ``await store.owner(token)``, an
HMAC-SHA256 of its bearer token under a secret of the store's (created on first use
and kept in the store, or given); the token itself is never stored. Every lookup
takes the owner, and another owner's turn is indistinguishable from a missing one.
:mod:`rxgem.store._owner` says why a keyed hash and when to give your own secret.

The modules: ``_records`` (the records), ``_turns`` (a Responses request and its answer
as a turn, and stored turns back as the translation's ``history``), ``_protocol`` (the
interface), ``_ids`` (which ids are accepted), ``_owner`` (owner ids), ``_limits`` (size
and page checks), ``_errors`` (the exception tree), ``_paths`` (the default file),
``_signatures`` (signature memory's limits), ``_sqlite`` with ``_sqlite_schema``,
``_sqlite_rows`` and ``_sqlite_signatures``, ``_redis`` with ``_redis_scripts``, and
``_open``.
``import rxgem`` does not import this package, and this package imports ``redis``
only when a :class:`RedisStore` is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._errors import (
    ChainTooLongError,
    InvalidIdError,
    InvalidPageError,
    RecordTooLargeError,
    StoreError,
    StoreTimeoutError,
    StoreUnavailableError,
)
from ._open import open_store
from ._protocol import ResponseStore
from ._records import ItemsPage, Order, StoredItem, StoredTurn
from ._signatures import MAX_RECALL, MAX_SIGNATURE_BYTES, MAX_SIGNATURE_KEY
from ._sqlite import SQLiteStore

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._ids import valid_item_id as valid_item_id, valid_turn_id as valid_turn_id
from ._limits import (
    DEFAULT_MAX_CHAIN as DEFAULT_MAX_CHAIN,
    DEFAULT_MAX_ITEMS as DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_RECORD_BYTES as DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    MAX_PAGE as MAX_PAGE,
)
from ._open import store_location as store_location
from ._signatures import (
    DEFAULT_MAX_SIGNATURES as DEFAULT_MAX_SIGNATURES,
    DEFAULT_SIGNATURE_TTL as DEFAULT_SIGNATURE_TTL,
)
from ._turns import (
    ANONYMOUS as ANONYMOUS,
    history_items as history_items,
    is_background as is_background,
    is_running as is_running,
    items_page as items_page,
    new_response_id as new_response_id,
    normalized_input as normalized_input,
    replayed_ids as replayed_ids,
    resolved_item as resolved_item,
    stored_inputs as stored_inputs,
    stored_turn as stored_turn,
    with_stored_signatures as with_stored_signatures,
)
# isort: on

if TYPE_CHECKING:
    from ._redis import RedisStore

__all__ = [
    "MAX_RECALL",
    "MAX_SIGNATURE_BYTES",
    "MAX_SIGNATURE_KEY",
    "ChainTooLongError",
    "InvalidIdError",
    "InvalidPageError",
    "ItemsPage",
    "Order",
    "RecordTooLargeError",
    "RedisStore",
    "ResponseStore",
    "SQLiteStore",
    "StoreError",
    "StoreTimeoutError",
    "StoreUnavailableError",
    "StoredItem",
    "StoredTurn",
    "open_store",
]

# Tracebacks and reprs name these where users import them, and pickling finds them here.
for _name in (
    ChainTooLongError,
    InvalidIdError,
    InvalidPageError,
    RecordTooLargeError,
    StoreError,
    StoreTimeoutError,
    StoreUnavailableError,
    ItemsPage,
    StoredItem,
    StoredTurn,
    SQLiteStore,
):
    _name.__module__ = __name__
del _name


_RETIRED = {
    "MAX_ID_LENGTH": "._ids",
    "TURN_ID_PREFIXES": "._ids",
    "default_path": "._paths",
    "new_item_id": "._turns",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    # RedisStore imports the redis client (an optional dependency) on first use.
    if name == "RedisStore":
        from ._redis import RedisStore

        RedisStore.__module__ = __name__
        globals()[name] = RedisStore
        return RedisStore
    if name in _RETIRED:
        import importlib
        import warnings

        warnings.warn(
            f"{__name__}.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
