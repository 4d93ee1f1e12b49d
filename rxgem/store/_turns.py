"""Stored Responses turns, sans-IO: a request and its answer → a :class:`StoredTurn`, and
stored turns back → the ``history`` and ``resolve`` of the request translation.

What is kept of a turn:

- its **input items**, as ``GET /v1/responses/{id}/input_items`` lists them: a string
  ``input`` becomes one user ``message``; a message's string ``content`` becomes one
  ``input_text`` part (``output_text`` for the assistant); an ``item_reference`` is kept
  as the item it named; messages, calls and call outputs get ``status: "completed"``
  when they had none; each item keeps its ``id`` when it has a well-formed one not
  used before in the turn, else gets one (``msg_…``, ``fc_…``, ``fco_…``, ``rs_…``);
- its **output items** and the **response document**, as the client saw them;
- Gemini's **thought signatures**, always (whether or not the client asked for
  ``reasoning.encrypted_content``): the carrier string
  (:func:`rxgem.core.encode_signatures`) as the opaque data of the output's reasoning
  item, else of its first output item; a signature that stands in its place (a thought
  step of Interactions) with the reasoning item that stands there.

Read back (:func:`history_items`, :func:`resolved_item`, and
:func:`with_stored_signatures` for output items a client sends again by their ids), the
carrier goes into the reasoning item's ``encrypted_content``; where the output had none,
a reasoning item carrying it is put before the item that kept it, so that the model's
turn is one Gemini content with its signatures.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

import msgspec

from ..core.responses import CarriedSignature, Response, encode_signatures
from ._ids import valid_item_id
from ._records import ItemsPage, StoredItem, StoredTurn

__all__ = [
    "ANONYMOUS",
    "history_items",
    "is_background",
    "is_running",
    "items_page",
    "new_item_id",
    "new_response_id",
    "normalized_input",
    "replayed_ids",
    "resolved_item",
    "stored_inputs",
    "stored_turn",
    "with_stored_signatures",
]

ANONYMOUS: Final = "rxgem:anonymous"
"""The owner token of a client that sends none (an ``open`` server, or an OpenAI client
without a key on the in-process transport): every such client shares the same stored
responses and remembered signatures."""

_PREFIXES: Final = {
    "message": "msg",
    "function_call": "fc",
    "function_call_output": "fco",
    "reasoning": "rs",
}
_WITH_STATUS: Final = frozenset({"message", "function_call", "function_call_output"})
_ENCODER: Final = msgspec.json.Encoder()


def is_background(document: bytes) -> bool:
    """Whether a stored response document is a background response's."""
    decoded = msgspec.json.decode(document)
    return isinstance(decoded, dict) and decoded.get("background") is True


def is_running(document: bytes) -> bool:
    """Whether a stored background response had not ended when it was last stored."""
    decoded = msgspec.json.decode(document)
    return isinstance(decoded, dict) and decoded.get("status") in ("queued", "in_progress")


def new_response_id() -> str:
    """A fresh id for a response the server stores: ``resp_`` + 48 hex digits (Gemini's
    ``responseId`` is not promised unique, and a stored id must be)."""
    return f"resp_{secrets.token_hex(24)}"


def new_item_id(kind: str | None) -> str:
    """A fresh item id for an item of type ``kind`` (``msg_`` + 32 hex digits, ...)."""
    return f"{_PREFIXES.get(kind or '', 'item')}_{secrets.token_hex(16)}"


def _message(item: Mapping[str, Any]) -> dict[str, Any]:
    message = {"type": "message", **item}
    content = message.get("content")
    if isinstance(content, str):
        kind = "output_text" if message.get("role") == "assistant" else "input_text"
        part: dict[str, Any] = {"type": kind, "text": content}
        if kind == "output_text":
            part["annotations"] = []
        message["content"] = [part]
    return message


def normalized_input(
    value: Any, resolved: Mapping[str, Mapping[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """A request's ``input`` (already accepted by the translation) as the items to keep.

    ``resolved``: the items its ``item_reference`` entries named, by id.
    """
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    if not isinstance(value, list):
        return []
    out: list[dict[str, Any]] = []
    used: set[str] = set()
    for raw in value:
        if not isinstance(raw, Mapping):
            continue
        item: dict[str, Any] = dict(raw)
        if item.get("type") == "item_reference":
            found = (resolved or {}).get(str(item.get("id")))
            if found is None:
                continue
            item = dict(found)
        if item.get("type") in (None, "message") and "role" in item:
            item = _message(item)
        kind = item.get("type")
        if kind in _WITH_STATUS and item.get("status") is None:
            item["status"] = "completed"
        item_id = item.get("id")
        if not isinstance(item_id, str) or not valid_item_id(item_id) or item_id in used:
            item["id"] = item_id = new_item_id(kind)
        used.add(item_id)
        out.append(item)
    return out


def stored_inputs(input_items: Iterable[Mapping[str, Any]]) -> tuple[StoredItem, ...]:
    """The input items (normalized) as the store keeps them: what the store's limits
    are checked on before Gemini is asked, and what :func:`stored_turn` keeps."""
    return tuple(StoredItem(str(item["id"]), _ENCODER.encode(item)) for item in input_items)


def stored_turn(
    response: Response,
    owner: str,
    inputs: Sequence[StoredItem],
    signatures: Sequence[CarriedSignature],
    interaction_id: str | None = None,
    *,
    placed: Mapping[str, Sequence[CarriedSignature]] | None = None,
) -> StoredTurn:
    """The turn to store for ``response``, answered to ``inputs`` (:func:`stored_inputs`);
    ``interaction_id``: the Interaction that answered it, when Google keeps it;
    ``placed``: the signatures that stand in their place, by the id of the reasoning item
    that carries them (``ResponsesConverter.placed``), kept with that item."""
    output = [item.to_dict() for item in response.output]
    keeper = next((i for i, item in enumerate(output) if item.get("type") == "reasoning"), 0)
    placed = placed or {}

    def carried(i: int, item: dict[str, Any]) -> bytes | None:
        own = list(placed.get(str(item.get("id")), ()))
        if i == keeper:
            own += signatures
        return encode_signatures(own).encode("ascii") if own else None

    stored_output = tuple(
        StoredItem(
            str(item.get("id")) if valid_item_id(item.get("id")) else new_item_id(item.get("type")),
            _ENCODER.encode(item),
            carried(i, item),
        )
        for i, item in enumerate(output)
    )
    return StoredTurn(
        id=response.id,
        owner=owner,
        created_at=float(response.created_at),
        document=response.to_json(),
        input=tuple(inputs),
        output=stored_output,
        previous_id=response.previous_response_id,
        interaction_id=interaction_id,
    )


def _restored(item: StoredItem) -> list[dict[str, Any]]:
    """A stored item as the translation reads it: with its signatures put back."""
    data: dict[str, Any] = msgspec.json.decode(item.data)
    if item.opaque is None:
        return [data]
    carrier = item.opaque.decode("ascii")
    if data.get("type") == "reasoning":
        return [{**data, "encrypted_content": carrier}]
    carrier_item = {
        "type": "reasoning",
        "id": f"rs_of_{item.id}",
        "summary": [],
        "encrypted_content": carrier,
    }
    return [carrier_item, data]


_SIGNED_KINDS: Final = frozenset({"reasoning", "function_call", "message"})


def replayed_ids(value: Any) -> list[str]:
    """The ids of the items of a request's ``input`` that may be output items this server
    stored (reasoning items, calls, messages with an id): replayed by a client that sends
    the whole conversation again, they get their signatures back from the store."""
    if not isinstance(value, list):
        return []
    return [
        item["id"]
        for item in value
        if isinstance(item, Mapping)
        and item.get("type", "message") in _SIGNED_KINDS
        and isinstance(item.get("id"), str)
        and valid_item_id(item["id"])
    ]


def with_stored_signatures(value: Any, stored: Mapping[str, StoredItem]) -> Any:
    """A request's ``input`` with the signatures the store kept for the output items it
    replays by id (as OpenAI's store does for a reasoning item sent without its
    ``encrypted_content``): a reasoning item gets its ``encrypted_content``; another item
    that kept them gets a reasoning item carrying them before it. Items of another type
    than the stored one, and reasoning items that carry content already, are left alone."""
    if not isinstance(value, list):
        return value
    out: list[Any] = []
    for item in value:
        item_id = item.get("id") if isinstance(item, Mapping) else None
        kept = stored.get(item_id) if isinstance(item_id, str) else None
        if kept is None or kept.opaque is None or not isinstance(item, Mapping):
            out.append(item)
            continue
        data = msgspec.json.decode(kept.data)
        kind = item.get("type", "message")
        if data.get("type") != kind:
            out.append(item)
        elif kind == "reasoning":
            carried = item if item.get("encrypted_content") else _restored(kept)[0]
            out.append({**item, "encrypted_content": carried["encrypted_content"]})
        else:
            out += [*_restored(kept)[:-1], item]
    return out


def history_items(chain: Iterable[StoredTurn]) -> list[dict[str, Any]]:
    """The ``history`` of a ``previous_response_id``: each turn's input items, then its
    output items with their signatures, oldest turn first."""
    history: list[dict[str, Any]] = []
    for turn in chain:
        for item in turn.input:
            history.append(msgspec.json.decode(item.data))
        for item in turn.output:
            history += _restored(item)
    return history


def resolved_item(item: StoredItem) -> dict[str, Any]:
    """The item an ``item_reference`` names (a reasoning item with its signatures)."""
    return _restored(item)[-1]


def items_page(page: ItemsPage) -> bytes:
    """``GET /v1/responses/{id}/input_items``'s body: OpenAI's list object."""
    ends = {
        "first_id": page.first_id,
        "last_id": page.last_id,
        "has_more": page.has_more,
    }
    data = b",".join(item.data for item in page.items)
    return b'{"object":"list","data":[' + data + b"]," + _ENCODER.encode(ends)[1:]
