"""``POST /v1/responses`` composed: what a request continues, read from the store; the
signatures it lacks, recalled; the request translated (for generateContent or
Interactions); its answer's events, and what keeps the answer (the store, signature
memory) before its terminal event goes out. A background request starts a run
(:mod:`._runs`).

Stored responses are kept under the owner id of the client's bearer token
(:meth:`rxgem.store.ResponseStore.owner`); ids are checked before any store sees them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import msgspec

from ..converter import ResponsesConverter
from ..core.responses import Response
from ..replies import Refusal, bad_request, store_unavailable
from ..request import (
    InteractionRequest,
    PlaceholderWarning,
    ResponsesRequest,
    item_references,
    responses_to_interaction,
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
from ._agents import agent_body, agent_of, background_refusal
from ._responses_signatures import response_signatures, responses_recall
from ._results import Document, ResponsesRun
from ._runs import BackgroundRuns, Scrub
from ._signature_memory import MemorySession
from ._store_limits import Conversation, conversation_too_long
from ._trace import Keys, Trace

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._gateway import Gateway

__all__ = ["Responder"]

Translated = tuple[ResponsesRequest | InteractionRequest, list[dict[str, Any]], Conversation]


class Responder:
    """The Responses side of a :class:`~rxgem.gateway.Gateway`: its store, limits and
    background runs.

    Args:
        gateway: the gateway (its options, pools, memory, store and store limits).
    """

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.options = gateway.options
        self.limits = gateway.options.limits()
        interactions = gateway.interactions
        self.runs = (
            None
            if interactions is None
            else BackgroundRuns(interactions, gateway.memory, gateway.logger)
        )

    @property
    def store(self) -> ResponseStore | None:
        return self.gateway.store

    async def owner(self, token: str) -> str | None:
        """The owner id of ``token`` in the store (``None`` without a store; raises
        :class:`Refusal` when the store fails)."""
        store = self.store
        if store is None:
            return None
        try:
            return await store.owner(token)
        except StoreError as exc:
            raise Refusal(store_unavailable(exc)) from exc

    async def create(
        self,
        body: dict[str, Any],
        keys: Keys,
        token: str,
        trace: Trace,
        *,
        counted: Callable[[], object] | None = None,
        client: Any = None,
        scrub: Scrub | None = None,
    ) -> ResponsesRun | Document:
        """A ``POST /v1/responses`` body, answered (raises :class:`Refusal`,
        ``RxGemError``); ``counted``: called once the request is taken; ``client``: the
        httpx client to ask Gemini with (default: the next pool); ``scrub``: what a failed
        response's message from Gemini goes through (its secrets out)."""
        gateway = self.gateway
        memory = gateway.memory
        owner: str | None = None
        session = await memory.session(token, body, trace)
        needs_store = body.get("store") is not False or "previous_response_id" in body
        if needs_store or item_references(body):
            owner = await self.owner(token)  # not asked when the request needs nothing
        refused = background_refusal(body, self.options, owner is not None)
        if refused is not None:
            raise Refusal(refused)
        if counted is not None:
            counted()
        try:
            request, input_items, conversation = await self._translate(
                body, owner, trace.body_bytes, session
            )
        except StoreError as exc:
            raise Refusal(store_unavailable(exc)) from exc
        for warning in request.warnings:
            gateway.logger.debug("request %s: %s", trace.request_id, warning)
        memory.placeholders(trace, sum(isinstance(w, PlaceholderWarning) for w in request.warnings))
        store = self.store
        keep = owner is not None and request.store
        if request.store and not keep:  # the response says it was not stored
            request = replace(request, store=False)
        inputs = stored_inputs(input_items) if keep else ()
        if keep and self.limits is not None:  # what the store cannot keep: refused now
            echo = len(msgspec.json.encode(request.echo))
            refused = self.limits.refusal(inputs, echo, conversation)
            if refused is not None:
                raise Refusal(refused)
        if isinstance(request, InteractionRequest) and request.background:
            assert self.runs is not None
            assert owner is not None
            assert store is not None
            return await self.runs.start(store, request, keys, owner, inputs, trace, scrub)
        converters: list[ResponsesConverter] = []
        response_id = new_response_id() if keep else None  # a stored one's is unique to it
        events = gateway.response_events(
            request, keys, converters.append, response_id, client, scrub
        )
        kept_at_google = (
            isinstance(request, InteractionRequest) and request.body.get("store") is True
        )
        logger = gateway.logger
        limits = self.limits

        async def on_response(response: Response) -> None:
            signatures = converters[0].signatures if converters else []
            placed = converters[0].placed if converters else {}
            if session is not None:
                await session.remember(
                    response_signatures(response, session.model, signatures, placed)
                )
            if not keep or owner is None or store is None:
                return
            interaction_id = converters[0].interaction_id if converters and kept_at_google else None
            turn = stored_turn(response, owner, inputs, signatures, interaction_id, placed=placed)
            try:
                reason = None if limits is None else limits.overflow(turn, conversation)
                if reason is None:
                    await store.save(turn)
            except StoreError as exc:
                reason = str(exc)
            if reason is not None:
                # The answer is whole; the client is told it was not kept (what goes out
                # next: the JSON, or the stream's terminal event) rather than given an
                # id that finds nothing.
                response.store = False
                logger.warning(
                    "request %s: response %s not stored: %s", trace.request_id, response.id, reason
                )

        return ResponsesRun(events, on_response, stream=request.stream)

    async def _lookup(
        self, body: dict[str, Any], owner: str | None, session: MemorySession | None
    ) -> tuple[list[StoredTurn] | None, dict[str, dict[str, Any]], dict[str, Any], Conversation]:
        """What a request refers to in the store: the conversation it continues (its
        turns), the items it names, and the body with the signatures put back: the
        stored items' it replays by id, then what signature memory kept for the rest
        (raises :class:`Refusal`, ``StoreError``)."""
        store = self.store
        chain = None
        conversation = Conversation()
        previous = body.get("previous_response_id")
        if previous is not None and store is not None and owner is not None:
            if not valid_turn_id(previous):
                raise Refusal(bad_request("not a response id", "previous_response_id"))
            try:
                chain = await store.chain(previous, owner)
            except ChainTooLongError as exc:
                raise Refusal(conversation_too_long(previous, exc.limit)) from exc
            if chain is None:
                raise Refusal(
                    bad_request(
                        f"previous response with id {previous!r} not found",
                        "previous_response_id",
                        "previous_response_not_found",
                    )
                )
            conversation = Conversation.of(previous, chain)
        found: dict[str, dict[str, Any]] = {}
        if store is not None and owner is not None:
            references = [i for i in item_references(body) if valid_item_id(i)]
            wanted = list(dict.fromkeys([*references, *replayed_ids(body.get("input"))]))
            items = await store.items(wanted, owner) if wanted else {}
            found = {item_id: resolved_item(item) for item_id, item in items.items()}
            if items and isinstance(body.get("input"), list):
                body = {**body, "input": with_stored_signatures(body["input"], items)}
        return chain, found, await _recalled(session, body), conversation

    async def _translate(
        self, body: dict[str, Any], owner: str | None, size: int, session: MemorySession | None
    ) -> Translated:
        """The translated request, the input items to keep and the conversation it
        continues, reading what it refers to from the store (raises :class:`Refusal`,
        ``InvalidRequestError``, ``StoreError``); ``size``: the body's bytes (a large
        body is translated in a worker thread). On Interactions, Google keeps the turn
        when the gateway lets it and the client stores it here; a conversation whose
        last turn Google keeps continues there (``previous_interaction_id``, only the new
        input), any other is replayed from the store."""
        chain, found, body, conversation = await self._lookup(body, owner, session)
        o = self.options
        translate: Callable[[], tuple[ResponsesRequest | InteractionRequest, list[Any]]]
        if o.chosen.background:  # Google keeps turns: the store and the conversation's id
            google = o.interactions_store and owner is not None and body.get("store") is not False
            previous = chain[-1].interaction_id if chain and o.interactions_store else None

            def translate() -> tuple[ResponsesRequest | InteractionRequest, list[Any]]:
                translated = responses_to_interaction(
                    body,
                    store=google,
                    previous_interaction_id=previous,
                    history=None if chain is None else history_items(chain),
                    resolve=found.get,
                )
                agent = agent_of(body.get("model"))
                if agent is not None:
                    translated = replace(translated, body=agent_body(translated.body, agent))
                return translated, normalized_input(body.get("input"), found)

        else:
            chosen = o.chosen

            def translate() -> tuple[ResponsesRequest | InteractionRequest, list[Any]]:
                translated = chosen.responses_request(
                    body,
                    history=None if chain is None else history_items(chain),
                    resolve=found.get,
                )
                return translated, normalized_input(body.get("input"), found)

        translated, inputs = await self.gateway.offload.run_alone(size, translate)
        return translated, inputs, conversation


async def _recalled(session: MemorySession | None, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` with the signatures its ``input`` lacks, as signature memory kept them."""
    items = body.get("input")
    if session is None or not isinstance(items, list):
        return body
    recall = responses_recall(items, session.model)
    if not recall.keys:
        return body
    items, restored = recall.restore(items, await session.recall(recall.keys))
    session.restored(restored)
    return {**body, "input": items}
