"""The Responses handlers (:class:`ResponsesRoutes`), on the app's request handling."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Literal, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response as HTTPResponse

from ...converter import ResponsesConverter
from ...core import Response, RxGemError
from ...replies import Refusal, bad_request, not_found, store_unavailable
from ...request import (
    InteractionRequest,
    PlaceholderWarning,
    ResponsesRequest,
    item_references,
    responses_to_gemini_request,
    responses_to_interaction,
)
from ...store import (
    MAX_PAGE,
    ChainTooLongError,
    InvalidPageError,
    ResponseStore,
    StoredTurn,
    StoreError,
    history_items,
    is_background,
    is_running,
    items_page,
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
from ...transport import api_of
from .._agents import agent_body, agent_of, background_refusal
from .._handling import Handling, json_response
from .._responses_signatures import response_signatures, responses_recall
from .._signature_memory import MemorySession
from ..guard import Conversation, Credentials, StoreLimits, conversation_too_long, owner_token
from ..observe import access_record
from ._answer import ResponsesAnswer
from ._background import starting_after
from ._runs import BackgroundRuns

__all__ = ["ResponsesRoutes"]

T = TypeVar("T")


def _store_failed(error: StoreError) -> Refusal:
    return Refusal(store_unavailable(error))


def _no_response(response_id: str | None) -> Refusal:
    what = f"no response with id {response_id!r}" if response_id else "no such response"
    return Refusal(not_found(what))


class ResponsesRoutes:
    """The Responses handlers, on the app's request handling and store.

    Args:
        handling: the app's ``Handling``.
        store: the response store, opened by the app's lifespan; ``None``: none kept.
    """

    def __init__(self, handling: Handling, store: ResponseStore | None) -> None:
        self.handling = handling
        self.settings = handling.settings
        self.logger: logging.Logger = handling.logger
        self.store = store
        self.interactions = handling.interactions
        self.runs = (
            None if self.interactions is None else BackgroundRuns(handling, self.interactions)
        )
        self.limits = StoreLimits(
            max_items=self.settings.store_max_items,
            max_record_bytes=self.settings.store_max_record_bytes,
            max_chain=self.settings.store_max_chain,
            max_conversation_bytes=self.settings.store_max_conversation_bytes,
        )

    async def _owner(self, request: Request) -> str | None:
        """The client's owner id in the store (``None`` without a store)."""
        if self.store is None:
            return None
        token = owner_token(request.headers.get("authorization"))
        try:
            return await self.store.owner(token)
        except StoreError as exc:
            raise _store_failed(exc) from exc

    # -- POST /v1/responses --------------------------------------------------------------

    async def create(self, request: Request) -> ResponsesAnswer | HTTPResponse:
        handling = self.handling
        record = access_record(request.scope)
        credentials, body = await handling.read(request, record)
        owner: str | None = None
        session = await handling.memory.session(request.headers.get("authorization"), body, record)
        needs_store = body.get("store") is not False or "previous_response_id" in body
        if needs_store or item_references(body):
            owner = await self._owner(request)  # not asked when the request needs nothing
        refused = background_refusal(body, self.settings, owner is not None)
        if refused is not None:
            raise Refusal(refused)
        handling.count(record, body)
        try:
            translate = self._translate if self.interactions is None else self._to_interaction
            responses_request, input_items, conversation = await translate(
                body, owner, record.body_bytes, session
            )
        except StoreError as exc:
            raise _store_failed(exc) from exc
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc
        for warning in responses_request.warnings:
            self.logger.debug("request %s: %s", record.request_id, warning)
        handling.memory.placeholders(
            record, sum(isinstance(w, PlaceholderWarning) for w in responses_request.warnings)
        )
        keep = owner is not None and responses_request.store
        if responses_request.store and not keep:  # the response says it was not stored
            responses_request = replace(responses_request, store=False)
        inputs = stored_inputs(input_items) if keep else ()
        if keep:  # what the store could not keep is refused before Gemini is asked
            echo = len(msgspec.json.encode(responses_request.echo))
            refused = self.limits.refusal(inputs, echo, conversation)
            if refused is not None:
                raise Refusal(refused)
        if isinstance(responses_request, InteractionRequest) and responses_request.background:
            assert self.runs is not None
            assert owner is not None
            assert self.store is not None
            return await self.runs.start(
                self.store, responses_request, credentials, owner, inputs, record
            )
        converters: list[ResponsesConverter] = []
        response_id = new_response_id() if keep else None  # a stored one's is unique to it
        try:
            events = handling.upstream.responses(
                responses_request,
                credentials,
                converters.append,
                response_id,
                handling.scrub(record),
            )
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc
        kept_at_google = (
            isinstance(responses_request, InteractionRequest)
            and responses_request.body.get("store") is True
        )

        async def on_response(response: Response) -> None:
            signatures = converters[0].signatures if converters else []
            placed = converters[0].placed if converters else {}
            if session is not None:
                await session.remember(
                    response_signatures(response, session.model, signatures, placed)
                )
            if not keep or owner is None or self.store is None:
                return
            interaction_id = converters[0].interaction_id if converters and kept_at_google else None
            turn = stored_turn(response, owner, inputs, signatures, interaction_id, placed=placed)
            try:
                reason = self.limits.overflow(turn, conversation)
                if reason is None:
                    await self.store.save(turn)
            except StoreError as exc:
                reason = str(exc)
            if reason is not None:
                # The answer is whole; the client is told it was not kept (what goes out
                # next: the JSON, or the stream's terminal event) rather than given an
                # id that finds nothing.
                response.store = False
                self.logger.warning(
                    "request %s: response %s not stored: %s", record.request_id, response.id, reason
                )

        return ResponsesAnswer(
            events,
            on_response=on_response,
            stream=responses_request.stream,
            answering=handling.answering(record),
        )

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
    ) -> tuple[ResponsesRequest, list[dict[str, Any]], Conversation]:
        """The translated request, the input items to keep and the conversation it
        continues, reading what it refers to from the store (raises :class:`Refusal`,
        ``InvalidRequestError``, ``StoreError``); ``size``: the body's bytes (a large
        body is translated in a worker thread)."""
        chain, found, body, conversation = await self._lookup(body, owner, session)
        api = self.settings.pipeline.get("api") or api_of(self.settings.upstream)

        def translate() -> tuple[ResponsesRequest, list[dict[str, Any]]]:
            history = None if chain is None else history_items(chain)
            translated = responses_to_gemini_request(
                body, api=api, history=history, resolve=found.get
            )
            return translated, normalized_input(body.get("input"), found)

        translated, inputs = await self.handling.offload.run_alone(size, translate)
        return translated, inputs, conversation

    async def _to_interaction(
        self, body: dict[str, Any], owner: str | None, size: int, session: MemorySession | None
    ) -> tuple[InteractionRequest, list[dict[str, Any]], Conversation]:
        """As :meth:`_translate`, for the Interactions upstream: Google keeps the turn when
        the server lets it and the client stores it here; a conversation whose last turn
        Google keeps continues there (``previous_interaction_id``, only the new input),
        any other is replayed from the store."""
        chain, found, body, conversation = await self._lookup(body, owner, session)
        google = self.settings.interactions_store and owner is not None
        google = google and body.get("store") is not False
        previous = chain[-1].interaction_id if chain and self.settings.interactions_store else None

        def translate() -> tuple[InteractionRequest, list[dict[str, Any]]]:
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

        translated, inputs = await self.handling.offload.run_alone(size, translate)
        return translated, inputs, conversation

    # -- the stored responses ------------------------------------------------------------

    async def _stored(self, request: Request) -> tuple[ResponseStore, str, str, Credentials]:
        """The store, the owner, the checked id and the client's credentials of a request
        on a stored response."""
        record = access_record(request.scope)
        credentials = await self.handling.authorize(request, record)
        owner = await self._owner(request)
        if owner is None:
            raise Refusal(not_found("this server keeps no responses"))
        response_id = str(request.path_params["response_id"])
        if not valid_turn_id(response_id):
            raise _no_response(None)
        assert self.store is not None  # an owner comes from a store
        return self.store, owner, response_id, credentials

    async def _on_stored(
        self, request: Request, ask: Callable[[ResponseStore, str, str], Awaitable[T | None]]
    ) -> T:
        """What ``ask(store, response_id, owner)`` answers (``None`` or ``False``: there is
        no such response)."""
        store, owner, response_id, _ = await self._stored(request)
        return await _found(response_id, ask(store, response_id, owner))

    async def retrieve(self, request: Request) -> HTTPResponse | ResponsesAnswer:
        store, owner, response_id, credentials = await self._stored(request)
        turn = await _found(response_id, store.get(response_id, owner))
        query = request.query_params
        runs = self.runs if turn.interaction_id is not None else None
        if "stream" in query or "starting_after" in query:
            if query.get("stream", "true") not in ("true", "false"):
                raise Refusal(bad_request("stream must be true or false", "stream"))
            if query.get("stream") == "true" or "starting_after" in query:
                if runs is None or not is_background(turn.document):
                    raise Refusal(
                        bad_request(
                            "only a background response's events can be streamed again",
                            "stream",
                            "not_background",
                        )
                    )
                try:
                    after = starting_after(query.get("starting_after"))
                except ValueError:
                    raise Refusal(
                        bad_request("starting_after must be a sequence number", "starting_after")
                    ) from None
                return runs.stream(store, turn, credentials, after, access_record(request.scope))
        if runs is not None and is_running(turn.document):
            return await runs.poll(store, turn, credentials, access_record(request.scope))
        return json_response(turn.document)

    async def cancel(self, request: Request) -> HTTPResponse:
        store, owner, response_id, credentials = await self._stored(request)
        turn = await _found(response_id, store.get(response_id, owner))
        if self.runs is None or turn.interaction_id is None or not is_background(turn.document):
            raise Refusal(
                bad_request(
                    "only a response created with background: true can be cancelled",
                    code="not_background",
                )
            )
        return await self.runs.cancel(store, turn, credentials, access_record(request.scope))

    async def delete(self, request: Request) -> HTTPResponse:
        response_id = str(request.path_params["response_id"])
        await self._on_stored(request, lambda store, turn_id, owner: store.delete(turn_id, owner))
        body = {"id": response_id, "object": "response", "deleted": True}
        return json_response(msgspec.json.encode(body))

    async def input_items(self, request: Request) -> HTTPResponse:
        store, owner, response_id, _ = await self._stored(request)
        query = request.query_params
        limit_text = query.get("limit", "20")
        bad_limit = Refusal(bad_request(f"limit must be from 1 to {MAX_PAGE}", "limit"))
        if not (limit_text.isascii() and limit_text.isdigit() and len(limit_text) <= 3):
            raise bad_limit
        limit = int(limit_text)
        if not 1 <= limit <= MAX_PAGE:
            raise bad_limit
        order = query.get("order", "desc")
        if order not in ("asc", "desc"):
            raise Refusal(bad_request("order must be asc or desc", "order"))
        after = query.get("after")
        if after is not None and not valid_item_id(after):
            raise Refusal(bad_request("not an item id", "after"))
        direction: Literal["asc", "desc"] = "asc" if order == "asc" else "desc"
        call = store.input_items(response_id, owner, after=after, limit=limit, order=direction)
        try:
            page = await _found(response_id, call)
        except InvalidPageError as exc:
            raise Refusal(bad_request(str(exc), "after" if after else "limit")) from exc
        return json_response(items_page(page))


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


async def _found(response_id: str, call: Awaitable[T | None]) -> T:
    """What the store answers on a response (raises :class:`Refusal`: the store failed, or
    has no such response, ``None`` or ``False``); a bad page is the caller's to answer."""
    try:
        found = await call
    except InvalidPageError:
        raise
    except StoreError as exc:
        raise _store_failed(exc) from exc
    if found is None or found is False:
        raise _no_response(response_id)
    return found
