"""The exceptions rxgem raises, as one tree.

Every error a stream can end with is an :class:`RxGemError`, so one ``except``
clause catches them all::

    RxGemError
    ├── GeminiAPIError          Gemini reported an error: a non-200 HTTP response, or
    │                           an ``{"error": {...}}`` payload in the stream (framed
    │                           as ``data:`` or raw, possibly in a one-element array).
    ├── GeminiTransportError    the connection failed (connect error, timeout, reset
    │                           mid-body); wraps the ``httpx`` exception.
    ├── InvalidRequestError     an OpenAI request that cannot become a Gemini request
    │                           (an unknown role or field, unparseable tool
    │                           arguments, a schema cycle); names where, before
    │                           anything is sent.
    ├── MissingCredentialsError no API key or access token was given or found in the
    │                           environment (raised at call time, not in the stream).
    ├── MalformedStreamError    the bytes are not a valid Gemini stream: invalid
    │                           JSON, a payload of the wrong shape, a known field
    │                           with the wrong type, nesting too deep, an orphan or
    │                           absurd ``partialArgs`` part, a body with no event,
    │                           JSON that is not Gemini's (an OpenAI chunk fed back).
    └── TruncatedStreamError    the stream ended before Gemini finished: a candidate
                                that produced output never got a ``finishReason``,
                                or no response arrived at all.

Errors end the Observable with ``on_error``; everything valid that arrived before
the error has already been delivered (pending tool calls are flushed first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "GeminiAPIError",
    "GeminiTransportError",
    "InvalidRequestError",
    "MalformedStreamError",
    "MissingCredentialsError",
    "RxGemError",
    "TruncatedStreamError",
]

_SNIPPET = 80


def snippet(text: str | bytes, limit: int = _SNIPPET) -> str:
    """A short, printable excerpt of ``text`` for error messages."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return repr(text)


class RxGemError(Exception):
    """Base class of every error rxgem raises for a stream.

    Attributes:
        chunks: when :meth:`rxgem.Converter.close` (or ``feed``) raised it, the valid
            chunks that call still owed (a truncated stream's tool calls, say):
            deliver them, then handle the error. Empty otherwise. (The Responses events
            of a ``ResponsesConverter``, the items of ``interaction_items``.)
    """

    chunks: Sequence[Any] = ()


class GeminiAPIError(RxGemError):
    """Gemini answered with an error object.

    Attributes:
        code: Google's numeric code (usually the HTTP status), if given.
        status: Google's status name, e.g. ``"RESOURCE_EXHAUSTED"``.
        message: the human-readable message.
        details: the ``details`` list (``google.rpc`` messages), possibly empty.
        event: the 1-based number of the SSE event that carried the error, when
            the error arrived inside a stream.
        http_status: the HTTP status code, when the error was a non-200 response.
        retry_after: seconds to wait before retrying, from a ``Retry-After`` header
            or a ``google.rpc.RetryInfo`` detail, when Gemini said so.
    """

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        status: str | None = None,
        details: list[Any] | None = None,
        event: int | None = None,
        http_status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.message = message
        self.code = code
        self.status = status
        self.details: list[Any] = list(details or [])
        self.event = event
        self.http_status = http_status
        self.retry_after = retry_after
        head = " ".join(str(p) for p in (code, status) if p is not None)
        where = f" (event {event})" if event is not None else ""
        text = f"Gemini API error{' ' + head if head else ''}{where}: {message}"
        super().__init__(text)


class MalformedStreamError(RxGemError):
    """The stream is not a valid Gemini ``streamGenerateContent`` stream.

    Attributes:
        event: the 1-based number of the SSE event (or response) at fault.
        snippet: a short excerpt of the offending payload.
        reason: what was wrong with it.
    """

    def __init__(self, reason: str, *, event: int | None = None, snippet: str = "") -> None:
        self.reason = reason
        self.event = event
        self.snippet = snippet
        where = f" at event {event}" if event is not None else ""
        tail = f": {snippet}" if snippet else ""
        super().__init__(f"malformed Gemini stream{where}: {reason}{tail}")


class TruncatedStreamError(RxGemError):
    """The stream ended before Gemini said it had finished.

    Attributes:
        candidates: the candidate indexes that produced output but never got a
            ``finishReason`` (empty when no response arrived at all).
    """

    def __init__(self, message: str, *, candidates: tuple[int, ...] = ()) -> None:
        self.candidates = candidates
        super().__init__(message)


class GeminiTransportError(RxGemError):
    """The HTTP exchange with Gemini failed: connect error, timeout, connection reset.

    Everything that had arrived before the failure has been emitted. The ``httpx``
    exception is ``cause`` (and ``__cause__``).
    """

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        self.cause = cause
        super().__init__(message)
        self.__cause__ = cause


class MissingCredentialsError(RxGemError):
    """No API key (argument, ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``) and no access token."""


class InvalidRequestError(RxGemError, ValueError):
    """An OpenAI Chat Completions request that cannot be translated into a Gemini request.

    Raised by the request translation, before anything is sent.

    Attributes:
        where: the path of the offending value in the OpenAI request, e.g.
            ``"messages[3].tool_calls[0].function.arguments"`` (``""`` for the
            request as a whole).
        reason: what is wrong with it.
    """

    def __init__(self, reason: str, *, where: str = "") -> None:
        self.reason = reason
        self.where = where
        super().__init__(f"{where}: {reason}" if where else reason)
