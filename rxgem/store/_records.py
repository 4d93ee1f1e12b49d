"""What a store keeps: a turn (one request answered: its input items, its output items and
the response document) and its items, each JSON bytes plus opaque data of the server's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ItemsPage", "Order", "StoredItem", "StoredTurn"]

Order = Literal["asc", "desc"]
"""The order of a page of input items: ``asc`` as sent, ``desc`` newest first."""


@dataclass(frozen=True, slots=True)
class StoredItem:
    """One input or output item of a turn.

    Attributes:
        id: the item's id (``msg_...``, ``rs_...``, ``fc_...``), what an
            ``item_reference`` and an ``after`` cursor name; see
            :func:`rxgem.store.valid_item_id`.
        data: the item as the client sees it, JSON bytes (the store does not parse it).
        opaque: the server's own data kept beside the item and never shown as such,
            e.g. Gemini's thought signatures when the client did not ask for
            ``reasoning.encrypted_content``; ``None`` when there is none.
    """

    id: str
    data: bytes
    opaque: bytes | None = None

    @property
    def size(self) -> int:
        """Bytes this item counts for against a store's ``max_record_bytes``."""
        return len(self.id) + len(self.data) + len(self.opaque or b"")


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One request and its answer: a Responses API response, or later an interaction.

    Attributes:
        id: the turn's id (``resp_...``), see :func:`rxgem.store.valid_turn_id`.
        owner: whose it is, from :meth:`ResponseStore.owner` (never a token in clear).
        created_at: Unix time in seconds.
        document: the response object as JSON bytes (what ``GET /v1/responses/{id}``
            answers with).
        input: the request's input items, in the order sent (what
            ``GET /v1/responses/{id}/input_items`` pages through).
        output: the answer's output items, in order.
        previous_id: the turn this one continues (``previous_response_id``), or ``None``.
        interaction_id: the id of the Gemini Interaction that answered the turn, when
            Google keeps it (a later turn then continues it with
            ``previous_interaction_id``, and a background turn is polled there);
            ``None`` for a turn answered by ``generateContent`` or not kept at Google.
    """

    id: str
    owner: str
    created_at: float
    document: bytes
    input: tuple[StoredItem, ...] = ()
    output: tuple[StoredItem, ...] = ()
    previous_id: str | None = None
    interaction_id: str | None = None

    @property
    def size(self) -> int:
        """Bytes this turn counts for against a store's ``max_record_bytes``."""
        items = sum(item.size for item in self.input) + sum(item.size for item in self.output)
        return len(self.document) + len(self.interaction_id or "") + items


@dataclass(frozen=True, slots=True)
class ItemsPage:
    """A page of a turn's input items, as ``GET /v1/responses/{id}/input_items`` lists them.

    Attributes:
        items: at most ``limit`` items, in the order asked for.
        has_more: whether more items follow the last one in that order.
    """

    items: tuple[StoredItem, ...] = field(default=())
    has_more: bool = False

    @property
    def first_id(self) -> str | None:
        """The first item's id (``first_id`` in OpenAI's list), ``None`` on an empty page."""
        return self.items[0].id if self.items else None

    @property
    def last_id(self) -> str | None:
        """The last item's id: the ``after`` cursor for the next page."""
        return self.items[-1].id if self.items else None
