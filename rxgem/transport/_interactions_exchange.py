"""Gemini's Interactions stream over httpx, as an ``Observable[bytes]``, resumed when cut.

``from_interactions()`` POSTs a create body with ``"stream": true`` to
``{base_url}/interactions`` and emits the SSE body as it arrives, in whole events
(:class:`~rxgem.transport._interaction_frames.EventFramer` holds back the event in
progress), ready for the Interactions reader (``upstream="interactions"``).

When the stream is cut (the connection drops, a read fails, or the body ends before
``data: [DONE]`` / ``interaction.completed``) and Google keeps the interaction (the
body's ``store`` is not false, and ``interaction.created`` gave its id), it reconnects
with ``GET {base_url}/interactions/{id}?stream=true&last_event_id=<last whole event>``
and goes on: the subscriber sees neither the cut nor a repeated event (one whose
``event_id`` it already had is dropped, whatever the upstream sends again). Reconnections
are bounded twice: ``resume`` in a row without a new event, ``max_resumes`` in all, each
after a wait with jitter. Where the request runs, backpressure, disposal and what an
observer raises are as for :func:`~rxgem.from_gemini`; whatever else goes wrong reaches
the subscriber as the stream's error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import httpx
import msgspec
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT
from reactivex import Observable, abc

from ._cassette import CassetteSink, sink_of
from ._drivers import exchange_source
from ._exchange import DEFAULT_MAX_LINE_BYTES, TransportOptions
from ._http import RetryPolicy, interactions_url, resolve_headers
from ._machine import DEFAULT_MAX_RESUMES, ExchangeMachine, Target
from ._strategies import INTERACTIONS

__all__ = [
    "DEFAULT_MAX_RESUMES",
    "DEFAULT_RESUME",
    "InteractionsTransportOptions",
    "from_interactions",
]

DEFAULT_RESUME: Final = 3
"""How many reconnections in a row (without a new event between them) resume a cut stream."""


class InteractionsTransportOptions(TransportOptions, total=False):
    """The keyword options of :func:`from_interactions` besides the request."""

    resume: int
    max_resumes: int
    interaction_id: str | None


def from_interactions(
    request: Mapping[str, Any],
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    base_url: str | None = None,
    client: httpx.Client | httpx.AsyncClient | None = None,
    timeout: httpx.Timeout | float | UseClientDefault | None = USE_CLIENT_DEFAULT,
    headers: Mapping[str, str] | None = None,
    retry: RetryPolicy | int | None = None,
    scheduler: abc.SchedulerBase | None = None,
    max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES,
    resume: int = DEFAULT_RESUME,
    max_resumes: int = DEFAULT_MAX_RESUMES,
    interaction_id: str | None = None,
    record: CassetteSink | None = None,
) -> Observable[bytes]:
    """Stream an Interactions run's SSE body as byte chunks of whole events, resumed when cut.

    .. code::

        from_interactions({"model": "gemini-3-flash-preview", "input": "Hi"})
        ---b"event: interaction.created\\nid: …\\ndata: {…}\\n\\n"---b"event: step.start…"---|
                      (cut: GET …/interactions/{id}?stream=true&last_event_id=…)

    Args:
        request: an Interactions create body (``model`` or ``agent``, ``input``, ...);
            ``"stream": true`` is set here.
        interaction_id: read this stored run's stream from its start (``GET
            .../interactions/{id}?stream=true``, resumed as above) instead of creating
            one; ``request`` is then only read for ``store``.
        resume: how many reconnections in a row, without a new event between them,
            may resume a cut stream (the first at once but for a jitter of up to 0.25 s,
            then about 0.25 s, 0.5 s, ... up to 4 s apart, half of each wait jittered);
            each is a new request with ``timeout``. ``0``: never resume.
        max_resumes: how many reconnections one stream may make in all, however many
            new events came between them (32 by default,
            :data:`DEFAULT_MAX_RESUMES`); then the stream errors.
        record: as for :func:`~rxgem.from_gemini`: one cassette per HTTP connection
            (a resumed stream's ``GET`` is a cassette of its own).
        The others: as for :func:`~rxgem.from_gemini` (``retry`` retries the create
        only, before its first event).

    Raises:
        ValueError: at call time, for ``max_line_bytes`` or ``resume`` out of range.
        InvalidRequestError: at call time, for an ``interaction_id`` that is not one.
        MissingCredentialsError: at call time, when no key or token can be found.

    The Observable errors, after every whole event that arrived, with
    :class:`GeminiAPIError` for a non-200 answer, :class:`GeminiTransportError` when a
    connection fails and the stream cannot be resumed (``store: false``, no
    ``interaction.created`` yet, ``resume`` reconnections in a row failed, or
    ``max_resumes`` were made), :class:`TruncatedStreamError` when the body ended before
    it said done and cannot be resumed, and :class:`MalformedStreamError` when Google's
    ``interaction.created`` names the interaction with an id that is not one (letters,
    digits and ``_ - . =``, at most 256), before any request is made with it.
    """
    if max_line_bytes is not None and (type(max_line_bytes) is not int or max_line_bytes < 1):
        raise ValueError(f"max_line_bytes must be a positive int or None, not {max_line_bytes!r}")
    if type(resume) is not int or resume < 0:
        raise ValueError(f"resume must be an int >= 0, not {resume!r}")
    if type(max_resumes) is not int or max_resumes < 0:
        raise ValueError(f"max_resumes must be an int >= 0, not {max_resumes!r}")
    if interaction_id is not None:
        interactions_url(base_url, interaction_id)  # a bad id is refused now, not in a thread
    policy = RetryPolicy(attempts=retry) if isinstance(retry, int) else retry
    if policy is not None and policy.attempts < 1:
        raise ValueError("retry attempts must be at least 1")
    send_headers = resolve_headers(api_key, access_token, headers)
    body = {**request, "stream": True}
    encoded = msgspec.json.encode(body)
    stored = body.get("store") is not False
    target = Target(interactions_url(base_url), send_headers, encoded, base_url)

    def machine() -> ExchangeMachine:
        return ExchangeMachine(
            INTERACTIONS,
            target,
            policy=policy,
            resume=resume,
            max_resumes=max_resumes,
            max_bytes=max_line_bytes,
            stored=stored,
            stream_id=interaction_id,
        )

    return exchange_source(
        machine,
        client=client,
        scheduler=scheduler,
        timeout=timeout,
        sink=sink_of(record),
        source="from_interactions",
    )
