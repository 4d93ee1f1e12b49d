"""Pure HTTP helpers of the transport: URLs, credentials, error bodies, retry decisions.

No I/O here: :mod:`rxgem.transport._exchange` does the requests.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx

from ..core import (
    GeminiAPIError,
    GeminiTransportError,
    InvalidRequestError,
    MissingCredentialsError,
)
from ..core.gemini import GeminiApi

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "RetryPolicy",
    "api_of",
    "http_error",
    "interactions_url",
    "is_google_interaction_id",
    "model_segment",
    "model_url",
    "resolve_headers",
    "stream_url",
    "transport_error",
]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
DEFAULT_TIMEOUT = httpx.Timeout(10.0, read=120.0)
_ENV_KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")

_VERTEX_HOST = "aiplatform.googleapis.com"

_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,199}")
"""A Gemini model id: one path segment under ``models/`` (letters, digits, ``. _ @ -``;
no ``/ ? # % :``, so a name can address nothing but a model)."""


@dataclass(frozen=True)
class RetryPolicy:
    """Retries for failures before the first byte of the body; never after.

    A request is retried when Gemini answers with one of ``statuses`` or the
    connection cannot be made, at most ``attempts - 1`` times, waiting
    ``backoff * 2**n`` seconds (at most ``max_backoff``), or the server's
    ``retry_after`` when it gave one (at most ``max_retry_after``; a longer
    requested wait is not retried but reported).
    """

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    statuses: frozenset[int] = field(default_factory=lambda: frozenset({429, 500, 503}))

    def delay(self, attempt: int, error: BaseException) -> float | None:
        """Seconds to wait before attempt ``attempt + 1``, or ``None`` not to retry."""
        if attempt + 1 >= self.attempts:
            return None
        if isinstance(error, GeminiAPIError):
            if error.http_status not in self.statuses:
                return None
            if error.retry_after is not None:
                return error.retry_after if error.retry_after <= self.max_retry_after else None
        elif not isinstance(error, GeminiTransportError) or not isinstance(
            error.cause, httpx.ConnectError | httpx.ConnectTimeout
        ):
            return None
        return float(min(self.max_backoff, self.backoff * 2**attempt))


def model_segment(model: str) -> str:
    """The model's path segment under ``{base_url}/models/``, checked and escaped.

    ``model`` is an id (``gemini-2.5-flash``) or a resource name with one leading
    ``models/``. Anything else (another ``/``, ``..``, a query, a fragment, an escape,
    a ``:method`` suffix) is refused, because the URL carries the server's credentials
    and must reach a model and nothing else.

    Raises:
        InvalidRequestError: ``model`` is not a model id (``where="model"``).
    """
    name = model.removeprefix("models/") if isinstance(model, str) else model
    if not isinstance(name, str) or _MODEL_ID.fullmatch(name) is None:
        raise InvalidRequestError(
            "not a model name: a model id (letters, digits and . _ @ -, at most 200),"
            " optionally after models/",
            where="model",
        )
    return quote(name, safe="@")


def api_of(base_url: str | None) -> GeminiApi:
    """The API behind ``base_url``: ``"vertex"`` for a host ending with
    ``aiplatform.googleapis.com``, else ``"gemini"`` (the default base URL's)."""
    host = urlsplit(base_url or DEFAULT_BASE_URL).hostname or ""
    return "vertex" if host.endswith(_VERTEX_HOST) else "gemini"


def model_url(base_url: str | None, model: str) -> str:
    """``{base_url}/models/{model}``, with :func:`model_segment`'s check."""
    return f"{(base_url or DEFAULT_BASE_URL).rstrip('/')}/models/{model_segment(model)}"


def stream_url(base_url: str | None, model: str) -> str:
    """``{base_url}/models/{model}:streamGenerateContent?alt=sse``.

    Raises:
        InvalidRequestError: ``model`` is not a model id (see :func:`model_segment`).
    """
    return f"{model_url(base_url, model)}:streamGenerateContent?alt=sse"


_INTERACTION_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._~=-]{0,1023}")
"""An interaction id: one path segment under ``interactions/`` (no ``/ ? # % :``)."""


_GOOGLE_INTERACTION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.=-]{0,255}")
"""An interaction id as Google gives them (``v1_`` and base64url): checked where one is
received, so that no id Google sends can address anything but its interaction."""


def is_google_interaction_id(value: object) -> bool:
    """Whether ``value`` (received from Google) is an interaction id Google would give:
    letters, digits and ``_ - . =``, at most 256, not starting with ``.``, ``-`` or ``=``."""
    return isinstance(value, str) and _GOOGLE_INTERACTION_ID.fullmatch(value) is not None


def interactions_url(base_url: str | None, interaction_id: str | None = None) -> str:
    """``{base_url}/interactions``, or ``{base_url}/interactions/{interaction_id}``.

    Raises:
        InvalidRequestError: ``interaction_id`` is not one path segment of the letters,
            digits and ``_ - . ~ =`` Google's ids are made of (``where="interaction_id"``).
    """
    root = f"{(base_url or DEFAULT_BASE_URL).rstrip('/')}/interactions"
    if interaction_id is None:
        return root
    if not isinstance(interaction_id, str) or not _INTERACTION_ID.fullmatch(interaction_id):
        raise InvalidRequestError("not an interaction id", where="interaction_id")
    return f"{root}/{quote(interaction_id, safe='=~')}"


def _check_secret(secret: str, what: str) -> None:
    """Refuse a credential a header cannot carry, without quoting it (httpx's error would)."""
    if not secret.isascii() or not secret.isprintable() or any(c.isspace() for c in secret):
        raise MissingCredentialsError(
            f"{what} has whitespace, control or non-ASCII characters (not shown); check for"
            " a stray newline or quote"
        )


def resolve_headers(
    api_key: str | None,
    access_token: str | None,
    headers: Mapping[str, str] | None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The request headers: credentials, JSON content type, and ``headers`` on top.

    The API key comes from ``api_key``, else ``GEMINI_API_KEY``, else
    ``GOOGLE_API_KEY``, and is sent as ``x-goog-api-key``; an ``access_token``
    (Vertex AI) is sent as a bearer token instead.
    """
    env = os.environ if environ is None else environ
    out = {"content-type": "application/json", "accept": "text/event-stream"}
    if access_token:
        _check_secret(access_token, "the access token")
        out["authorization"] = f"Bearer {access_token}"
    else:
        key = api_key or next((env[name] for name in _ENV_KEYS if env.get(name)), None)
        if not key:
            raise MissingCredentialsError(
                "no Gemini API key: pass api_key=..., or set GEMINI_API_KEY or GOOGLE_API_KEY"
                " (for Vertex AI, pass access_token=...)"
            )
        _check_secret(key, "the API key")
        out["x-goog-api-key"] = key
    out.update({k.lower(): v for k, v in (headers or {}).items()})
    return out


def _retry_after(headers: Mapping[str, str], details: list[Any]) -> float | None:
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            when = email.utils.parsedate_to_datetime(value) if value else None
            if when is not None:
                return max(0.0, when.timestamp() - time.time())
    for detail in details:
        if isinstance(detail, dict) and str(detail.get("@type", "")).endswith("RetryInfo"):
            match = _DURATION.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def http_error(
    status: int, headers: Mapping[str, str], body: bytes, reason: str = ""
) -> GeminiAPIError:
    """A :class:`GeminiAPIError` from a non-200 response.

    The body may be ``{"error": {...}}``, the same in a one-element array, or not
    JSON at all (then the message is the first 500 characters of its text).
    """
    try:
        data: Any = json.loads(body)
    except ValueError:
        data = None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        details = error.get("details")
        details = details if isinstance(details, list) else []
        code = error.get("code")
        return GeminiAPIError(
            str(error.get("message") or reason or "(no message)"),
            code=code if isinstance(code, int) else status,
            status=error.get("status") if isinstance(error.get("status"), str) else None,
            details=details,
            http_status=status,
            retry_after=_retry_after(headers, details),
        )
    text = body.decode("utf-8", "replace").strip()[:500]
    return GeminiAPIError(
        text or reason or f"HTTP {status}",
        code=status,
        status=reason.upper().replace(" ", "_") or None,
        http_status=status,
        retry_after=_retry_after(headers, []),
    )


def transport_error(exc: httpx.HTTPError, url: str) -> GeminiTransportError:
    kind = type(exc).__name__
    text = str(exc) or kind
    return GeminiTransportError(f"{kind} while streaming from {url}: {text}", cause=exc)
