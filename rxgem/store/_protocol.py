"""The store interface: what a Responses endpoint (and later an Interactions reader) needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from ._records import ItemsPage, Order, StoredItem, StoredTurn

__all__ = ["ResponseStore"]


class ResponseStore(Protocol):
    """Stored turns and remembered thought signatures, scoped to their owner; every
    method is a coroutine with a timeout.

    Every lookup takes the caller's owner id and behaves for another owner's turn
    exactly as for an id that was never stored: ``None``, ``False`` or nothing found.
    Ids that are not well formed (:func:`valid_turn_id`, :func:`valid_item_id`) are not
    found either; :meth:`save` raises :class:`InvalidIdError` for them. Expired turns
    (a store's ``ttl``) are never returned. Each method may raise
    :class:`StoreTimeoutError` or :class:`StoreUnavailableError`.
    """

    async def owner(self, token: str) -> str:
        """The owner id of a client's bearer token (an HMAC under the store's secret)."""
        ...

    async def save(self, turn: StoredTurn) -> None:
        """Store ``turn``, replacing a turn of its owner with the same id.

        Its expiry is the store's ``ttl`` from now, and the turns it continues
        (``previous_id`` and theirs) are kept at least as long: a conversation lives
        as long as its latest turn. Raises :class:`RecordTooLargeError` beyond
        ``max_record_bytes`` or ``max_items``, :class:`InvalidIdError` for a malformed
        id; nothing is stored then.
        """
        ...

    async def get(self, turn_id: str, owner: str) -> StoredTurn | None:
        """The turn with its items, or ``None``."""
        ...

    async def delete(self, turn_id: str, owner: str) -> bool:
        """Delete the turn and its items; ``False`` when there was none to delete."""
        ...

    async def input_items(
        self,
        turn_id: str,
        owner: str,
        *,
        after: str | None = None,
        limit: int = 20,
        order: Order = "desc",
    ) -> ItemsPage | None:
        """A page of the turn's input items (``GET /v1/responses/{id}/input_items``).

        ``order="asc"`` lists them as sent, ``"desc"`` the last first; ``after`` is the
        id of the item the page follows, in that order. ``None`` when there is no such
        turn. Raises :class:`InvalidPageError` for a ``limit`` outside 1-100 or an
        ``after`` that is not one of the turn's input items. Reads at most ``limit + 1``
        items, however many the turn has.
        """
        ...

    async def items(self, item_ids: Sequence[str], owner: str) -> dict[str, StoredItem]:
        """The owner's stored items (input or output) by id, for ``item_reference``.

        An id found in several turns gives the most recently stored item; ids not
        found are absent from the result.
        """
        ...

    async def chain(self, turn_id: str, owner: str) -> list[StoredTurn] | None:
        """The conversation ending with ``turn_id`` (``previous_response_id``), oldest
        first, each turn with its items; ``None`` when the turn, or one it continues,
        is not there (deleted, expired, another owner's). Raises
        :class:`ChainTooLongError` when it has more than the store's ``max_chain``
        turns (:meth:`save` keeps such a turn; it is only never read back as a
        chain)."""
        ...

    async def remember_signatures(self, owner: str, signatures: Mapping[str, str]) -> None:
        """Keep each Gemini thought signature under its key for ``owner``, replacing one
        with the same key (which then counts as the newest).

        Keys are opaque strings of the server's (``call:<model>:<call id>``...); the
        store does not parse them. Each signature expires the store's ``signature_ttl``
        seconds after it was remembered; beyond ``max_signatures`` per owner the oldest
        go. Keys longer than :data:`MAX_SIGNATURE_KEY` characters, values longer than
        :data:`MAX_SIGNATURE_BYTES` (UTF-8), empty strings and strings that are not
        UTF-8 (lone surrogates) are skipped, not an error: a signature not kept is a
        signature lost, never a failed request. Raises :class:`InvalidIdError` for a
        malformed owner, like every method.
        """
        ...

    async def recall_signatures(self, owner: str, keys: Sequence[str]) -> dict[str, str]:
        """The owner's unexpired signatures of ``keys``, by key; keys not found (never
        remembered, expired, evicted, another owner's) are absent from the result.

        Only the first :data:`MAX_RECALL` keys are read; the rest are absent too, as
        is any key that could not have been kept (see :meth:`remember_signatures`).
        """
        ...

    async def aclose(self) -> None:
        """Release the store's connections and threads."""
        ...
