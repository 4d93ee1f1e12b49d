"""rxgem's exceptions as OpenAI's error objects: the one mapping, sans-IO.

Every output says an error with it: a chat stream's last ``data: {"error": ...}`` frame,
a Responses stream's ``error`` event and a failed response's ``error``, and the server's
HTTP error answers (:mod:`rxgem.replies` adds the headers). An exception in, an
:class:`OpenAIError` out: the HTTP status, OpenAI's ``type``, a ``code``, the ``param``
and the message.

=============================================== ====== ===================== =====================
What happened                                   status type                  code
=============================================== ====== ===================== =====================
request not translatable (InvalidRequestError)  400    invalid_request_error ``null`` (``param``:
                                                                             where)
Gemini's error (GeminiAPIError): 400            400    invalid_request_error Google's status in
                                 401 / 403      same   authentication_error  lower case
                                                       / permission_error    (``invalid_argument``,
                                 404            404    not_found_error       ``resource_exhausted``,
                                 429            429    rate_limit_error      ...), ``null``
                                 500 / 503 ...  same   server_error          without one
the connection to Gemini failed                 502    server_error          bad_gateway
a timeout toward Gemini                         504    server_error          timeout
a malformed or truncated Gemini stream          502    server_error          bad_upstream_response
no Gemini credentials (MissingCredentialsError) 401    authentication_error  invalid_api_key
anything else (a bug)                           500    api_error             ``null``
=============================================== ====== ===================== =====================

Gemini's status is the HTTP status it answered with, else the one its status name stands
for (an error inside a 200 stream), else its numeric code. A failed response's ``code``
is from the Responses API's fixed set (:attr:`OpenAIError.responses_code`).

The message is safe to show a client. What Gemini said (its message, why its stream could
not be read) goes through ``scrub``, the caller's (the server's removes its keys and the
upstream's address); a stream that cannot be read is described, never quoted; a failed
connection is named by its kind (``ConnectError``, ``ReadTimeout``), never by its URL; a
bug says nothing about itself. A request the client got wrong is answered in its own words,
bounded, and never scrubbed: no answer can then confirm a secret a client guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from .._errors import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    TruncatedStreamError,
)

__all__ = ["OpenAIError", "Scrub", "is_daily_quota", "openai_error", "type_of", "unscrubbed"]

Scrub = Callable[[str], str]
"""What a message from Gemini goes through before a client sees it."""

_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
}

# google.rpc.Code names → HTTP, for errors that came inside a 200 stream
_GOOGLE_STATUS: Final = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "UNIMPLEMENTED": 501,
    "INTERNAL": 500,
    "UNKNOWN": 500,
    "DATA_LOSS": 500,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
    "CANCELLED": 502,
}

_FINAL_STATUSES: Final = frozenset({400, 401, 403, 404, 413, 422})
"""Statuses a retry cannot change."""

RESPONSES_CODES: Final = frozenset(
    {
        "server_error",
        "rate_limit_exceeded",
        "invalid_prompt",
        "data_residency_mismatch",
        "bio_policy",
        "misalignment_policy_violation",
        "vector_store_timeout",
        "invalid_image",
        "invalid_image_format",
        "invalid_base64_image",
        "invalid_image_url",
        "image_too_large",
        "image_too_small",
        "image_parse_error",
        "image_content_policy_violation",
        "invalid_image_mode",
        "image_file_too_large",
        "unsupported_image_media_type",
        "empty_image_file",
        "failed_to_download_image",
        "image_file_not_found",
    }
)
"""The ``code`` values a Responses ``error`` object may have (the ``openai`` SDK's
``ResponseError.code``)."""

_MAX_MESSAGE: Final = 1000
_MAX_PARAM: Final = 256
INTERNAL_MESSAGE: Final = "the server failed to handle the request"


@dataclass(frozen=True, slots=True)
class OpenAIError:
    """An error in OpenAI's words.

    Attributes:
        status: the HTTP status an answer that had not started would have.
        type: OpenAI's error type (``invalid_request_error``, ``rate_limit_error``, ...).
        message: what a client is told (scrubbed).
        param: the request's field at fault, if any.
        code: the error's code, if any.
        retry_after: seconds Gemini asked to wait before a retry, if it did.
        final: whether a retry cannot help (a client's mistake, a daily quota).
    """

    status: int
    type: str
    message: str
    param: str | None = None
    code: str | None = None
    retry_after: float | None = None
    final: bool = False

    def body(self) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``: a chat error frame's and
        an HTTP error answer's JSON."""
        error = {"message": self.message, "type": self.type, "param": self.param}
        return {"error": {**error, "code": self.code}}

    @property
    def responses_code(self) -> str:
        """The ``code`` of a failed response's ``error``, which the Responses API takes
        from a fixed set: :attr:`code` when it is one of them, else
        ``rate_limit_exceeded`` for a 429 and ``server_error`` for the rest."""
        if self.code in RESPONSES_CODES:
            return self.code
        return "rate_limit_exceeded" if self.status == 429 else "server_error"


def is_daily_quota(details: Iterable[Any]) -> bool:
    """Whether Google's error details name a per-day quota (waiting minutes cannot help).

    Looks at the ``quotaId``/``quotaMetric`` of ``google.rpc.QuotaFailure`` violations
    (``GenerateRequestsPerDayPerProjectPerModel-FreeTier``, ...).
    """
    for detail in details:
        if not isinstance(detail, Mapping):
            continue
        if not str(detail.get("@type", "")).endswith("QuotaFailure"):
            continue
        for violation in detail.get("violations") or ():
            if not isinstance(violation, Mapping):
                continue
            names = f"{violation.get('quotaId', '')} {violation.get('quotaMetric', '')}".lower()
            if "perday" in names or "per_day" in names or "daily" in names:
                return True
    return False


def type_of(status: int) -> str:
    """OpenAI's error ``type`` for an HTTP ``status``."""
    if status >= 500:
        return "server_error"
    return _TYPES.get(status, "invalid_request_error")


def _status_of(error: GeminiAPIError) -> int:
    if error.http_status is not None and 400 <= error.http_status <= 599:
        return error.http_status
    if error.status in _GOOGLE_STATUS:
        return _GOOGLE_STATUS[error.status]
    if error.code is not None and 400 <= error.code <= 599 and error.code != 499:
        return error.code
    return 502


def _bounded(text: str, limit: int = _MAX_MESSAGE) -> str:
    """A message or ``param`` made of the client's text, cut at a fixed length."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _is_timeout(cause: BaseException | None) -> bool:
    """Whether the transport's exception is a timeout (``httpx.TimeoutException``,
    ``asyncio.TimeoutError``, ...), told by its classes' names: the core imports no
    HTTP library."""
    if cause is None:
        return False
    return isinstance(cause, TimeoutError) or any(
        "Timeout" in kind.__name__ for kind in type(cause).__mro__
    )


def _unreadable(error: MalformedStreamError | TruncatedStreamError) -> str:
    """What a client is told of a stream that could not be read: the reason, never the
    excerpt of what Gemini sent."""
    if isinstance(error, TruncatedStreamError):
        return f"Gemini's response could not be read: {error}"
    where = f" at event {error.event}" if error.event is not None else ""
    return f"Gemini's response could not be read: malformed stream{where}: {error.reason}"


def unscrubbed(text: str) -> str:
    """The default ``scrub``: ``text`` as it is."""
    return text


def openai_error(error: BaseException, scrub: Scrub | None = None) -> OpenAIError:
    """``error`` in OpenAI's words (the table above); what Gemini said goes through
    ``scrub`` (default: as it is)."""
    scrub = scrub or unscrubbed
    if isinstance(error, InvalidRequestError):
        # the client's own text (its field names and values, bounded and quoted where the
        # request is read): never compared with a secret, so no answer can confirm one
        param = _bounded(error.where, _MAX_PARAM) or None
        return OpenAIError(400, "invalid_request_error", _bounded(error.reason), param, final=True)
    if isinstance(error, GeminiAPIError):
        status = _status_of(error)
        final = status in _FINAL_STATUSES or (status == 429 and is_daily_quota(error.details))
        return OpenAIError(
            status,
            type_of(status),
            scrub(error.message or "Gemini reported an error"),
            code=error.status.lower() if error.status else None,
            retry_after=error.retry_after if status in (429, 503) else None,
            final=final,
        )
    if isinstance(error, GeminiTransportError):
        cause = error.cause
        kind = type(cause).__name__ if cause is not None else "connection error"
        if _is_timeout(cause):
            message = f"Gemini did not answer in time ({kind})"
            return OpenAIError(504, "server_error", message, code="timeout")
        message = f"the connection to Gemini failed ({kind})"
        return OpenAIError(502, "server_error", message, code="bad_gateway")
    if isinstance(error, MalformedStreamError | TruncatedStreamError):
        message = scrub(_unreadable(error))
        return OpenAIError(502, "server_error", message, code="bad_upstream_response")
    if isinstance(error, MissingCredentialsError):
        message = "no Gemini credentials for this request"
        return OpenAIError(401, "authentication_error", message, code="invalid_api_key", final=True)
    return OpenAIError(500, "api_error", INTERNAL_MESSAGE)
