"""Background responses (:class:`BackgroundRuns`): start, poll, stream again and cancel
an Interactions background run; :mod:`._background` says how. Each answers a
:class:`~._results.Document` (JSON to send as it is) or a
:class:`~._results.ResponsesRun` (events); Google's failures raise ``RxGemError``."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import msgspec
from reactivex import Observable
from reactivex import operators as ops

from ..converter import ResponsesConverter
from ..core import MalformedStreamError, RxGemError
from ..core.responses import Response, ResponsesEvent
from ..replies import Refusal, store_unavailable
from ..request import InteractionRequest
from ..store import ResponseStore, StoredItem, StoredTurn, StoreError, stored_turn
from ._background import (
    RUNNING,
    background_options,
    ended,
    interaction_id_of,
    queued_turn,
    with_status,
)
from ._interactions import Interactions
from ._responses_signatures import response_signatures
from ._results import Document, ResponsesRun
from ._signature_memory import SignatureMemory
from ._trace import Keys, Trace

__all__ = ["BackgroundRuns", "Scrub"]

Scrub = Callable[[str], str]
"""What a failed response's message from Gemini goes through (its secrets out)."""


def _as_said(text: str) -> str:
    return text


def _after(number: int) -> Callable[[Observable[ResponsesEvent]], Observable[ResponsesEvent]]:
    """The events numbered after ``number`` (a client resuming a stream has the others)."""

    def later(event: ResponsesEvent) -> bool:
        sequence: int = event.sequence_number
        return sequence > number

    return ops.filter(later)


class BackgroundRuns:
    """Background responses, on the gateway's Interactions upstream and signature memory;
    each method takes the store the response is in."""

    def __init__(
        self, interactions: Interactions, memory: SignatureMemory, logger: logging.Logger
    ) -> None:
        self.interactions = interactions
        self.memory = memory
        self.logger = logger

    async def _save(self, store: ResponseStore, turn: StoredTurn, record: Trace) -> None:
        """Store what became of a run; a store that fails is logged (the answer is whole)."""
        try:
            await store.save(turn)
        except StoreError as exc:
            self.logger.warning(
                "request %s: response %s not updated: %s", record.request_id, turn.id, exc
            )

    def _finished(
        self, turn: StoredTurn, response: Response, signatures: Any = (), placed: Any = None
    ) -> StoredTurn:
        return stored_turn(
            response, turn.owner, turn.input, signatures, turn.interaction_id, placed=placed
        )

    async def start(
        self,
        store: ResponseStore,
        request: InteractionRequest,
        credentials: Keys,
        owner: str,
        inputs: tuple[StoredItem, ...],
        record: Trace,
        scrub: Scrub | None = None,
    ) -> Document | ResponsesRun:
        """Create the run, store the response (``queued``/``in_progress``) and answer it;
        with ``stream``, follow it with the run's events."""
        interaction = await self.interactions.create(request.body, credentials)
        if interaction_id_of(interaction) is None:
            raise MalformedStreamError("Google's answer to a background run has no id")
        turn = queued_turn(request, owner, inputs, interaction, time.time())
        try:
            await store.save(turn)
        except StoreError as exc:  # a run no client can find again: stop it
            await self._cancel_quietly(turn, credentials)
            raise Refusal(store_unavailable(exc)) from exc
        if not request.stream:
            return Document(turn.document)
        return self.stream(store, turn, credentials, None, record, scrub)

    async def _cancel_quietly(self, turn: StoredTurn, credentials: Keys) -> None:
        if turn.interaction_id is not None:
            try:
                await self.interactions.cancel(turn.interaction_id, credentials)
            except RxGemError:
                self.logger.warning("background run of %s not cancelled", turn.id)

    def stream(
        self,
        store: ResponseStore,
        turn: StoredTurn,
        credentials: Keys,
        after: int | None,
        record: Trace,
        scrub: Scrub | None = None,
    ) -> ResponsesRun:
        """The run's events from Google's stream of it, those numbered ``after`` or less
        left out; when it ends, the stored response becomes the final one."""
        assert turn.interaction_id is not None
        document = msgspec.json.decode(turn.document)
        options = background_options(
            self.interactions, document, turn.created_at, scrub or _as_said
        )
        converters: list[ResponsesConverter] = []
        events: Observable[ResponsesEvent] = self.interactions.replay(
            turn.interaction_id, credentials, options, converters.append
        )
        if after is not None:
            events = events.pipe(_after(after))
        running = document.get("status") in RUNNING
        session = self.memory.session_of(store, turn.owner, document.get("model"), record)

        async def on_response(response: Response) -> None:
            if running:
                signatures = converters[0].signatures if converters else []
                placed = converters[0].placed if converters else {}
                if session is not None:
                    await session.remember(
                        response_signatures(response, session.model, signatures, placed)
                    )
                await self._save(store, self._finished(turn, response, signatures, placed), record)

        return ResponsesRun(events, on_response, stream=True)

    async def _ended(
        self,
        store: ResponseStore,
        turn: StoredTurn,
        interaction: dict[str, Any],
        record: Trace,
        scrub: Scrub | None = None,
    ) -> Document:
        """The response of a run Google says is over (stored in place of the running one)."""
        status = interaction.get("status")
        if not ended(interaction):  # cancelled, or still running: the stored one, updated
            if status not in RUNNING and status != "cancelled":
                return Document(turn.document)
            updated, document = with_status(turn, str(status))
            if status == "cancelled":
                await self._save(store, updated, record)
            return Document(document)
        document = msgspec.json.decode(turn.document)
        options = background_options(
            self.interactions, document, turn.created_at, scrub or _as_said
        )
        response = self.interactions.response(interaction, options)
        await self._save(store, self._finished(turn, response), record)
        return Document(response.to_json())

    async def poll(
        self,
        store: ResponseStore,
        turn: StoredTurn,
        credentials: Keys,
        record: Trace,
        scrub: Scrub | None = None,
    ) -> Document:
        """The response as its run stands at Google."""
        assert turn.interaction_id is not None
        interaction = await self.interactions.get(turn.interaction_id, credentials)
        return await self._ended(store, turn, interaction, record, scrub)

    async def cancel(
        self,
        store: ResponseStore,
        turn: StoredTurn,
        credentials: Keys,
        record: Trace,
        scrub: Scrub | None = None,
    ) -> Document:
        """Cancel the run at Google (a response that ended is answered as it is)."""
        assert turn.interaction_id is not None
        if msgspec.json.decode(turn.document).get("status") not in RUNNING:
            return Document(turn.document)
        interaction = await self.interactions.cancel(turn.interaction_id, credentials)
        return await self._ended(store, turn, interaction, record, scrub)
