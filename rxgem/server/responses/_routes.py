"""The Responses handlers (:class:`ResponsesRoutes`), on the app's request handling: HTTP
only; what a request continues, its translation, its answer's keeping and background runs
are the gateway's (:class:`~rxgem.gateway.Gateway`'s ``responder``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final, Literal, TypeVar

import msgspec
from starlette.requests import Request
from starlette.responses import Response as HTTPResponse

from ...core import RxGemError
from ...gateway import Document, ResponsesRun
from ...replies import Refusal, bad_request, not_found, store_unavailable
from ...store import (
    MAX_PAGE,
    InvalidPageError,
    ResponseStore,
    StoreError,
    is_background,
    is_running,
    items_page,
    valid_item_id,
    valid_turn_id,
)
from .._handling import Handling, json_response
from ..guard import Credentials
from ..observe import AccessRecord, access_record
from ._answer import ResponsesAnswer

__all__ = ["ResponsesRoutes"]

T = TypeVar("T")

_MAX_SEQUENCE_DIGITS: Final = 18


def _store_failed(error: StoreError) -> Refusal:
    return Refusal(store_unavailable(error))


def _no_response(response_id: str | None) -> Refusal:
    what = f"no response with id {response_id!r}" if response_id else "no such response"
    return Refusal(not_found(what))


class ResponsesRoutes:
    """The Responses handlers, on the app's request handling (and its gateway's store,
    set by the app's lifespan)."""

    def __init__(self, handling: Handling) -> None:
        self.handling = handling
        self.settings = handling.settings
        self.logger: logging.Logger = handling.logger
        self.responder = handling.gateway.responder
        self.runs = self.responder.runs

    @property
    def store(self) -> ResponseStore | None:
        return self.responder.store

    def _answer(
        self, answer: ResponsesRun | Document, record: AccessRecord
    ) -> ResponsesAnswer | HTTPResponse:
        if isinstance(answer, Document):
            return json_response(answer.body)
        return ResponsesAnswer(
            answer.events,
            on_response=answer.on_response,
            stream=answer.stream,
            answering=self.handling.answering(record),
        )

    # -- POST /v1/responses --------------------------------------------------------------

    async def create(self, request: Request) -> ResponsesAnswer | HTTPResponse:
        handling = self.handling
        record = access_record(request.scope)
        credentials, body = await handling.read(request, record)
        try:
            answer = await self.responder.create(
                body,
                credentials,
                handling.token(request),
                record,
                counted=lambda: handling.count(record, body),
                scrub=handling.scrub(record),
            )
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc
        return self._answer(answer, record)

    # -- the stored responses ------------------------------------------------------------

    async def _stored(self, request: Request) -> tuple[ResponseStore, str, str, Credentials]:
        """The store, the owner, the checked id and the client's credentials of a request
        on a stored response."""
        record = access_record(request.scope)
        credentials = await self.handling.authorize(request, record)
        owner = await self.responder.owner(self.handling.token(request))
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
                record = access_record(request.scope)
                scrub = self.handling.scrub(record)
                return self._answer(
                    runs.stream(store, turn, credentials, after, record, scrub), record
                )
        if runs is not None and is_running(turn.document):
            record = access_record(request.scope)
            try:
                polled = await runs.poll(
                    store, turn, credentials, record, self.handling.scrub(record)
                )
            except RxGemError as exc:
                raise self.handling.failed(exc, record) from exc
            return self._answer(polled, record)
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
        record = access_record(request.scope)
        try:
            cancelled = await self.runs.cancel(
                store, turn, credentials, record, self.handling.scrub(record)
            )
        except RxGemError as exc:
            raise self.handling.failed(exc, record) from exc
        return json_response(cancelled.body)

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


def starting_after(value: str | None) -> int | None:
    """``starting_after`` of ``GET /v1/responses/{id}?stream=true``: a sequence number,
    or ``None`` when absent; ``ValueError`` for anything but a whole number of at most
    18 digits (a larger one is past every event anyway)."""
    if value is None:
        return None
    if not (value.isascii() and value.isdigit() and len(value) <= _MAX_SEQUENCE_DIGITS):
        raise ValueError(value)
    return int(value)
