"""The Responses API routes: ``POST /v1/responses`` and the stored responses.

``POST /v1/responses`` is answered as chat completions are (the same auth, body limits,
admission, access log, telemetry and OpenAI-shaped errors): the body is translated by
:func:`rxgem.request.responses_to_gemini_request`, sent to Gemini's
``streamGenerateContent`` on the shared upstream client, and its bytes turned into
Responses events (:meth:`~rxgem.server._upstream.Upstream.responses`), streamed or
assembled by :class:`~rxgem.server._responses_stream.ResponsesAnswer`.

Stored responses (unless the server runs with ``no_store``): a request with ``store``
(true unless sent false) is kept with its input items, output items and Gemini's thought
signatures (:mod:`rxgem.server._responses_records`), under the owner id of the client's
bearer token (:meth:`rxgem.store.ResponseStore.owner`; a client of an ``open`` server
that sends no token is :data:`~rxgem.server._responses_records.ANONYMOUS`).
``previous_response_id`` reads the conversation back, ``item_reference`` its items;
``GET /v1/responses/{id}``, ``DELETE /v1/responses/{id}`` and
``GET /v1/responses/{id}/input_items`` answer for the owner's responses only: another
client's id is a 404, exactly as an unknown one. Ids from the path and the query are
checked (:func:`rxgem.store.valid_turn_id`, :func:`~rxgem.store.valid_item_id`) before
any store sees them.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, Final, Literal, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response as HTTPResponse

from ..converter import ResponsesConverter
from ..core import Response, RxGemError
from ..request import ResponsesRequest, item_references, responses_to_gemini_request
from ..store import (
    MAX_PAGE,
    ChainTooLongError,
    InvalidPageError,
    ResponseStore,
    StoreError,
    valid_item_id,
    valid_turn_id,
)
from ..transport import api_of
from ._access import AccessRecord, access_record
from ._auth import Credentials, bearer_token
from ._errors import ErrorReply
from ._responses_records import (
    ANONYMOUS,
    history_items,
    items_page,
    new_response_id,
    normalized_input,
    replayed_ids,
    resolved_item,
    stored_inputs,
    stored_turn,
    with_stored_signatures,
)
from ._responses_stream import ResponsesAnswer
from ._store_limits import Conversation, StoreLimits, conversation_too_long

__all__ = ["ResponsesRoutes"]

T = TypeVar("T")

_NO_RETRY: Final = (("x-should-retry", "false"),)


def _not_found(response_id: str | None) -> ErrorReply:
    what = f"no response with id {response_id!r}" if response_id else "no such response"
    return ErrorReply(404, "invalid_request_error", what, code="not_found", headers=_NO_RETRY)


def _bad(message: str, param: str) -> ErrorReply:
    return ErrorReply(400, "invalid_request_error", message, param=param, headers=_NO_RETRY)


def _store_failed(error: StoreError) -> ErrorReply:
    return ErrorReply(
        503,
        "server_error",
        f"the response store failed ({type(error).__name__}); retry",
        code="store_unavailable",
        headers=(("retry-after", "1"),),
    )


def _json(data: bytes) -> HTTPResponse:
    return HTTPResponse(data, media_type="application/json")


class ResponsesRoutes:
    """The Responses handlers, on the service's settings, upstream and store.

    Args:
        service: the app's service (settings, upstream, logger, drain; its
            ``_request``, ``_count``, ``_authorize`` and ``_secrets``).
        store: the response store, opened by the app's lifespan; ``None``: none kept.
    """

    def __init__(self, service: Any, store: ResponseStore | None) -> None:
        self.service = service
        self.settings = service.settings
        self.logger: logging.Logger = service.logger
        self.store = store
        self.limits = StoreLimits(
            max_items=self.settings.store_max_items,
            max_record_bytes=self.settings.store_max_record_bytes,
            max_chain=self.settings.store_max_chain,
            max_conversation_bytes=self.settings.store_max_conversation_bytes,
        )

    # -- helpers -------------------------------------------------------------------------

    def _reply(self, reply: ErrorReply, record: AccessRecord) -> HTTPResponse:
        from ._app import reply_response

        return reply_response(reply, record)

    async def _owner(self, request: Request, credentials: Credentials) -> str | None:
        """The client's owner id in the store (``None`` without a store)."""
        if self.store is None:
            return None
        token = bearer_token(request.headers.get("authorization")) or ANONYMOUS
        return await self.store.owner(token)

    async def _authorized(
        self, request: Request, record: AccessRecord
    ) -> tuple[Credentials, str | None] | ErrorReply:
        credentials = self.service._authorize(request, record)
        if isinstance(credentials, ErrorReply):
            return credentials
        try:
            return credentials, await self._owner(request, credentials)
        except StoreError as exc:
            return _store_failed(exc)

    # -- POST /v1/responses --------------------------------------------------------------

    async def create(self, request: Request) -> Any:
        record = access_record(request.scope)
        read = await self.service._request(request, record)
        if not isinstance(read, tuple):
            return read
        credentials, body = read
        owner: str | None = None
        needs_store = body.get("store") is not False or "previous_response_id" in body
        if needs_store or item_references(body):
            try:  # the store is not asked when the request needs nothing of it
                owner = await self._owner(request, credentials)
            except StoreError as exc:
                return self._reply(_store_failed(exc), record)
        self.service._count(record, body)
        try:
            translated = await self._translate(body, owner)
        except StoreError as exc:
            return self._reply(_store_failed(exc), record)
        except RxGemError as exc:
            return self.service._failed(exc, record)
        if isinstance(translated, ErrorReply):
            return self._reply(translated, record)
        responses_request, input_items, conversation = translated
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
                return self._reply(refused, record)
        converters: list[ResponsesConverter] = []
        try:  # a stored response's id is the server's, unique to it
            events = self.service.upstream.responses(
                responses_request,
                credentials,
                converters.append,
                response_id=new_response_id() if keep else None,
            )
        except RxGemError as exc:
            return self.service._failed(exc, record)

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
            keep_alive=self.settings.keep_alive,
            record=record,
            secrets=self.service._secrets(record),
            logger=self.logger,
            drain=self.service.drain,
            send_timeout=self.settings.send_timeout,
            upstream=self.settings.upstream,
        )

    async def _translate(
        self, body: dict[str, Any], owner: str | None
    ) -> tuple[ResponsesRequest, list[dict[str, Any]], Conversation] | ErrorReply:
        """The translated request, the input items to keep and the conversation it
        continues, reading what it refers to from the store (raises
        ``InvalidRequestError``, ``StoreError``)."""
        store = self.store
        history = None
        conversation = Conversation()
        previous = body.get("previous_response_id")
        if previous is not None and store is not None and owner is not None:
            if not valid_turn_id(previous):
                return _bad("not a response id", "previous_response_id")
            try:
                chain = await store.chain(previous, owner)
            except ChainTooLongError as exc:
                return conversation_too_long(previous, exc.limit)
            if chain is None:
                return ErrorReply(
                    400,
                    "invalid_request_error",
                    f"previous response with id {previous!r} not found",
                    param="previous_response_id",
                    code="previous_response_not_found",
                    headers=_NO_RETRY,
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

    async def _stored(
        self, request: Request
    ) -> tuple[AccessRecord, ResponseStore, str, str] | HTTPResponse:
        """The record, the store, the owner and the checked id of a request on a stored
        response."""
        record = access_record(request.scope)
        authorized = await self._authorized(request, record)
        if isinstance(authorized, ErrorReply):
            return self._reply(authorized, record)
        _, owner = authorized
        response_id = str(request.path_params["response_id"])
        if owner is None:
            reply = ErrorReply(
                404, "invalid_request_error", "this server keeps no responses", code="not_found"
            )
            return self._reply(reply, record)
        if not valid_turn_id(response_id):
            return self._reply(_not_found(None), record)
        assert self.store is not None  # an owner comes from a store
        return record, self.store, owner, response_id

    async def _ask(
        self, record: AccessRecord, response_id: str, call: Awaitable[T | None]
    ) -> T | HTTPResponse:
        """What the store answers on a response, or the reply when the store fails or has
        no such response (``None`` or ``False``); a bad page is the caller's to answer."""
        try:
            found = await call
        except InvalidPageError:
            raise
        except StoreError as exc:
            return self._reply(_store_failed(exc), record)
        if found is None or found is False:
            return self._reply(_not_found(response_id), record)
        return found

    async def _on_stored(
        self, request: Request, ask: Callable[[ResponseStore, str, str], Awaitable[T | None]]
    ) -> T | HTTPResponse:
        """What ``ask(store, response_id, owner)`` answers, as :meth:`_ask` says."""
        stored = await self._stored(request)
        if isinstance(stored, HTTPResponse):
            return stored
        record, store, owner, response_id = stored
        return await self._ask(record, response_id, ask(store, response_id, owner))

    async def retrieve(self, request: Request) -> HTTPResponse:
        turn = await self._on_stored(
            request, lambda store, turn_id, owner: store.get(turn_id, owner)
        )
        return turn if isinstance(turn, HTTPResponse) else _json(turn.document)

    async def delete(self, request: Request) -> HTTPResponse:
        response_id = str(request.path_params["response_id"])
        deleted = await self._on_stored(
            request, lambda store, turn_id, owner: store.delete(turn_id, owner)
        )
        if isinstance(deleted, HTTPResponse):
            return deleted
        body = {"id": response_id, "object": "response", "deleted": True}
        return _json(msgspec.json.encode(body))

    async def input_items(self, request: Request) -> HTTPResponse:
        stored = await self._stored(request)
        if isinstance(stored, HTTPResponse):
            return stored
        record, store, owner, response_id = stored
        query = request.query_params
        limit_text = query.get("limit", "20")
        if not (limit_text.isascii() and limit_text.isdigit() and len(limit_text) <= 3):
            return self._reply(_bad(f"limit must be from 1 to {MAX_PAGE}", "limit"), record)
        limit = int(limit_text)
        if not 1 <= limit <= MAX_PAGE:
            return self._reply(_bad(f"limit must be from 1 to {MAX_PAGE}", "limit"), record)
        order = query.get("order", "desc")
        if order not in ("asc", "desc"):
            return self._reply(_bad("order must be asc or desc", "order"), record)
        after = query.get("after")
        if after is not None and not valid_item_id(after):
            return self._reply(_bad("not an item id", "after"), record)
        direction: Literal["asc", "desc"] = "asc" if order == "asc" else "desc"
        call = store.input_items(response_id, owner, after=after, limit=limit, order=direction)
        try:
            page = await self._ask(record, response_id, call)
        except InvalidPageError as exc:
            return self._reply(_bad(str(exc), "after" if after else "limit"), record)
        return page if isinstance(page, HTTPResponse) else _json(items_page(page))
