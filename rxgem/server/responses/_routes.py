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
from ...request import ResponsesRequest, item_references, responses_to_gemini_request
from ...store import (
    MAX_PAGE,
    ChainTooLongError,
    InvalidPageError,
    ResponseStore,
    StoreError,
    valid_item_id,
    valid_turn_id,
)
from ...transport import api_of
from .._access import access_record
from .._agents import background_refusal
from .._auth import bearer_token
from .._errors import Refusal, bad_request, not_found, store_unavailable
from .._handling import Handling, json_response
from .._store_limits import Conversation, StoreLimits, conversation_too_long
from ._answer import ResponsesAnswer
from ._records import (
    ANONYMOUS,
    history_items,
    is_background,
    items_page,
    new_response_id,
    normalized_input,
    replayed_ids,
    resolved_item,
    stored_inputs,
    stored_turn,
    with_stored_signatures,
)

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
        token = bearer_token(request.headers.get("authorization")) or ANONYMOUS
        try:
            return await self.store.owner(token)
        except StoreError as exc:
            raise _store_failed(exc) from exc

    # -- POST /v1/responses --------------------------------------------------------------

    async def create(self, request: Request) -> ResponsesAnswer:
        handling = self.handling
        record = access_record(request.scope)
        credentials, body = await handling.read(request, record)
        owner: str | None = None
        needs_store = body.get("store") is not False or "previous_response_id" in body
        if needs_store or item_references(body):
            owner = await self._owner(request)  # not asked when the request needs nothing
        refused = background_refusal(body, self.settings, owner is not None)
        if refused is not None:
            raise Refusal(refused)
        handling.count(record, body)
        try:
            responses_request, input_items, conversation = await self._translate(body, owner)
        except StoreError as exc:
            raise _store_failed(exc) from exc
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc
        for warning in responses_request.warnings:
            self.logger.debug("request %s: %s", record.request_id, warning)
        keep = owner is not None and responses_request.store
        if responses_request.store and not keep:  # the response says it was not stored
            responses_request = replace(responses_request, store=False)
        inputs = stored_inputs(input_items) if keep else ()
        if keep:  # what the store could not keep is refused before Gemini is asked
            echo = len(msgspec.json.encode(responses_request.echo))
            refused = self.limits.refusal(inputs, echo, conversation)
            if refused is not None:
                raise Refusal(refused)
        converters: list[ResponsesConverter] = []
        try:  # a stored response's id is the server's, unique to it
            events = handling.upstream.responses(
                responses_request,
                credentials,
                converters.append,
                response_id=new_response_id() if keep else None,
            )
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc

        async def on_response(response: Response) -> None:
            if not keep or owner is None or self.store is None:
                return
            signatures = converters[0].signatures if converters else []
            turn = stored_turn(response, owner, inputs, signatures)
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

    async def _translate(
        self, body: dict[str, Any], owner: str | None
    ) -> tuple[ResponsesRequest, list[dict[str, Any]], Conversation]:
        """The translated request, the input items to keep and the conversation it
        continues, reading what it refers to from the store (raises :class:`Refusal`,
        ``InvalidRequestError``, ``StoreError``)."""
        store = self.store
        history = None
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
            history = history_items(chain)
            conversation = Conversation.of(previous, chain)
        found: dict[str, dict[str, Any]] = {}
        if store is not None and owner is not None:
            references = [i for i in item_references(body) if valid_item_id(i)]
            wanted = list(dict.fromkeys([*references, *replayed_ids(body.get("input"))]))
            items = await store.items(wanted, owner) if wanted else {}
            found = {item_id: resolved_item(item) for item_id, item in items.items()}
            if items and isinstance(body.get("input"), list):
                body = {**body, "input": with_stored_signatures(body["input"], items)}
        api = self.settings.pipeline.get("api") or api_of(self.settings.upstream)
        translated = responses_to_gemini_request(body, api=api, history=history, resolve=found.get)
        return translated, normalized_input(body.get("input"), found), conversation

    # -- the stored responses ------------------------------------------------------------

    async def _stored(self, request: Request) -> tuple[ResponseStore, str, str]:
        """The store, the owner and the checked id of a request on a stored response."""
        record = access_record(request.scope)
        self.handling.authorize(request, record)
        owner = await self._owner(request)
        if owner is None:
            raise Refusal(not_found("this server keeps no responses"))
        response_id = str(request.path_params["response_id"])
        if not valid_turn_id(response_id):
            raise _no_response(None)
        assert self.store is not None  # an owner comes from a store
        return self.store, owner, response_id

    async def _on_stored(
        self, request: Request, ask: Callable[[ResponseStore, str, str], Awaitable[T | None]]
    ) -> T:
        """What ``ask(store, response_id, owner)`` answers (``None`` or ``False``: there is
        no such response)."""
        store, owner, response_id = await self._stored(request)
        return await _found(response_id, ask(store, response_id, owner))

    async def retrieve(self, request: Request) -> HTTPResponse:
        turn = await self._on_stored(
            request, lambda store, turn_id, owner: store.get(turn_id, owner)
        )
        return json_response(turn.document)

    async def cancel(self, request: Request) -> HTTPResponse:
        turn = await self._on_stored(
            request, lambda store, turn_id, owner: store.get(turn_id, owner)
        )
        if turn.interaction_id is None or not is_background(turn.document):
            raise Refusal(
                bad_request(
                    "only a response created with background: true can be cancelled",
                    code="not_background",
                )
            )
        raise Refusal(not_found(f"no background run of {turn.id!r} to cancel"))

    async def delete(self, request: Request) -> HTTPResponse:
        response_id = str(request.path_params["response_id"])
        await self._on_stored(request, lambda store, turn_id, owner: store.delete(turn_id, owner))
        body = {"id": response_id, "object": "response", "deleted": True}
        return json_response(msgspec.json.encode(body))

    async def input_items(self, request: Request) -> HTTPResponse:
        store, owner, response_id = await self._stored(request)
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
