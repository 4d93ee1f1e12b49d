"""The store's limits as ``POST /v1/responses`` meets them, sans-IO: what refuses a
response to be stored before Gemini is asked, and the errors that say which limit, the
flag that sets it and the way out.

A response asked to be stored (``store``, the default) that the store could not keep is
refused with a 400 ``store_limit_exceeded`` rather than answered with ``store: true``
and no record: input items that leave no room under ``--store-max-items`` or
``--store-max-record-bytes`` for the answer, or a ``previous_response_id`` conversation
that already has ``--store-max-chain`` responses (a stored answer could never be
continued). ``store: false`` is the way out of each: nothing is kept, nothing is
limited. A conversation longer than the limit (kept under a larger one) cannot be read
back at all: 400 ``conversation_too_long``, whatever ``store`` says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..store import StoredItem
from ._errors import ErrorReply

__all__ = ["StoreLimits", "conversation_too_long"]

_NO_RETRY: Final = (("x-should-retry", "false"),)
_UNSTORED: Final = 'send "store": false to have it answered without being stored'
_NEW_CONVERSATION: Final = (
    "start a new conversation: send the items it needs as input, without previous_response_id"
)


def _refused(message: str, param: str, code: str) -> ErrorReply:
    return ErrorReply(
        400, "invalid_request_error", message, param=param, code=code, headers=_NO_RETRY
    )


@dataclass(frozen=True, slots=True)
class StoreLimits:
    """The limits of the server's store (its ``store_max_*`` settings)."""

    max_items: int
    max_record_bytes: int
    max_chain: int

    def refusal(
        self, inputs: Sequence[StoredItem], previous: str | None, chain_length: int
    ) -> ErrorReply | None:
        """The 400 for a response to store with ``inputs`` (its input items as the
        store keeps them), continuing ``previous`` after a conversation of
        ``chain_length`` responses; ``None`` when it fits. The answer still to come
        takes at least one item and some bytes, so input items that reach a limit
        leave it no room."""
        count = len(inputs)
        if count >= self.max_items:
            return _refused(
                f"this response cannot be stored: its input has {count} items, and the server"
                f" stores at most {self.max_items} items per response, its input and its"
                f" answer together (rxgem serve --store-max-items); {_UNSTORED}",
                "input",
                "store_limit_exceeded",
            )
        size = sum(item.size for item in inputs)
        if size >= self.max_record_bytes:
            return _refused(
                f"this response cannot be stored: its input items take {size} bytes, and the"
                f" server stores at most {self.max_record_bytes} bytes per response, its input"
                f" and its answer together (rxgem serve --store-max-record-bytes);"
                f" {_UNSTORED}",
                "input",
                "store_limit_exceeded",
            )
        if previous is not None and chain_length >= self.max_chain:
            return _refused(
                f"this response cannot be stored: the conversation of response {previous!r}"
                f" has {chain_length} responses, the most the server keeps in one"
                f" conversation (rxgem serve --store-max-chain {self.max_chain}), so a stored"
                f" answer could not be continued; {_UNSTORED}, or {_NEW_CONVERSATION}",
                "previous_response_id",
                "store_limit_exceeded",
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
