"""A ``POST /v1/responses`` of the in-process transport: what it continues, read from the
store the transport was given (none by default), the request translated, and the answer
kept in the store before its terminal event goes out. As ``rxgem serve`` does it, with
the store's own turns (:mod:`rxgem.store`); Google keeps nothing (on the Interactions
upstream the conversation is replayed from the store).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..converter import ResponsesConverter
from ..core import Response
from ..replies import Refusal, bad_request, store_unavailable
from ..request import (
    InteractionRequest,
    ResponsesRequest,
    item_references,
)
from ..store import (
    ChainTooLongError,
    ResponseStore,
    StoredTurn,
    StoreError,
    history_items,
    new_response_id,
    normalized_input,
    replayed_ids,
    resolved_item,
    stored_inputs,
    stored_turn,
    valid_item_id,
    valid_turn_id,
    with_stored_signatures,
)
from ..upstreams import Upstream
from ._answers import OnResponse

__all__ = ["Prepared", "prepare_responses"]

_LOGGER = logging.getLogger("rxgem.inprocess")

NO_STORE = (
    "this OpenAITransport keeps no responses: give it a store"
    " (OpenAITransport(store=rxgem.store.SQLiteStore(path))) to continue one"
)


@dataclass
class Prepared:
    """A translated Responses request, its id (a stored one's is the transport's own) and
    what keeps its answer."""

    request: ResponsesRequest | InteractionRequest
    response_id: str | None
    on_start: list[ResponsesConverter]
    on_response: OnResponse | None


async def _lookup(
    store: ResponseStore, owner: str, body: dict[str, Any]
) -> tuple[list[StoredTurn] | None, dict[str, dict[str, Any]], dict[str, Any]]:
    """The turns ``body`` continues, the items it names, and the body with the stored
    signatures put back (raises :class:`Refusal`, ``StoreError``)."""
    chain = None
    previous = body.get("previous_response_id")
    if previous is not None:
        if not valid_turn_id(previous):
            raise Refusal(bad_request("not a response id", "previous_response_id"))
        try:
            chain = await store.chain(previous, owner)
        except ChainTooLongError as exc:
            raise Refusal(bad_request(str(exc), "previous_response_id")) from exc
        if chain is None:
            raise Refusal(
                bad_request(
                    f"previous response with id {previous!r} not found",
                    "previous_response_id",
                    "previous_response_not_found",
                )
            )
    references = [i for i in item_references(body) if valid_item_id(i)]
    wanted = list(dict.fromkeys([*references, *replayed_ids(body.get("input"))]))
    items = await store.items(wanted, owner) if wanted else {}
    found = {item_id: resolved_item(item) for item_id, item in items.items()}
    if items and isinstance(body.get("input"), list):
        body = {**body, "input": with_stored_signatures(body["input"], items)}
    return chain, found, body


async def prepare_responses(
    body: dict[str, Any],
    *,
    store: ResponseStore | None,
    token: str,
    upstream: Upstream,
) -> Prepared:
    """``body`` translated, with what it continues read from ``store`` under ``token``'s
    owner (raises :class:`Refusal`, ``InvalidRequestError``)."""
    if body.get("background") is True:
        raise Refusal(
            bad_request(
                "the in-process transport runs no background responses: use rxgem serve"
                " --upstream-api interactions --interactions-store",
                "background",
                "background_unsupported",
            )
        )
    if store is None and "previous_response_id" in body:
        raise Refusal(bad_request(NO_STORE, "previous_response_id", "no_store"))
    if store is None and item_references(body):
        raise Refusal(bad_request(NO_STORE, "input", "no_store"))
    owner = None
    chain: list[StoredTurn] | None = None
    found: dict[str, dict[str, Any]] = {}
    needs_store = body.get("store") is not False or "previous_response_id" in body
    if store is not None and (needs_store or item_references(body)):
        try:
            owner = await store.owner(token)
            chain, found, body = await _lookup(store, owner, body)
        except StoreError as exc:
            raise Refusal(store_unavailable(exc)) from exc
    history = None if chain is None else history_items(chain)
    request = upstream.responses_request(body, history=history, resolve=found.get)
    keep = owner is not None and request.store
    if request.store and not keep:  # the response says it was not stored
        request = replace(request, store=False)
    if not keep or store is None or owner is None:
        return Prepared(request, None, [], None)
    inputs = stored_inputs(normalized_input(body.get("input"), found))
    converters: list[ResponsesConverter] = []
    kept_by, kept_store = owner, store

    async def on_response(response: Response) -> None:
        signatures = converters[0].signatures if converters else []
        placed = converters[0].placed if converters else {}
        turn = stored_turn(response, kept_by, inputs, signatures, placed=placed)
        try:
            await kept_store.save(turn)
        except StoreError as exc:
            # the answer is whole: the client is told it was not kept
            response.store = False
            _LOGGER.warning("response %s not stored: %s", response.id, exc)

    return Prepared(request, new_response_id(), converters, on_response)


def bearer(headers: Mapping[str, str]) -> str | None:
    """The bearer token of a request's ``Authorization`` header, if any."""
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
