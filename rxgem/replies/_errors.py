"""Errors as OpenAI clients expect them, sans-IO: an exception in, an :class:`ErrorReply` out.

The body is ``{"error": {"message", "type", "param", "code"}}``; the status, type, code,
param and message are the one vocabulary of :func:`rxgem.core.openai_error` (its table),
shared with the pipeline's own error frames and failed responses; the headers tell the
``openai`` SDK when (``Retry-After``, ``retry-after-ms``) and whether
(``x-should-retry: false``: a client's mistake, a 400/401/403/404 from Gemini, a daily
quota) to retry. What Gemini said is scrubbed by :func:`scrubber`: the secrets it is given
removed and the upstream's address hidden (:func:`hide_upstream`); the same scrubber is
the pipeline's ``scrub`` option, so a failed response is built scrubbed, never edited
after. The full detail goes to the server's log only.

This is the one vocabulary of every route (chat streamed and not, Responses streamed and
not, the stored record of a failed response, the model routes). A request refused before
its answer began raises :class:`Refusal` with one of the constructors below (one per kind
of refusal); the app's one exception handler answers it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote, urlsplit

import msgspec

from ..core import MissingCredentialsError
from ..core.openai import OpenAIError, openai_error, type_of

__all__ = [
    "ErrorReply",
    "Refusal",
    "bad_request",
    "body_timeout",
    "busy",
    "error_reply",
    "head_too_large",
    "hide_upstream",
    "http_reply",
    "internal_error",
    "misdirected",
    "not_found",
    "not_json",
    "redact",
    "scrubber",
    "shutting_down",
    "store_unavailable",
    "too_large",
    "unauthorized",
]

REDACTED: Final = "[redacted]"
HIDDEN: Final = "[upstream]"
"""What stands for the upstream's address (URL, host, path, project, location)."""

# the characters of a URL or path; the last one is not a punctuation mark ending a sentence
_TAIL: Final = r"""(?:[^\s"'<>`,;()]*[^\s"'<>`,;().:!?])?"""
_URL: Final = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://" + _TAIL)
# an absolute path: a slash that does not follow a word, a dot, a colon, a slash or a tag
_PATH: Final = re.compile(r"(?<![\w.:/<-])/[\w.~%-]" + _TAIL)
_VERTEX_NAMES: Final = re.compile(r"/(?:projects|locations)/([^/]+)")
# a Google resource name's project or location: the server's own, whichever the upstream
_RESOURCE_NAMES: Final = re.compile(r"\b(projects|locations)/" + _TAIL.replace("[^\\s", "[^/\\s"))


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
        return msgspec.json.encode(self.body())

    def frame(self) -> bytes:
        """The body as the SSE frame a chat stream that already started ends with,
        instead of ``data: [DONE]``."""
        return b"data: " + self.json() + b"\n\n"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of a secret replaced by ``[redacted]``."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _address_terms(upstream: str) -> list[str]:
    """The parts of the upstream's base URL that name where it is: host and port, host,
    and a Vertex AI project and location (longest first)."""
    split = urlsplit(upstream)
    terms = {split.netloc, split.hostname or ""}
    terms.update(unquote(name) for name in _VERTEX_NAMES.findall(split.path))
    return sorted((t for t in terms if t), key=len, reverse=True)


def hide_upstream(text: str, upstream: str | None) -> str:
    """``text`` (from Gemini, or about it) without the upstream's address.

    Every URL on the upstream's host, every absolute path, the project and location of
    a resource name (``projects/…``, ``locations/…``), and the upstream's host (with
    its port), Vertex project and location become ``[upstream]``. Other URLs
    (Google's documentation links) stay. Each pattern is a single pass over ``text``.
    """
    if not upstream:
        return text
    terms = _address_terms(upstream)
    lowered = [t.lower() for t in terms]

    def url(match: re.Match[str]) -> str:
        found = match.group(0).lower()
        return HIDDEN if any(t in found for t in lowered) else match.group(0)

    text = _PATH.sub(HIDDEN, _URL.sub(url, text))
    text = _RESOURCE_NAMES.sub(rf"\1/{HIDDEN}", text)
    if terms:
        names = "|".join(re.escape(t) for t in terms)
        text = re.sub(rf"(?<![\w.-])(?:{names})(?![\w-])", HIDDEN, text, flags=re.IGNORECASE)
    return text


def scrubber(secrets: Iterable[str] = (), upstream: str | None = None) -> Callable[[str], str]:
    """The ``scrub`` of what Gemini said, for :func:`~rxgem.core.openai_error` and the
    pipeline's ``scrub`` option: the upstream's address hidden (:func:`hide_upstream`),
    then every secret :func:`redact`-ed."""
    kept = tuple(s for s in secrets if s)

    def scrub(text: str) -> str:
        return redact(hide_upstream(text, upstream), kept)

    return scrub


def _retry_headers(retry_after: float | None) -> list[tuple[str, str]]:
    if retry_after is None or not math.isfinite(retry_after):
        return []
    seconds = max(0.0, retry_after)
    return [
        ("retry-after", str(math.ceil(seconds))),
        ("retry-after-ms", str(round(seconds * 1000))),
    ]


def reply_of(mapped: OpenAIError) -> ErrorReply:
    """``mapped`` as an HTTP reply: its status and object, and the headers that tell the
    ``openai`` SDK when (``retry-after``, ``retry-after-ms``) and whether
    (``x-should-retry: false``) to retry."""
    headers = _retry_headers(mapped.retry_after)
    if mapped.final:
        headers.append(("x-should-retry", "false"))
    return ErrorReply(
        mapped.status, mapped.type, mapped.message, mapped.param, mapped.code, tuple(headers)
    )


def error_reply(
    error: BaseException, secrets: Iterable[str] = (), upstream: str | None = None
) -> ErrorReply:
    """The reply for an error of any route, in the one vocabulary of
    :func:`~rxgem.core.openai_error`: what Gemini said is scrubbed of ``secrets`` and of
    ``upstream`` (the base URL)'s address (:func:`scrubber`)."""
    mapped = openai_error(error, scrubber(secrets, upstream))
    if isinstance(error, MissingCredentialsError):
        return unauthorized(mapped.message)
    return reply_of(mapped)


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


def http_reply(status: int, message: str, path: str = "") -> ErrorReply:
    """A reply for an HTTP-level refusal (unknown route, wrong method, body too large);
    a 404 for ``path`` says how to reach the route a client most likely meant."""
    code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(status)
    hint = _unknown_path_hint(path) if status in (404, 405) else ""
    return ErrorReply(status, type_of(status), f"{message}: {hint}" if hint else message, code=code)


_OPENAI_PATHS: Final = ("/chat/completions", "/responses", "/models")
_GEMINI_PATH: Final = re.compile(r"/models/[^/]+:\w*[gG]enerateContent$|^/v1beta/")
_ENDPOINT: Final = re.compile(r"(?:/chat/completions|/responses|/models)(?:/[^/]*){0,2}")
"""What an OpenAI client adds to its base URL: ``/chat/completions``,
``/responses[/ID[/cancel]]``, ``/models[/ID]``."""
_BASE: Final = "base_url='http://HOST:PORT/v1'"


def _client_base(path: str) -> tuple[str, str] | None:
    """The base URL's path and the endpoint an OpenAI client added, for ``path``: the
    endpoint taken as the last one the path holds (a base URL may end in one itself)."""
    for start in sorted((path.rfind(known) for known in _OPENAI_PATHS), reverse=True):
        if start >= 0 and _ENDPOINT.fullmatch(path, start):
            return path[:start], path[start:]
    return None


def _unknown_path_hint(path: str) -> str:
    """What a client meant by an unknown ``path``: an OpenAI path under a base URL that
    lacks ``/v1``, has another prefix or ends in an endpoint itself, a Gemini path (a
    Gemini client pointed at this server), or the inspector on a server without it."""
    if _GEMINI_PATH.search(path):
        return (
            "this is an OpenAI-compatible server (rxgem serve), not Gemini's API: call it with"
            " an OpenAI client (POST /v1/chat/completions or /v1/responses)"
        )
    if path == "/inspect" or path.startswith("/inspect/"):
        return (
            "the live inspector is off on this server: start it with rxgem serve --inspect"
            " (or RXGEM_INSPECT=1), then open /inspect"
        )
    split = _client_base(path)
    if split is None:
        return ""
    base, endpoint = split
    if base == "":
        return (
            f"this server's OpenAI routes are under /v1 (/v1{endpoint[:40]}):"
            f" add /v1 to the client's base URL, e.g. {_BASE}"
        )
    if base == "/v1":  # a route's own path, refused for another reason (a method, an id)
        return ""
    if _client_base(base) is not None:
        return (
            f"the client's base URL ends in an endpoint ({base[:60]}): give it the base URL"
            f" alone, e.g. {_BASE}; the client adds {endpoint[:40]} itself"
        )
    return (
        f"this server's OpenAI routes are under /v1, not {base[:40]}: set the client's base"
        f" URL to end in /v1, e.g. {_BASE}"
    )


class Refusal(Exception):
    """A request refused before its answer began: raised anywhere on a route's path,
    answered with :attr:`reply` by the app's one exception handler."""

    def __init__(self, reply: ErrorReply) -> None:
        super().__init__(reply.message)
        self.reply = reply


_NO_RETRY: Final = (("x-should-retry", "false"),)


def bad_request(message: str, param: str | None = None, code: str | None = None) -> ErrorReply:
    """400 for a request the client got wrong (retrying cannot help)."""
    return ErrorReply(400, "invalid_request_error", message, param, code, _NO_RETRY)


def not_found(message: str, param: str | None = None, code: str = "not_found") -> ErrorReply:
    """404 for a resource (a model, a stored response) this client cannot see, whether
    it does not exist or is another client's."""
    return ErrorReply(404, "invalid_request_error", message, param, code, _NO_RETRY)


def not_json() -> ErrorReply:
    """415 for a body not sent as JSON (a page's "simple" request)."""
    return ErrorReply(
        415,
        "invalid_request_error",
        "the request body must be JSON, sent with the header Content-Type: application/json"
        " (with curl: -H 'Content-Type: application/json')",
        code="unsupported_media_type",
        headers=(*_NO_RETRY, ("connection", "close")),
    )


def too_large(limit: int) -> ErrorReply:
    """413 for a body over the server's ``max_request_bytes``."""
    return http_reply(
        413, f"the request body is larger than {limit} bytes (the server's max_request_bytes)"
    )


def body_timeout(seconds: float) -> ErrorReply:
    """408 for a body that did not arrive within the server's ``body_timeout``."""
    return ErrorReply(
        408,
        "invalid_request_error",
        f"the request body did not arrive within {seconds:g} s (the server's body_timeout)",
        code="request_timeout",
        headers=(("connection", "close"),),
    )


def head_too_large(limit: int) -> ErrorReply:
    """431 for a request head over the server's ``max_head_bytes``."""
    return ErrorReply(
        431,
        "invalid_request_error",
        f"the request head (request line and headers) is larger than {limit} bytes",
        code="request_header_fields_too_large",
    )


def misdirected(message: str) -> ErrorReply:
    """421 for a ``Host`` the server does not answer."""
    return ErrorReply(
        421, "invalid_request_error", message, code="misdirected_request", headers=_NO_RETRY
    )


def busy(
    message: str, code: str | None = "server_busy", retry_after: float | None = None
) -> ErrorReply:
    """503 for a server at one of its limits (the client retries, after
    ``retry_after`` seconds when given)."""
    headers = tuple(_retry_headers(retry_after))
    return ErrorReply(503, "server_error", message, code=code, headers=headers)


def shutting_down() -> ErrorReply:
    """503 for a request the drain ended."""
    return busy("the server is shutting down; retry", "server_shutdown")


def store_unavailable(error: BaseException) -> ErrorReply:
    """503 for a response store that failed (named by its kind only)."""
    return ErrorReply(
        503,
        "server_error",
        f"the response store failed ({type(error).__name__}); retry",
        code="store_unavailable",
        headers=(("retry-after", "1"),),
    )
