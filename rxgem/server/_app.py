"""The Starlette app: routes, request reading, the lifespan of the shared client."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..core import RxGemError
from ._access import AccessLog, AccessRecord, access_record
from ._auth import Credentials, authorize
from ._errors import ErrorReply, error_reply, http_reply
from ._models import valid_model_name
from ._settings import ServerSettings
from ._stream import CompletionResponse
from ._upstream import Upstream

__all__ = ["LOGGER_NAME", "create_app"]

LOGGER_NAME: Final = "rxgem.server"


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


def _json(data: Any) -> Response:
    return Response(msgspec.json.encode(data), media_type="application/json")


class _Service:
    """The route handlers, sharing the settings, the upstream and the logger."""

    def __init__(self, settings: ServerSettings, upstream: Upstream, logger: logging.Logger):
        self.settings = settings
        self.upstream = upstream
        self.logger = logger

    def _authorize(self, request: Request, record: AccessRecord) -> Credentials | ErrorReply:
        credentials = authorize(request.headers.get("authorization"), self.settings)
        if isinstance(credentials, Credentials) and credentials.client_secret:
            record.secrets.append(credentials.client_secret)
        return credentials

    def _secrets(self, record: AccessRecord) -> tuple[str, ...]:
        return (*self.settings.secrets, *record.secrets)

    async def _read_body(self, request: Request) -> dict[str, Any] | ErrorReply:
        limit = self.settings.max_request_bytes
        too_large = http_reply(413, f"the request body is larger than {limit} bytes")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return too_large
        data = bytearray()
        async for piece in request.stream():
            data += piece
            if len(data) > limit:
                return too_large
        try:
            body = msgspec.json.decode(data)
        except msgspec.DecodeError:
            return ErrorReply(400, "invalid_request_error", "the request body is not valid JSON")
        if not isinstance(body, dict):
            return ErrorReply(
                400, "invalid_request_error", "the request body must be a JSON object"
            )
        return body

    async def chat_completions(self, request: Request) -> Response | CompletionResponse:
        record = access_record(request.scope)
        credentials = self._authorize(request, record)
        if isinstance(credentials, ErrorReply):
            return reply_response(credentials, record)
        body = await self._read_body(request)
        if isinstance(body, ErrorReply):
            return reply_response(body, record)
        model = body.get("model")
        if isinstance(model, str) and model:
            record.model = model
            if not valid_model_name(model):
                reply = ErrorReply(
                    400,
                    "invalid_request_error",
                    "not a model name: letters, digits and . _ @ - only",
                    param="model",
                    headers=(("x-should-retry", "false"),),
                )
                return reply_response(reply, record)
        stream = body.get("stream") is True
        stream_options = body.get("stream_options")
        send_usage = isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
        if stream and (stream_options is None or isinstance(stream_options, dict)):
            # always ask for the usage chunk, for the access log; it is sent only if asked
            body = {**body, "stream_options": {**(stream_options or {}), "include_usage": True}}
        try:
            source = self.upstream.chat_completions(body, credentials)
        except RxGemError as exc:
            return reply_response(error_reply(exc, self._secrets(record)), record)
        return CompletionResponse(
            source,
            stream=stream,
            send_usage=send_usage,
            keep_alive=self.settings.keep_alive,
            record=record,
            secrets=self._secrets(record),
            logger=self.logger,
        )

    async def list_models(self, request: Request) -> Response:
        record = access_record(request.scope)
        credentials = self._authorize(request, record)
        if isinstance(credentials, ErrorReply):
            return reply_response(credentials, record)
        try:
            return _json(await self.upstream.list_models(credentials))
        except RxGemError as exc:
            return reply_response(error_reply(exc, self._secrets(record)), record)

    async def get_model(self, request: Request) -> Response:
        record = access_record(request.scope)
        credentials = self._authorize(request, record)
        if isinstance(credentials, ErrorReply):
            return reply_response(credentials, record)
        name = str(request.path_params["model_id"])
        record.model = name
        if not valid_model_name(name):
            return reply_response(
                ErrorReply(404, "not_found_error", "no such model", "model", "model_not_found"),
                record,
            )
        try:
            return _json(await self.upstream.get_model(credentials, name))
        except RxGemError as exc:
            return reply_response(error_reply(exc, self._secrets(record)), record)

    async def healthz(self, request: Request) -> Response:
        return _json({"status": "ok"})


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reply = http_reply(exc.status_code, exc.detail)
    response = reply_response(reply, access_record(request.scope))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def create_app(settings: ServerSettings) -> Starlette:
    """The OpenAI-compatible server as a Starlette (ASGI) app.

    Routes: ``POST /v1/chat/completions``, ``GET /v1/models``,
    ``GET /v1/models/{id}``, ``GET /healthz``. One ``httpx.AsyncClient`` serves
    every upstream request; it is closed at the app's shutdown (run the lifespan:
    uvicorn does by default). The app keeps no state between requests, so any number
    of copies can run behind a load balancer.

    The ``rxgem.server`` logger gets ``settings.log_level`` (its handlers are the
    application's business; ``rxgem serve`` logs to stderr).
    """
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(settings.logging_level)
    upstream = Upstream(settings)
    service = _Service(settings, upstream, logger)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await upstream.aclose()

    routes = [
        Route("/v1/chat/completions", service.chat_completions, methods=["POST"]),
        Route("/v1/models", service.list_models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", service.get_model, methods=["GET"]),
        Route("/healthz", service.healthz, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(AccessLog, logger=logger, secrets=settings.secrets)],
        exception_handlers={HTTPException: _http_exception},
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.upstream = upstream
    return app
