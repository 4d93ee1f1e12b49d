from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core import SSEEvent
from ..core.interactions import InteractionEvent
from ._stage_operator import stage_operator

__all__ = ["parse_interactions"]


def parse_interactions() -> Callable[[Observable[SSEEvent]], Observable[InteractionEvent]]:
    """Parse each SSE event of an Interactions stream into its typed event.

    .. code::

        ---e{interaction.created}---e{step.start}---e{step.delta}---e{"error":…}
        [                        parse_interactions()                          ]
        ---created------------------start-----------delta-----------#GeminiAPIError

    The event's type is its ``event_type`` (the ``event:`` line says the same):
    ``interaction.created``, ``interaction.status_update``, ``step.start``,
    ``step.delta``, ``step.stop``, ``interaction.completed``, ``error``. A step or
    delta type the parser does not know is passed on, typed as unknown (Google adds
    them); an ``error`` event ends the stream with :class:`~rxgem.GeminiAPIError`;
    invalid JSON, an event of the wrong shape, or the pre-June-2026 schema
    (``interaction.start``, ``content.delta``) ends it with
    :class:`~rxgem.MalformedStreamError`, naming the 1-based event number and type.

    Returns:
        An operator from ``Observable[SSEEvent]`` to ``Observable[InteractionEvent]``.
    """
    return stage_operator("parse_interactions", {})
