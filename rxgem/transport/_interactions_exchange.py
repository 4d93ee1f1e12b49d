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

import asyncio
import random
from collections.abc import Callable, Mapping
from typing import Any, Final

import httpx
import msgspec
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT
from reactivex import Observable, abc

from ..bridge import FlowGate
from ..core import GeminiAPIError, GeminiTransportError, TruncatedStreamError
from ._cassette import CassetteSink, Tape, sink_of
from ._exchange import DEFAULT_MAX_LINE_BYTES, TransportOptions
from ._http import (
    RetryPolicy,
    http_error,
    interactions_url,
    resolve_headers,
    transport_error,
)
from ._interaction_frames import EventFramer
from ._runners import Outlet, Run, observer_raised, start

__all__ = [
    "DEFAULT_MAX_RESUMES",
    "DEFAULT_RESUME",
    "InteractionsTransportOptions",
    "from_interactions",
]

DEFAULT_RESUME: Final = 3
"""How many reconnections in a row (without a new event between them) resume a cut stream."""
DEFAULT_MAX_RESUMES: Final = 32
"""How many reconnections in all one stream may make (each after at least one new event)."""
_RESUME_BACKOFF: Final = 0.25
_RESUME_MAX_BACKOFF: Final = 4.0
_RESUME_STATUSES: Final = frozenset({429, 500, 502, 503, 504})


class InteractionsTransportOptions(TransportOptions, total=False):
    """The keyword options of :func:`from_interactions` besides the request."""

    resume: int
    max_resumes: int
    interaction_id: str | None


class _Session:
    """One subscription's requests and the decisions between them (no I/O)."""

    def __init__(
        self,
        base_url: str | None,
        headers: dict[str, str],
        body: bytes,
        stored: bool,
        policy: RetryPolicy | None,
        resume: int,
        max_bytes: int | None,
        interaction_id: str | None = None,
        max_resumes: int = DEFAULT_MAX_RESUMES,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.base_url = base_url
        self.headers = headers
        self.get_headers = {k: v for k, v in headers.items() if k != "content-type"}
        self.body = body
        self.stored = stored
        self.policy = policy
        self.resume = resume
        self.max_resumes = max_resumes
        self.jitter = jitter  # a number in [0, 1)
        self.framer = EventFramer(max_bytes)
        self.sink: Callable[[dict[str, Any]], None] | None = None
        self.attempt = 0  # retries of the create
        self.failures = 0  # reconnections in a row without a new event
        self.seen = 0  # events when the last connection started
        self.resumes = 0  # reconnections so far
        if interaction_id is not None:  # read a run already created, from its start
            self.framer.interaction_id = interaction_id

    def request(self) -> tuple[str, str, bytes | None, dict[str, str], dict[str, str]]:
        """``(method, url, content, headers, params)`` of the next connection."""
        self.framer.restart()
        self.seen = self.framer.events
        if self.framer.interaction_id is None:
            return "POST", interactions_url(self.base_url), self.body, self.headers, {}
        url = interactions_url(self.base_url, self.framer.interaction_id)
        params = {"stream": "true"}
        if self.framer.last_event_id is not None:
            params["last_event_id"] = self.framer.last_event_id
        return "GET", url, None, self.get_headers, params

    def tape(self, method: str, content: bytes | None, response: httpx.Response) -> Tape | None:
        """A recording of this connection, when recording."""
        if self.sink is None:
            return None
        url = str(response.request.url)
        tape = Tape(self.sink, "interactions", method, url, content, self.headers)
        tape.open(response.status_code, response.headers)
        return tape

    def after(self, error: Exception | None) -> tuple[float | None, Exception]:
        """After a connection that ended without the end of the stream (``error`` is
        None for a body that just stopped): the seconds to wait before the next one, or
        None and the error to report."""
        framer = self.framer
        if error is None:
            where = f" after {framer.events} events" if framer.events else ""
            error = TruncatedStreamError(
                f"the Interactions stream ended{where} before it said done"
            )
        if framer.interaction_id is None:  # the create: retried as from_gemini retries
            if framer.events or self.policy is None:
                return None, error
            delay = self.policy.delay(self.attempt, error)
            self.attempt += 1
            return delay, error
        if not self.stored:
            return None, _not_resumable(error, "store is false, so Google kept nothing")
        if isinstance(error, GeminiAPIError) and error.http_status not in _RESUME_STATUSES:
            return None, error
        self.failures = 0 if framer.events > self.seen else self.failures + 1
        if self.failures >= self.resume:
            why = f"{self.resume} reconnections in a row failed" if self.resume else "resume=0"
            return None, _not_resumable(error, why)
        if self.resumes >= self.max_resumes:
            why = f"max_resumes={self.max_resumes} reconnections made"
            return None, _not_resumable(error, why)
        self.resumes += 1
        # after a new event: at once but for a jitter of up to the first backoff; then
        # backoff doubling from it, up to its cap, half of it jittered
        if self.failures == 0:
            return _RESUME_BACKOFF * self.jitter(), error
        wait = min(_RESUME_MAX_BACKOFF, _RESUME_BACKOFF * 2 ** (self.failures - 1))
        return wait / 2 + wait / 2 * self.jitter(), error


def _not_resumable(error: Exception, why: str) -> Exception:
    """``error`` with why the stream was not resumed added to its message."""
    if isinstance(error, GeminiTransportError):
        return GeminiTransportError(f"{error} (not resumed: {why})", cause=error.cause)
    if isinstance(error, TruncatedStreamError):
        return TruncatedStreamError(f"{error} (not resumed: {why})")
    return error


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
    sink = sink_of(record)

    def subscribe(
        observer: abc.ObserverBase[bytes], default: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        session = _Session(
            base_url,
            send_headers,
            encoded,
            stored,
            policy,
            resume,
            max_line_bytes,
            interaction_id,
            max_resumes,
        )
        session.sink = sink
        outlet = Outlet(observer)
        return start(
            lambda http, run: _sync_connections(session, outlet, http, run, timeout),
            lambda http, gate: _async_connections(session, outlet, http, gate, timeout),
            client=client,
            scheduler=scheduler,
            default=default,
            name="rxgem-from-interactions",
            outlet=outlet,
        )

    return Observable(subscribe)


Timeout = httpx.Timeout | float | UseClientDefault | None


def _sync_connections(
    session: _Session,
    observer: abc.ObserverBase[bytes],
    http: httpx.Client,
    run: Run,
    timeout: Timeout,
) -> None:
    while not run.cancelled.is_set():
        method, url, content, headers, params = session.request()
        error: Exception | None = None
        tape: Tape | None = None
        observing = False  # in a call of the observer's
        try:
            with http.stream(
                method, url, content=content, headers=headers, params=params, timeout=timeout
            ) as response:
                with run.lock:
                    run.response = response
                if run.cancelled.is_set():
                    return
                tape = session.tape(method, content, response)
                if response.status_code != 200:
                    body = response.read()
                    if tape is not None:
                        tape.add(body)
                        tape.complete = True
                    error = http_error(
                        response.status_code, response.headers, body, response.reason_phrase
                    )
                else:
                    for chunk in response.iter_bytes():
                        if tape is not None:
                            tape.add(chunk)
                        if run.cancelled.is_set():
                            return
                        whole = session.framer.feed(chunk)
                        if tape is not None and session.framer.finished:
                            tape.complete = True  # the consumer may stop at the end event
                        if whole:
                            observing = True
                            observer.on_next(whole)
                            observing = False
                        if session.framer.failure is not None:
                            break  # leaving the block closes the response
                    if session.framer.failure is not None:
                        if not run.cancelled.is_set():
                            observing = True
                            observer.on_error(session.framer.failure)
                        return
                    if session.framer.finished:
                        if tape is not None:
                            tape.complete = True
                            tape.close()  # before the consumer hears the end
                        if not run.cancelled.is_set():
                            run.settle()
                            observing = True
                            observer.on_completed()
                        return
        except httpx.HTTPError as exc:
            if run.cancelled.is_set():
                return
            error = transport_error(exc, url)
        except Exception as exc:
            if observing:  # the observer's own error propagates (_exchange's docstring)
                raise
            if not run.cancelled.is_set():
                observer.on_error(exc)
            return
        finally:
            with run.lock:
                run.response = None
            if tape is not None:
                tape.close()
        delay, final = session.after(error)
        if delay is None:
            if not run.cancelled.is_set():
                observer.on_error(final)
            return
        if run.cancelled.wait(delay):
            return


async def _async_connections(
    session: _Session,
    observer: abc.ObserverBase[bytes],
    http: httpx.AsyncClient,
    gate: FlowGate | None,
    timeout: Timeout,
) -> None:
    while True:
        method, url, content, headers, params = session.request()
        error: Exception | None = None
        tape: Tape | None = None
        try:
            async with http.stream(
                method, url, content=content, headers=headers, params=params, timeout=timeout
            ) as response:
                tape = session.tape(method, content, response)
                if response.status_code != 200:
                    body = await response.aread()
                    if tape is not None:
                        tape.add(body)
                        tape.complete = True
                    error = http_error(
                        response.status_code, response.headers, body, response.reason_phrase
                    )
                else:
                    async for chunk in response.aiter_bytes():
                        if tape is not None:
                            tape.add(chunk)
                        whole = session.framer.feed(chunk)
                        if tape is not None and session.framer.finished:
                            tape.complete = True  # the consumer may stop at the end event
                        try:
                            if whole:
                                observer.on_next(whole)
                            if session.framer.failure is not None:
                                observer.on_error(session.framer.failure)
                                return  # leaving the block closes the response
                        except Exception as raised:  # the observer's own (_exchange's docstring)
                            observer_raised(raised, "from_interactions")
                            return
                        if whole and gate is not None and not gate.is_open:
                            await gate.ready()  # before the next read
                    if session.framer.finished:
                        if tape is not None:
                            tape.complete = True
                            tape.close()
                        try:
                            observer.on_completed()
                        except Exception as raised:
                            observer_raised(raised, "from_interactions")
                        return
        except httpx.HTTPError as exc:
            error = transport_error(exc, url)
        except Exception as exc:
            observer.on_error(exc)
            return
        finally:
            if tape is not None:
                tape.close()  # a cancelled task too
        delay, final = session.after(error)
        if delay is None:
            observer.on_error(final)
            return
        await asyncio.sleep(delay)
