"""The access log and the last-resort error boundary, as one ASGI middleware.

One line per request on the ``rxgem.server`` logger, at INFO, its fields always in
this order::

    POST /v1/chat/completions 200 model=gemini-2.5-flash duration_ms=412 tokens=87 request_id=req_…

(``error=<type>:<code>`` is added for an error reply, ``client_gone`` when the client
left before the end, status 499 when it left before the response started.) No query
string, no header, no prompt text: only the path, the model the client named and
numbers. Every value is scrubbed of the secrets the server knows, cut at 200
characters, and escaped (:func:`log_value`): a value is one token without a space, a
quote, a backslash, an ``=`` or anything but printable ASCII, so nothing a client
sends can add a field or a line. The structured fields (unescaped) are also on the
record, as ``record.access``.

An exception that escapes a handler (a bug) is logged once, its traceback scrubbed of
secrets, and answered with a bare OpenAI-style 500 if nothing was sent yet: the
client never sees a traceback.
"""

from __future__ import annotations

import logging
import re
import secrets as _secrets
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ...core.chat import CompletionUsage
from ...core.responses import ResponseUsage
from ...replies import ErrorReply, internal_error, redact
from ._labels import route_of
from ._telemetry import RequestTelemetry, Telemetry

__all__ = [
    "RECORD_KEY",
    "AccessLog",
    "AccessRecord",
    "access_line",
    "access_record",
    "clean",
    "log_failure",
    "log_value",
    "route_of",
]

RECORD_KEY: Final = "rxgem.server.access"
"""The scope key of a request's :class:`AccessRecord`."""

_LIMIT: Final = 200


# printable ASCII but the space, the quote, the backslash and "=": kept as they are
_BARE: Final = re.compile(r"[!#-<>-\[\]-~]+")


def _escaped(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def log_value(text: str) -> str:
    """``text`` as one token of the access line.

    Printable ASCII stays, but for the space, ``"``, the backslash and ``=``, which are
    escaped as everything else is: ``\\xHH`` (``\\x20`` a space, ``\\x5c`` a
    backslash), ``\\uHHHH``, ``\\UHHHHHHHH``. An empty value is ``""``, and ``-``
    (what stands for "none") is ``\\x2d``.
    """
    if _BARE.fullmatch(text):
        return "\\x2d" if text == "-" else text
    if not text:
        return '""'
    return "".join(c if _BARE.fullmatch(c) else _escaped(c) for c in text)


def _cut(text: str, secrets: Sequence[str], limit: int = _LIMIT) -> str:
    text = redact(text, secrets)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def access_line(
    method: str,
    path: str,
    status: int,
    *,
    model: str | None,
    duration_ms: int,
    tokens: int | None,
    request_id: str,
    error: str | None = None,
    client_gone: bool = False,
    secrets: Sequence[str] = (),
) -> str:
    """The access line: ``METHOD PATH STATUS model= duration_ms= tokens= request_id=``,
    then ``error=`` and ``client_gone`` when they apply; every text value scrubbed of
    ``secrets``, cut, and escaped by :func:`log_value`."""
    line = (
        f"{log_value(_cut(method, secrets, 16))} {log_value(_cut(path, secrets))} {status}"
        f" model={log_value(_cut(model, secrets)) if model else '-'}"
        f" duration_ms={duration_ms} tokens={'-' if tokens is None else tokens}"
        f" request_id={log_value(request_id)}"
    )
    if error:
        line += f" error={log_value(_cut(error, secrets))}"
    if client_gone:
        line += " client_gone"
    return line


def clean(text: str, secrets: Sequence[str] = (), limit: int = _LIMIT) -> str:
    """``text`` fit for a log line: secrets scrubbed, control characters replaced, cut short."""
    text = redact(text, secrets)
    text = "".join(c if c.isprintable() and c not in "\r\n" else "?" for c in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 1] + "…"


_DETAIL: Final = 2000
"""The longest text a failure's debug line keeps of each part."""


def log_failure(
    logger: logging.Logger,
    request_id: str,
    said: str,
    error: BaseException,
    secrets: Sequence[str],
) -> None:
    """At DEBUG, what the client was told of a failure and the detail it was not told (the
    upstream's URL, an excerpt of its stream), scrubbed of secrets, on one line."""
    if logger.isEnabledFor(logging.DEBUG):
        detail = clean(str(error) or type(error).__name__, secrets, _DETAIL)
        logger.debug(
            "request %s: %s; detail: %s", request_id, clean(said, secrets, _DETAIL), detail
        )


@dataclass
class AccessRecord:
    """What a handler tells the access log about its request."""

    request_id: str
    model: str | None = None
    tokens: int | None = None
    error: str | None = None
    client_gone: bool = False
    body_bytes: int = 0
    """The request body's size (what decides where its translation runs)."""
    telemetry: RequestTelemetry | None = field(default=None, repr=False)
    """The request's metrics and span (set by :class:`AccessLog` with telemetry)."""
    secrets: list[str] = field(default_factory=list, repr=False)
    """Per-request secrets (a pass-through key) to scrub, besides the server's."""

    def failed(self, reply: ErrorReply) -> None:
        """Note the error reply sent."""
        self.error = f"{reply.type}:{reply.code}" if reply.code else reply.type

    def used(self, usage: CompletionUsage | ResponseUsage) -> None:
        """Note the answer's tokens (a chat completion's usage or a response's): the
        access line's total, and the telemetry's counts."""
        self.tokens = usage.total_tokens
        if self.telemetry is None:
            return
        if isinstance(usage, CompletionUsage):
            prompt, completion = usage.prompt_tokens, usage.completion_tokens
            out, cached = usage.completion_tokens_details, usage.prompt_tokens_details
        else:
            prompt, completion = usage.input_tokens, usage.output_tokens
            out, cached = usage.output_tokens_details, usage.input_tokens_details
        self.telemetry.usage(
            prompt,
            completion,
            out.get("reasoning_tokens") if out else None,
            cached.get("cached_tokens") if cached else None,
        )


def access_record(scope: Scope) -> AccessRecord:
    """The request's record (a throwaway one outside :class:`AccessLog`)."""
    record = scope.get(RECORD_KEY)
    if isinstance(record, AccessRecord):
        return record
    return AccessRecord(request_id=_request_id())


def _request_id() -> str:
    return "req_" + _secrets.token_hex(12)


class AccessLog:
    """ASGI middleware: a request id, the access line, and the error boundary."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        logger: logging.Logger,
        secrets: tuple[str, ...],
        telemetry: Telemetry | None = None,
    ) -> None:
        self.app = app
        self.logger = logger
        self.secrets = secrets
        self.telemetry = telemetry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        record = AccessRecord(request_id=_request_id())
        if self.telemetry is not None:
            record.telemetry = self.telemetry.start(route_of(scope["path"]), scope["method"])
        scope[RECORD_KEY] = record
        began = time.perf_counter()
        status: int | None = None

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [
                    *message.get("headers", ()),
                    (b"x-request-id", record.request_id.encode()),
                ]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:  # a bug: log it, answer a bare 500, never re-raise it
            self._log_bug(exc, record)
            if status is None:
                reply = internal_error()
                record.failed(reply)
                await send_with_id(
                    {
                        "type": "http.response.start",
                        "status": reply.status,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send_with_id({"type": "http.response.body", "body": reply.json()})
        finally:
            final = status if status is not None else (499 if record.client_gone else 500)
            if record.telemetry is not None:
                record.telemetry.end(
                    final, record.error.partition(":")[0] if record.error else None
                )
            self._log_access(scope, record, status, time.perf_counter() - began)

    def _log_bug(self, exc: BaseException, record: AccessRecord) -> None:
        text = "".join(traceback.format_exception(exc))
        secrets = [*self.secrets, *record.secrets]
        self.logger.error(
            "unhandled error in request %s: %s", record.request_id, redact(text, secrets).rstrip()
        )

    def _log_access(
        self, scope: Scope, record: AccessRecord, status: int | None, seconds: float
    ) -> None:
        if not self.logger.isEnabledFor(logging.INFO):
            return
        secrets = [*self.secrets, *record.secrets]
        if status is None:
            status = 499 if record.client_gone else 500
        fields: dict[str, Any] = {
            "method": clean(str(scope.get("method", "")), secrets, 16),
            "path": clean(str(scope.get("path", "")), secrets),
            "status": status,
            "model": clean(record.model, secrets) if record.model else None,
            "duration_ms": round(seconds * 1000),
            "tokens": record.tokens,
            "request_id": record.request_id,
            "error": record.error,
            "client_gone": record.client_gone,
        }
        line = access_line(
            str(scope.get("method", "")),
            str(scope.get("path", "")),
            status,
            model=record.model,
            duration_ms=fields["duration_ms"],
            tokens=record.tokens,
            request_id=record.request_id,
            error=record.error,
            client_gone=record.client_gone,
            secrets=secrets,
        )
        self.logger.info("%s", line, extra={"access": fields})
