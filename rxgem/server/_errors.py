"""Errors as OpenAI clients expect them, sans-IO: an exception in, an :class:`ErrorReply` out.

The body is ``{"error": {"message", "type", "param", "code"}}``; the status is mapped
from Gemini's; the headers tell the ``openai`` SDK when (``Retry-After``,
``retry-after-ms``) and whether (``x-should-retry``) to retry. Every message is
scrubbed of the secrets it is given.

=========================================== ====== ======================= ==============
What happened                                status type                    x-should-retry
=========================================== ====== ======================= ==============
request not translatable (InvalidRequestError) 400  invalid_request_error   false
Gemini 400 (INVALID_ARGUMENT, ...)           400    invalid_request_error   false
Gemini 401 / bad client token                401    authentication_error    false
Gemini 403                                   403    permission_error        false
Gemini 404                                   404    not_found_error         false
Gemini 429                                   429    rate_limit_error        false if a daily
                                                    (+ Retry-After)         quota, else unset
Gemini 500 / 503 / 504                       same   server_error            unset (retried)
connection to Gemini failed                  502    server_error            unset
timeout toward Gemini                        504    server_error            unset
malformed or truncated Gemini stream         502    server_error            unset
a bug in the server                          500    api_error               unset
=========================================== ====== ======================= ==============
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import httpx

from ..core import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MalformedStreamError,
    MissingCredentialsError,
    TruncatedStreamError,
)

__all__ = [
    "ErrorReply",
    "error_reply",
    "http_reply",
    "internal_error",
    "is_daily_quota",
    "redact",
    "unauthorized",
]

REDACTED: Final = "[redacted]"

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

_NO_RETRY_STATUSES: Final = frozenset({400, 401, 403, 404, 413, 422})
_TIMEOUTS: Final = (httpx.TimeoutException,)


@dataclass(frozen=True)
class ErrorReply:
    """An OpenAI-style error: the HTTP status, the error object, the extra headers."""

    status: int
    type: str
    message: str
    param: str | None = None
    code: str | None = None
    headers: tuple[tuple[str, str], ...] = ()

    def body(self) -> dict[str, Any]:
        """``{"error": {"message", "type", "param", "code"}}``."""
        error = {"message": self.message, "type": self.type, "param": self.param}
        return {"error": {**error, "code": self.code}}

    def json(self) -> bytes:
        """The body as compact UTF-8 JSON."""
        return json.dumps(self.body(), ensure_ascii=False, separators=(",", ":")).encode()

    def frame(self) -> bytes:
        """The body as the SSE frame a stream that already started ends with."""
        return b"data: " + self.json() + b"\n\n"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of a secret replaced by ``[redacted]``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


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


def _type_of(status: int) -> str:
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


def _retry_headers(retry_after: float | None) -> list[tuple[str, str]]:
    if retry_after is None or not math.isfinite(retry_after):
        return []
    seconds = max(0.0, retry_after)
    return [
        ("retry-after", str(math.ceil(seconds))),
        ("retry-after-ms", str(round(seconds * 1000))),
    ]


def _gemini_reply(error: GeminiAPIError, secrets: Iterable[str]) -> ErrorReply:
    status = _status_of(error)
    headers = _retry_headers(error.retry_after) if status in (429, 503) else []
    if status in _NO_RETRY_STATUSES or (status == 429 and is_daily_quota(error.details)):
        headers.append(("x-should-retry", "false"))
    return ErrorReply(
        status,
        _type_of(status),
        redact(error.message or "Gemini reported an error", secrets),
        code=error.status.lower() if error.status else None,
        headers=tuple(headers),
    )


def error_reply(error: BaseException, secrets: Iterable[str] = ()) -> ErrorReply:
    """The reply for an error of a chat completion or a model lookup.

    ``secrets`` are scrubbed from the message. An exception that is not rxgem's is
    a bug: a generic 500 that says nothing about it.
    """
    if isinstance(error, InvalidRequestError):
        return ErrorReply(
            400,
            "invalid_request_error",
            redact(error.reason, secrets),
            param=error.where or None,
            headers=(("x-should-retry", "false"),),
        )
    if isinstance(error, GeminiAPIError):
        return _gemini_reply(error, secrets)
    if isinstance(error, GeminiTransportError):
        cause = error.cause
        kind = type(cause).__name__ if cause is not None else "connection error"
        if isinstance(cause, _TIMEOUTS):
            return ErrorReply(
                504, "server_error", f"Gemini did not answer in time ({kind})", code="timeout"
            )
        return ErrorReply(
            502, "server_error", f"the connection to Gemini failed ({kind})", code="bad_gateway"
        )
    if isinstance(error, MalformedStreamError | TruncatedStreamError):
        return ErrorReply(
            502,
            "server_error",
            redact(f"Gemini's response could not be read: {error}", secrets),
            code="bad_upstream_response",
        )
    if isinstance(error, MissingCredentialsError):
        return unauthorized("no Gemini credentials for this request")
    return internal_error()


def unauthorized(message: str) -> ErrorReply:
    """401 for a client without a valid token."""
    return ErrorReply(
        401,
        "authentication_error",
        message,
        code="invalid_api_key",
        headers=(("www-authenticate", "Bearer"), ("x-should-retry", "false")),
    )


def internal_error() -> ErrorReply:
    """500 for a bug in the server (the details go to the log, never to the client)."""
    return ErrorReply(500, "api_error", "the server failed to handle the request")


def http_reply(status: int, message: str) -> ErrorReply:
    """A reply for an HTTP-level refusal (unknown route, wrong method, body too large)."""
    code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(status)
    return ErrorReply(status, _type_of(status), message, code=code)
