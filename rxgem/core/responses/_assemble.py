"""The whole response of a finished Responses stream: what a request without ``stream``
answers.

The terminal event (``response.completed``, ``.incomplete`` or ``.failed``) carries the
whole ``response``, output items and usage included, so assembling is finding it;
:func:`assemble_response` also checks that the events are one stream's.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._errors import TruncatedStreamError
from ._models import (
    Response,
    ResponseCompleted,
    ResponseFailed,
    ResponseIncomplete,
    ResponsesEvent,
)

__all__ = ["assemble_response"]

_TERMINAL = (ResponseCompleted, ResponseIncomplete, ResponseFailed)


def assemble_response(events: Iterable[ResponsesEvent]) -> Response:
    """The ``response`` of a stream's events (its terminal event's).

    Raises:
        TruncatedStreamError: no terminal event came (the stream did not end).
        ValueError: the events are not one stream's (another id, or out of sequence).
    """
    response: Response | None = None
    ids: set[str] = set()
    for expected, event in enumerate(events):
        if event.sequence_number != expected:
            raise ValueError(
                f"event {expected} has sequence_number {event.sequence_number}: not one stream's"
            )
        inner = getattr(event, "response", None)
        if isinstance(inner, Response):
            ids.add(inner.id)
        if isinstance(event, _TERMINAL):
            response = event.response
    if len(ids) > 1:
        raise ValueError(f"the events are of {len(ids)} responses: {', '.join(sorted(ids))}")
    if response is None:
        raise TruncatedStreamError("the Responses stream ended before its terminal event")
    return response
