"""One stream's exchange with the upstream, as a machine in h11's manner (no I/O, no Rx).

A driver (:mod:`rxgem.transport._drivers`) makes the connections and feeds
:class:`ExchangeMachine` what happens on them; the machine says what to send, what to let
through, and what to do when a connection ends:

.. code::

    request = machine.connect()            # the request to send now
    machine.response(status, headers)      # its answer's head
    out = machine.data(chunk)              # each piece of its body: the bytes to emit
    if machine.stopped: ...                # stop reading (and close the connection)
    outcome = machine.end()                # the body ended, or
    outcome = machine.transport_error(exc) # the connection failed (an httpx.HTTPError)

    Done()                       the stream is over: complete
    Retry(delay)                 connect again after ``delay`` seconds (RetryPolicy)
    Resume(delay, last_event_id) read the stream again after ``delay``, from that event
    Fail(error)                  the stream's error (a typed rxgem error)

What differs between upstream APIs is an :class:`ExchangeStrategy` the machine is given:
how the body is cut into what goes out (a :class:`Framer`), whether the body says when the
stream is over, and how to read a stream the upstream kept again. The machine owns the rest:

- Retries: while nothing went out and the upstream kept nothing to resume from, an answer
  or a failure the :class:`~rxgem.transport.RetryPolicy` retries is tried again after its
  delay; once anything went out, never.
- Resumption: once the framer learned the id of a stream the upstream keeps (and
  ``stored``), a cut (a failure, a retryable status, a body that ends before it said done)
  reads it again from the last whole event, bounded by ``resume`` reconnections in a row
  without a new event and ``max_resumes`` in all, the first at once but for a jitter, then
  with backoff. The framer drops an event the upstream repeats.
- An error answer's body is read up to :data:`MAX_ANSWER_BYTES`: enough for Google's error
  object, bounded whatever is sent.

Like h11's connection, the machine refuses a call out of order (``RuntimeError``), and once
it said ``Done`` or ``Fail`` it takes nothing more.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

import httpx
import msgspec

from ..core import GeminiAPIError, GeminiTransportError, TruncatedStreamError
from ._cassette import Upstream
from ._http import RetryPolicy, http_error, transport_error

__all__ = [
    "DEFAULT_MAX_RESUMES",
    "MAX_ANSWER_BYTES",
    "Done",
    "ExchangeMachine",
    "ExchangeStrategy",
    "Fail",
    "Framer",
    "Outcome",
    "Request",
    "Resume",
    "Retry",
    "Target",
]

DEFAULT_MAX_RESUMES: Final = 32
"""How many reconnections in all one stream may make (each after at least one new event)."""
MAX_ANSWER_BYTES: Final = 1024 * 1024
"""The most of an error answer's body read: Google's error objects are a few KB."""
_RESUME_BACKOFF: Final = 0.25
_RESUME_MAX_BACKOFF: Final = 4.0
_RESUME_STATUSES: Final = frozenset({429, 500, 502, 503, 504})


class Request(NamedTuple):
    """One connection's request."""

    method: str
    url: str
    content: bytes | None
    headers: Mapping[str, str]
    params: Mapping[str, str]


class Target(NamedTuple):
    """What one stream asks the upstream for, the same on every connection: ``POST`` of
    ``body`` to ``url`` (a dict is encoded at the first connection), ``base_url`` for the
    requests that read a kept stream again."""

    url: str
    headers: Mapping[str, str]
    body: bytes | Mapping[str, Any]
    base_url: str | None = None


class Framer(Protocol):
    """Cuts a body into what goes out, and learns where the stream could be resumed."""

    stream_id: str | None
    """The id of the stream the upstream keeps, once known: reading it again resumes."""

    @property
    def events(self) -> int:
        """What went out so far (chunks, or whole events): nothing is retried after any."""

    @property
    def failure(self) -> Exception | None:
        """Set when the stream must stop here (after what the last feed returned)."""

    @property
    def finished(self) -> bool:
        """The body said the stream is over."""

    @property
    def last_event_id(self) -> str | None:
        """The id of the last whole event that went out."""

    def feed(self, chunk: bytes) -> bytes: ...

    def restart(self) -> None: ...


class ExchangeStrategy(Protocol):
    """What differs between upstream APIs, for the machine (no state of a stream's own)."""

    @property
    def kind(self) -> Upstream:
        """The upstream as a cassette names it."""

    @property
    def label(self) -> str:
        """The API's name in messages."""

    @property
    def says_done(self) -> bool:
        """Whether the body says when the stream is over; if not, its end is."""

    def framer(self, max_bytes: int | None) -> Framer:
        """A new framer for one stream."""

    def reread(self, target: Target, stream_id: str, last_event_id: str | None) -> Request:
        """The request that reads the kept stream ``stream_id`` again, after that event."""


@dataclass(frozen=True, slots=True)
class Done:
    """The stream is over."""


@dataclass(frozen=True, slots=True)
class Retry:
    """Send the request again after ``delay`` seconds (nothing went out yet)."""

    delay: float
    error: Exception


@dataclass(frozen=True, slots=True)
class Resume:
    """Read the kept stream again after ``delay`` seconds, from ``last_event_id`` on."""

    delay: float
    last_event_id: str | None
    error: Exception


@dataclass(frozen=True, slots=True)
class Fail:
    """The stream ends with ``error``."""

    error: Exception


Outcome = Done | Retry | Resume | Fail

_IDLE: Final = "idle"  # a request may be made
_SENT: Final = "sent"  # awaiting the answer's head
_BODY: Final = "body"  # reading a 200 body
_ANSWER: Final = "answer"  # reading an error answer
_DONE: Final = "done"
_FAILED: Final = "failed"


def _not_resumable(error: Exception, why: str) -> Exception:
    """``error`` with why the stream was not resumed added to its message."""
    if isinstance(error, GeminiTransportError):
        return GeminiTransportError(f"{error} (not resumed: {why})", cause=error.cause)
    if isinstance(error, TruncatedStreamError):
        return TruncatedStreamError(f"{error} (not resumed: {why})")
    return error


class ExchangeMachine:
    """One stream's connections and the decisions between them.

    Args:
        strategy: what differs between upstream APIs.
        target: the request that creates the stream.
        policy: retries before anything went out (``None``: none).
        resume: reconnections in a row without a new event that may resume a cut stream.
        max_resumes: reconnections in all.
        max_bytes: the framer's limit (the longest line, or event).
        stored: whether the upstream keeps the stream (an Interactions body's ``store``).
        stream_id: read this kept stream from its start instead of creating one.
        jitter: a number in [0, 1) per resumption's wait.
    """

    def __init__(
        self,
        strategy: ExchangeStrategy,
        target: Target,
        *,
        policy: RetryPolicy | None = None,
        resume: int = 0,
        max_resumes: int = DEFAULT_MAX_RESUMES,
        max_bytes: int | None = None,
        stored: bool = True,
        stream_id: str | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.strategy = strategy
        self.target = target
        self.policy = policy
        self.resume = resume
        self.max_resumes = max_resumes
        self.stored = stored
        self.jitter = jitter
        self.framer = strategy.framer(max_bytes)
        if stream_id is not None:
            self.framer.stream_id = stream_id
        self.state = _IDLE
        self.request: Request | None = None
        """The request of the connection in progress (or the last one)."""
        self.stopped = False
        """Stop reading this body: the framer failed, or an error answer is long enough."""
        self.whole = False
        """The last answer was read to its end (the stream's, or an error answer's)."""
        self.attempt = 0  # retries of the create
        self.failures = 0  # reconnections in a row without a new event
        self.seen = 0  # what had gone out when the last connection started
        self.resumes = 0  # reconnections so far
        self._content: bytes | None = None
        self._head: tuple[int, Mapping[str, str], str] = (0, {}, "")
        self._answer = bytearray()

    @property
    def complete(self) -> bool:
        """Whether the answer of this connection is whole: read to its end, or the stream
        said it is over (a consumer may stop reading there)."""
        return self.whole or self.framer.finished

    def _expect(self, *states: str) -> None:
        if self.state not in states:
            raise RuntimeError(f"the exchange cannot do that now: it is {self.state}")

    def connect(self) -> Request:
        """The request to send now: the create, or the reading again of a kept stream."""
        self._expect(_IDLE)
        framer = self.framer
        framer.restart()
        self.seen = framer.events
        self.stopped = self.whole = False
        if framer.stream_id is None:
            target = self.target
            content = self._content
            if content is None:
                body = target.body
                content = body if isinstance(body, bytes) else msgspec.json.encode(body)
                self._content = content
            request = Request("POST", target.url, content, target.headers, {})
        else:
            request = self.strategy.reread(self.target, framer.stream_id, framer.last_event_id)
        self.request = request
        self.state = _SENT
        return request

    def response(self, status: int, headers: Mapping[str, str], reason: str = "") -> None:
        """The answer's head: a 200 body streams, any other is an error answer."""
        self._expect(_SENT)
        if status == 200:
            self.state = _BODY
            return
        self.state = _ANSWER
        self._head = (status, headers, reason)
        self._answer = bytearray()

    def data(self, chunk: bytes) -> bytes:
        """A piece of the body: the bytes to emit (``b""`` for none). Check :attr:`stopped`
        after each."""
        if self.state is _BODY:
            framer = self.framer
            out = framer.feed(chunk)
            if framer.failure is not None:
                self.stopped = True
            return out
        self._expect(_ANSWER)
        answer = self._answer
        answer += chunk[: MAX_ANSWER_BYTES - len(answer)]
        if len(answer) >= MAX_ANSWER_BYTES:
            self.stopped = True
        return b""

    def end(self) -> Outcome:
        """The body ended (or the driver stopped reading it, :attr:`stopped`)."""
        self._expect(_BODY, _ANSWER)
        if self.state is _ANSWER:
            self.whole = not self.stopped
            status, headers, reason = self._head
            answer, self._answer = bytes(self._answer), bytearray()
            return self._cut(http_error(status, headers, answer, reason))
        framer = self.framer
        if framer.failure is not None:
            return self._fail(framer.failure)
        if framer.finished or not self.strategy.says_done:
            self.whole = True
            self.state = _DONE
            return Done()
        return self._cut(None)

    def transport_error(self, exc: httpx.HTTPError) -> Outcome:
        """The connection failed (before the head, or while the body was read)."""
        self._expect(_SENT, _BODY, _ANSWER)
        assert self.request is not None
        if self.state is _BODY and self.framer.finished and self.strategy.says_done:
            self.state = _DONE  # the stream said it is over: what comes after is moot
            return Done()
        return self._cut(transport_error(exc, self.request.url))

    def _fail(self, error: Exception) -> Fail:
        self.state = _FAILED
        return Fail(error)

    def _cut(self, error: Exception | None) -> Outcome:
        """A connection ended without the end of the stream (``error`` is None for a body
        that just stopped): try again, or fail."""
        framer = self.framer
        if error is None:
            where = f" after {framer.events} events" if framer.events else ""
            label = self.strategy.label
            error = TruncatedStreamError(f"the {label} stream ended{where} before it said done")
        if framer.stream_id is None:  # nothing kept: the create, retried by the policy
            if framer.events or self.policy is None:
                return self._fail(error)
            delay = self.policy.delay(self.attempt, error)
            self.attempt += 1
            if delay is None:
                return self._fail(error)
            self.state = _IDLE
            return Retry(delay, error)
        if not self.stored:
            return self._fail(_not_resumable(error, "store is false, so Google kept nothing"))
        if isinstance(error, GeminiAPIError) and error.http_status not in _RESUME_STATUSES:
            return self._fail(error)
        self.failures = 0 if framer.events > self.seen else self.failures + 1
        if self.failures >= self.resume:
            why = f"{self.resume} reconnections in a row failed" if self.resume else "resume=0"
            return self._fail(_not_resumable(error, why))
        if self.resumes >= self.max_resumes:
            why = f"max_resumes={self.max_resumes} reconnections made"
            return self._fail(_not_resumable(error, why))
        self.resumes += 1
        # after a new event: at once but for a jitter of up to the first backoff; then
        # backoff doubling from it, up to its cap, half of it jittered
        if self.failures == 0:
            delay = _RESUME_BACKOFF * self.jitter()
        else:
            wait = min(_RESUME_MAX_BACKOFF, _RESUME_BACKOFF * 2 ** (self.failures - 1))
            delay = wait / 2 + wait / 2 * self.jitter()
        self.state = _IDLE
        return Resume(delay, framer.last_event_id, error)
