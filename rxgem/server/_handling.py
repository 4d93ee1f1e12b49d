"""What every route does with a request before it asks Gemini: auth, the body, counting.

:class:`Handling` is shared by the chat and the Responses routes. What it refuses it
raises (``Refusal``, or :class:`ClientGone` for a client that
left while sending): the app registers :func:`exception_handlers`, the one place a
refusal becomes a response.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..core import RxGemError
from ..gateway import Gateway
from ..replies import (
    ErrorReply,
    Refusal,
    bad_request,
    body_timeout,
    error_reply,
    http_reply,
    misdirected,
    not_json,
    scrubber,
    too_large,
)
from .guard import (
    Credentials,
    Drain,
    authorize,
    in_flight_charge,
    own_credentials,
    owner_token,
)
from .http import BodyError, HostCheck, is_json, json_object_steps
from .observe import AccessRecord, access_record, log_failure
from .settings import ServerSettings
from .stream import Answering

__all__ = [
    "ClientGone",
    "Handling",
    "HostGuard",
    "exception_handlers",
    "json_response",
    "reply_response",
]


class ClientGone(Exception):
    """The client left while sending its request: it is answered with nothing at all."""


def reply_response(reply: ErrorReply, record: AccessRecord | None = None) -> Response:
    """An error reply as a Starlette response (noted in the access record)."""
    if record is not None:
        record.failed(reply)
    return Response(
        reply.json(),
        status_code=reply.status,
        headers=dict(reply.headers),
        media_type="application/json",
    )


def json_response(
    body: bytes, status: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """``body`` (encoded JSON) as a response."""
    return Response(body, status_code=status, headers=headers, media_type="application/json")


class HostGuard:
    """ASGI middleware: a 421 for a request whose ``Host`` the server does not answer
    (``HostCheck``), before anything is read or asked; the
    ``exempt`` paths (the probes) answer any name, as a load balancer sends its own."""

    def __init__(self, app: ASGIApp, check: HostCheck, exempt: frozenset[str]) -> None:
        self.app = app
        self.check = check
        self.exempt = exempt
        self.reply = misdirected(check.refusal())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        hosts = [value for name, value in scope["headers"] if name == b"host"]
        if len(hosts) == 1 and self.check.allows(hosts[0].decode("latin-1")):
            await self.app(scope, receive, send)
            return
        await reply_response(self.reply, access_record(scope))(scope, receive, send)


class Handling:
    """The request handling of every route, on the app's settings, gateway and logger.

    Args:
        settings: the server's settings (its limits, tokens and secrets).
        gateway: what answers the requests (:class:`~rxgem.gateway.Gateway`).
        logger: the ``rxgem.server`` logger.
        drain: the app's drain (what a streamed answer watches).
    """

    def __init__(
        self,
        settings: ServerSettings,
        gateway: Gateway,
        logger: logging.Logger,
        drain: Drain,
    ) -> None:
        self.settings = settings
        self.gateway = gateway
        self.logger = logger
        self.drain = drain
        self.own_credentials = own_credentials(settings)
        """Where the server's own credentials come from per request, when its upstream
        finds and refreshes them (else they are the settings')."""

    async def authorize(self, request: Request, record: AccessRecord) -> Credentials:
        """The client's credentials for Gemini (raises :class:`Refusal`: 401, or the
        failure to refresh the server's own)."""
        credentials = authorize(request.headers.get("authorization"), self.settings)
        if isinstance(credentials, ErrorReply):
            raise Refusal(credentials)
        if credentials.client_secret:
            record.secrets.append(credentials.client_secret)
        if self.own_credentials is not None and not credentials.client_secret:
            try:
                credentials = await self.own_credentials()
            except RxGemError as exc:
                raise self.failed(exc, record) from exc
            record.secrets.extend(s for s in (credentials.access_token, credentials.api_key) if s)
        return credentials

    @staticmethod
    def token(request: Request) -> str:
        """What the store derives the client's owner id from (its bearer token)."""
        return owner_token(request.headers.get("authorization"))

    def secrets(self, record: AccessRecord) -> tuple[str, ...]:
        """What no reply or log line of this request may show."""
        return (*self.settings.secrets, *record.secrets)

    def scrub(self, record: AccessRecord) -> Callable[[str], str]:
        """The Responses pipeline's ``scrub`` for ``record``'s request: a failed response
        is built without its secrets and the upstream's address (as every reply is)."""
        return scrubber(self.secrets(record), self.settings.upstream)

    def answering(self, record: AccessRecord) -> Answering:
        """How ``record``'s request is answered (the server's keep-alive, send timeout,
        drain, and what no reply may show)."""
        s = self.settings
        return Answering(
            record,
            self.secrets(record),
            self.logger,
            s.keep_alive,
            s.send_timeout,
            s.upstream,
            self.drain,
        )

    def failed(self, error: RxGemError, record: AccessRecord) -> Refusal:
        """The refusal of a request that failed before its answer began (in the one error
        vocabulary), its detail logged: for the caller to raise."""
        secrets = self.secrets(record)
        reply = error_reply(error, secrets, self.settings.upstream)
        log_failure(self.logger, record.request_id, reply.message, error, secrets)
        return Refusal(reply)

    async def read_body(
        self, request: Request, record: AccessRecord | None = None
    ) -> dict[str, Any]:
        """The body as a JSON object, within the server's limits (raises
        :class:`Refusal`, or :class:`ClientGone`)."""
        s = self.settings
        limit = s.max_request_bytes
        charge = in_flight_charge(request.scope)
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise Refusal(too_large(limit))
        if declared.isdigit():  # taken whole before a byte is read
            charge.take_bytes(int(declared))
        data = bytearray()
        try:
            async with asyncio.timeout(s.body_timeout):
                async for piece in request.stream():
                    data += piece
                    if len(data) > limit:
                        raise Refusal(too_large(limit))
                    if len(data) > charge.bytes:
                        charge.take_bytes(len(data) - charge.bytes)
        except TimeoutError:
            raise Refusal(body_timeout(s.body_timeout)) from None
        except ClientDisconnect:
            raise ClientGone from None
        if record is not None:
            record.body_bytes = len(data)
        steps = json_object_steps(
            data,
            max_depth=s.max_json_depth,
            max_values=s.max_json_values,
            on_measured=charge.take_values,
        )
        try:
            while True:
                next(steps)
                await asyncio.sleep(0)  # a large body is checked while other requests run
        except StopIteration as done:
            body: dict[str, Any] = done.value
            return body
        except BodyError as exc:
            raise Refusal(http_reply(exc.status, exc.reason)) from None

    async def read(
        self, request: Request, record: AccessRecord
    ) -> tuple[Credentials, dict[str, Any]]:
        """The client's credentials and JSON body, its model noted in ``record``."""
        if not is_json(request.headers.get("content-type")):  # a page's "simple" request
            raise Refusal(not_json())
        credentials = await self.authorize(request, record)
        try:
            body = await self.read_body(request, record)
        except ClientGone:
            record.client_gone = True
            raise
        model = body.get("model")
        if isinstance(model, str) and model:
            record.model = model
            if not Gateway.valid_model(model):
                raise Refusal(
                    bad_request(
                        "not a model name: letters, digits and . _ @ - only (an agent:"
                        " agent:<name>)",
                        "model",
                    )
                )
        return credentials, body

    def count(self, record: AccessRecord, body: dict[str, Any]) -> bool:
        """Count the request in the telemetry; whether it asks for ``stream``."""
        stream = body.get("stream") is True
        if record.telemetry is not None:
            model = body.get("model")
            record.telemetry.chat(
                model if isinstance(model, str) else None,
                upstream=self.settings.upstream,
                stream=stream,
            )
        return stream


async def _refused(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Refusal)
    return reply_response(exc.reply, access_record(request.scope))


async def _gone(request: Request, exc: Exception) -> None:
    return None  # no answer at all: the client left


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reply = http_reply(exc.status_code, exc.detail, request.url.path)
    response = reply_response(reply, access_record(request.scope))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def exception_handlers() -> dict[Any, Any]:
    """The app's exception handlers: a refusal's reply, nothing for a client that left,
    and Starlette's own HTTP refusals (unknown route, wrong method) in the same vocabulary."""
    return {Refusal: _refused, ClientGone: _gone, HTTPException: _http_exception}
