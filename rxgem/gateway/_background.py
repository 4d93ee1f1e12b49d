"""Background responses on the Interactions upstream: one run at Google per response,
found again through the local store.

- ``POST /v1/responses`` with ``background: true`` creates an Interactions background run
  (``"background": true``, kept at Google), stores the response at once (status
  ``queued`` or ``in_progress``, the run's id beside it) and answers it; with
  ``stream``, the run's events follow, from Google's ``GET .../{id}?stream=true``.
- ``GET /v1/responses/{id}`` asks Google how the run stands: still running, the stored
  response with Google's status; ended, the response made from the Interaction object,
  stored in place of the first.
- ``GET /v1/responses/{id}?stream=true&starting_after=N`` streams the run's events again
  from Google's stream, skipping those numbered ``N`` or less.
- ``POST /v1/responses/{id}/cancel`` cancels the run at Google.

The server holds nothing for a run between requests: each of these is one request to
Google (with the client's credentials), bounded by the upstream's timeouts. Events made
again from the same run are the same events: the items' ids come from the response's
id (:func:`seeded_ids`) and ``created_at`` from the stored response, so a resumed stream
names the items the first one named.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

import msgspec

from ..core.responses import Response
from ..request import InteractionRequest
from ..store import StoredItem, StoredTurn, new_response_id
from ._interactions import Interactions

__all__ = [
    "RUNNING",
    "background_options",
    "created_at",
    "ended",
    "interaction_id_of",
    "queued_turn",
    "seeded_ids",
    "with_status",
]

RUNNING: Final = frozenset({"queued", "in_progress"})
"""A background response's statuses before it ended."""
_ENDED_AT_GOOGLE: Final = frozenset(
    {"completed", "requires_action", "incomplete", "budget_exceeded", "failed"}
)


def seeded_ids(seed: str) -> Callable[[], str]:
    """The ``id_factory`` of a background response's events: the same ids, in the same
    order, each time they are made again from its run."""
    counter = itertools.count()
    return lambda: hashlib.sha256(f"{seed}:{next(counter)}".encode()).hexdigest()[:32]


def background_options(
    interactions: Interactions,
    document: Mapping[str, Any],
    created_at: float,
    scrub: Callable[[str], str],
) -> dict[str, Any]:
    """The Responses options of a background response's events, made from its stored
    document (the request's fields it repeats, its id, model and time): the same every
    time they are made; ``scrub``: what a failed response's message from Gemini goes
    through."""
    response_id = str(document["id"])
    return {
        **interactions.responses_pipeline,
        "model": document["model"],
        "request": document,
        "response_id": response_id,
        "id_factory": seeded_ids(response_id),
        "clock": lambda: created_at,
        "scrub": scrub,
    }


def interaction_id_of(interaction: Mapping[str, Any]) -> str | None:
    """The ``id`` of an Interaction object Google answered, when it has one."""
    value = interaction.get("id")
    return value if isinstance(value, str) and value else None


def created_at(interaction: Mapping[str, Any], now: float) -> float:
    """When Google says the run was created (its ``created``), else ``now``: the time the
    response's events, made from the run, say too."""
    value = interaction.get("created")
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value).timestamp()
        except ValueError:
            pass
    return now


def queued_turn(
    request: InteractionRequest,
    owner: str,
    inputs: tuple[StoredItem, ...],
    interaction: Mapping[str, Any],
    now: float,
) -> StoredTurn:
    """The stored turn of a background response just created: no output yet, Google's
    status (``queued`` or ``in_progress``), the run's id beside it."""
    status = interaction.get("status")
    now = created_at(interaction, now)
    document = {
        **request.echo,
        "id": new_response_id(),
        "object": "response",
        "created_at": int(now),
        "model": request.model.removeprefix("models/"),
        "status": status if status in RUNNING else "queued",
        "output": [],
        "background": True,
        "store": True,
    }
    response = msgspec.convert(document, Response)
    return StoredTurn(
        id=response.id,
        owner=owner,
        created_at=now,
        document=response.to_json(),
        input=inputs,
        previous_id=request.previous_response_id,
        interaction_id=interaction_id_of(interaction),
    )


def with_status(turn: StoredTurn, status: str) -> tuple[StoredTurn, bytes]:
    """``turn`` with its response's ``status`` set (a running run's, or ``cancelled``),
    and the document."""
    document = msgspec.json.decode(turn.document)
    document["status"] = status
    encoded = msgspec.json.encode(document)
    return dataclasses.replace(turn, document=encoded), encoded


def ended(interaction: Mapping[str, Any]) -> bool:
    """Whether an Interaction object's run ended with an answer to convert."""
    return interaction.get("status") in _ENDED_AT_GOOGLE
