"""The store's limits as ``POST /v1/responses`` meets them, sans-IO: what refuses a
response to be stored before Gemini is asked, and the errors that say which limit, the
flag that sets it and the way out.

A response asked to be stored (``store``, the default) that the store could not keep is
refused with a 400 ``store_limit_exceeded`` rather than answered with ``store: true``
and no record: input items that leave no room under ``--store-max-items`` or
``--store-max-record-bytes`` for the answer, or a ``previous_response_id`` conversation
that already has ``--store-max-chain`` responses or, with the input,
``--store-max-conversation-bytes`` (a stored answer could never be continued: each
request reads its whole conversation, so these bound what one request makes the server
read). ``store: false`` is the way out of each: nothing is kept, nothing is limited. A
conversation longer than the limit (kept under a larger one) cannot be read back at all:
400 ``conversation_too_long``, whatever ``store`` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..replies import ErrorReply, bad_request
from ..store import StoredItem, StoredTurn

__all__ = ["Conversation", "StoreLimits", "conversation_too_long"]

_UNSTORED: Final = 'send "store": false to have it answered without being stored'
_NEW_CONVERSATION: Final = (
    "start a new conversation: send the items it needs as input, without previous_response_id"
)


def _refused(message: str, param: str, code: str) -> ErrorReply:
    return bad_request(message, param, code)


@dataclass(frozen=True, slots=True)
class Conversation:
    """What a request continues: the ``previous_response_id``, and the responses of its
    conversation as the store read them (how many, and their bytes); none: ``None``, 0."""

    previous: str | None = None
    length: int = 0
    size: int = 0

    @classmethod
    def of(cls, previous: str, chain: Sequence[StoredTurn]) -> Conversation:
        return cls(previous, len(chain), sum(turn.size for turn in chain))


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """The limits of the server's store (its ``store_max_*`` settings)."""

    max_items: int
    max_record_bytes: int
    max_chain: int
    max_conversation_bytes: int

    def refusal(
        self, inputs: Sequence[StoredItem], echo: int, conversation: Conversation
    ) -> ErrorReply | None:
        """The 400 for a response to store with ``inputs`` (its input items as the
        store keeps them) and ``echo`` bytes of the request's fields that the response
        object repeats (``instructions``, ``tools``, ``metadata``, ...), continuing
        ``conversation``; ``None`` when it fits. The answer still to come takes at
        least one item and some bytes, so what reaches a limit leaves it no room."""
        previous = conversation.previous
        count = len(inputs)
        if count >= self.max_items:
            return _refused(
                f"this response cannot be stored: its input has {count} items, and the server"
                f" stores at most {self.max_items} items per response, its input and its"
                f" answer together (rxgem serve --store-max-items); {_UNSTORED}",
                "input",
                "store_limit_exceeded",
            )
        size = sum(item.size for item in inputs) + echo
        if size >= self.max_record_bytes:
            return _refused(
                f"this response cannot be stored: its input items and the fields the response"
                f" repeats (instructions, tools, metadata) take {size} bytes, and the"
                f" server stores at most {self.max_record_bytes} bytes per response, its input"
                f" and its answer together (rxgem serve --store-max-record-bytes);"
                f" {_UNSTORED}",
                "input",
                "store_limit_exceeded",
            )
        if previous is not None and conversation.length >= self.max_chain:
            return _refused(
                f"this response cannot be stored: the conversation of response {previous!r}"
                f" has {conversation.length} responses, and the server keeps at most"
                f" {self.max_chain} in one conversation (rxgem serve --store-max-chain), so a"
                f" stored answer could not be continued; {_UNSTORED}, or {_NEW_CONVERSATION}",
                "previous_response_id",
                "store_limit_exceeded",
            )
        total = conversation.size + size
        if total >= self.max_conversation_bytes:
            what = "" if previous is None else f"the conversation of {previous!r} and "
            return _refused(
                f"this response cannot be stored: {what}this request take {total} bytes,"
                f" and the server keeps at most {self.max_conversation_bytes} bytes in one"
                f" conversation (rxgem serve --store-max-conversation-bytes), so a stored"
                f" answer could not be continued; {_UNSTORED}"
                + ("" if previous is None else f", or {_NEW_CONVERSATION}"),
                "input" if previous is None else "previous_response_id",
                "store_limit_exceeded",
            )
        return None

    def overflow(self, turn: StoredTurn, conversation: Conversation) -> str | None:
        """Why ``turn``, answered, cannot be stored in ``conversation`` (the store checks
        its own limits on :meth:`~rxgem.store.ResponseStore.save`); ``None`` if it can."""
        total = conversation.size + turn.size
        if total > self.max_conversation_bytes:
            return (
                f"the conversation would take {total} bytes, over the limit of"
                f" {self.max_conversation_bytes} (--store-max-conversation-bytes)"
            )
        return None


def conversation_too_long(previous: str, limit: int) -> ErrorReply:
    """The 400 for a ``previous_response_id`` whose conversation has more than ``limit``
    responses (:class:`rxgem.store.ChainTooLongError`)."""
    return _refused(
        f"the conversation of response {previous!r} has more than {limit} responses, the"
        f" most the server reads back (rxgem serve --store-max-chain); {_NEW_CONVERSATION}",
        "previous_response_id",
        "conversation_too_long",
    )
