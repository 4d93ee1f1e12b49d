from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from reactivex import Observable

from ..core import GenerateContentResponse, SSEEvent
from ..core.pipeline import ParseOptions
from ._stage_operator import documented, stage_operator

__all__ = ["parse"]


@documented(ParseOptions)
def parse(
    **options: Unpack[ParseOptions],
) -> Callable[[Observable[SSEEvent]], Observable[GenerateContentResponse]]:
    """Parse each SSE event's payload into a typed ``GenerateContentResponse``.

    .. code::

        ---e1----------e2-------------e3{"error":…}
        [                 parse()                 ]
        ---r1----------r2-------------#GeminiAPIError

    Unknown fields and unknown enum values are tolerated (enums stay strings).
    Enums sent as integers (``enum-encoding=int``) become their names as ``api``
    numbers them (an unknown number becomes e.g. ``FINISH_REASON_99``). A Gemini
    Code Assist envelope (``{"response": {...}, "traceId": ...}``) is unwrapped.
    An ``{"error": {...}}`` payload (framed or raw, also as a one-element array)
    ends the stream with :class:`~rxgem.GeminiAPIError`; invalid JSON or a payload
    of the wrong shape ends it with :class:`~rxgem.MalformedStreamError`, naming
    the 1-based event number and a snippet. Whitespace-only payloads are skipped.

    Returns:
        An operator from ``Observable[SSEEvent]`` to
        ``Observable[GenerateContentResponse]``.
    """
    return stage_operator("parse", options)
