"""The Starlette app: routes, request reading, the lifespan of the shared client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

import msgspec
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..core import RxGemError
from ..store import ResponseStore, open_store
from ._access import AccessLog, AccessRecord, access_record, log_failure
from ._admission import Admission, Drain, install_drain_signal
from ._auth import Credentials, authorize
from ._body import BodyError, json_object_steps
from ._errors import ErrorReply, error_reply, http_reply
from ._hosts import HostCheck, is_json
from ._models import valid_model_name
from ._responses import ResponsesRoutes
from ._runner import LIMITS_STATE, connection_limits
from ._settings import ServerSettings
from ._stream import CompletionResponse
from ._telemetry import Telemetry
from ._upstream import Upstream

__all__ = ["LOGGER_NAME", "create_app"]

LOGGER_NAME: Final = "rxgem.server"

_NOT_JSON: Final = ErrorReply(
    415,
    "invalid_request_error",
    "the request body must be JSON, sent with the header Content-Type: application/json"
    " (with curl: -H 'Content-Type: application/json')",
    code="unsupported_media_type",
    headers=(("x-should-retry", "false"), ("connection", "close")),
)
_PROBES: Final = frozenset({"/healthz", "/readyz"})


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


def open_response_store(settings: ServerSettings) -> ResponseStore | None:
    """The store ``settings`` name (not connected yet), or ``None`` with ``no_store``."""
    if settings.no_store:
        return None
    return open_store(
        settings.store,
        ttl=settings.store_ttl,
        timeout=settings.store_timeout,
        max_record_bytes=settings.store_max_record_bytes,
        max_items=settings.store_max_items,
        max_chain=settings.store_max_chain,
    )


def _json(data: Any) -> Response:
    return Response(msgspec.json.encode(data), media_type="application/json")


class _Service:
    """The route handlers, sharing the settings, the upstream and the logger."""

    def __init__(
        self,
        settings: ServerSettings,
        upstream: Upstream,
        logger: logging.Logger,
        admission: Admission,
        drain: Drain,
    ):
        self.settings = settings
        self.upstream = upstream
        self.logger = logger
        self.admission = admission
        self.drain = drain

    def _authorize(self, request: Request, record: AccessRecord) -> Credentials | ErrorReply:
        credentials = authorize(request.headers.get("authorization"), self.settings)
        if isinstance(credentials, Credentials) and credentials.client_secret:
            record.secrets.append(credentials.client_secret)
        return credentials

    def _secrets(self, record: AccessRecord) -> tuple[str, ...]:
        return (*self.settings.secrets, *record.secrets)

    def _failed(self, error: RxGemError, record: AccessRecord) -> Response:
        """The reply to a request that failed before its answer began (in the one error
        vocabulary), its detail logged."""
        secrets = self._secrets(record)
        reply = error_reply(error, secrets, self.settings.upstream)
        log_failure(self.logger, record.request_id, reply.message, error, secrets)
        return reply_response(reply, record)

    async def _read_body(self, request: Request) -> dict[str, Any] | ErrorReply | None:
        """The body as a JSON object, an error reply, or ``None`` when the client left."""
        s = self.settings
        limit = s.max_request_bytes
        too_large = http_reply(
            413, f"the request body is larger than {limit} bytes (the server's max_request_bytes)"
        )
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return too_large
        data = bytearray()
        try:
            async with asyncio.timeout(s.body_timeout):
                async for piece in request.stream():
                    data += piece
                    if len(data) > limit:
                        return too_large
        except TimeoutError:
            return ErrorReply(
                408,
                "invalid_request_error",
                f"the request body did not arrive within {s.body_timeout:g} s"
                " (the server's body_timeout)",
                code="request_timeout",
                headers=(("connection", "close"),),
            )
        except ClientDisconnect:
            return None
        steps = json_object_steps(data, max_depth=s.max_json_depth, max_values=s.max_json_values)
        try:
            while True:
                next(steps)
                await asyncio.sleep(0)  # a large body is checked while other requests run
        except StopIteration as done:
            body: dict[str, Any] = done.value
            return body
        except BodyError as exc:
            return ErrorReply(exc.status, "invalid_request_error", exc.reason)

    async def _request(
        self, request: Request, record: AccessRecord
    ) -> tuple[Credentials, dict[str, Any]] | Response | _Gone:
        """The client's credentials and JSON body, its model noted in ``record``; or the
        answer already: an error reply, or nothing for a client that left."""
        if not is_json(request.headers.get("content-type")):  # a page's "simple" request
            return reply_response(_NOT_JSON, record)
        credentials = self._authorize(request, record)
        if isinstance(credentials, ErrorReply):
            return reply_response(credentials, record)
        body = await self._read_body(request)
        if body is None:
            record.client_gone = True
            return _GONE
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
        return credentials, body

    def _count(self, record: AccessRecord, body: dict[str, Any]) -> bool:
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

    async def chat_completions(self, request: Request) -> Response | CompletionResponse | _Gone:
        record = access_record(request.scope)
        read = await self._request(request, record)
        if not isinstance(read, tuple):
            return read
        credentials, body = read
        stream = self._count(record, body)
        stream_options = body.get("stream_options")
        send_usage = isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
        if stream and (stream_options is None or isinstance(stream_options, dict)):
            # always ask for the usage chunk, for the access log; it is sent only if asked
            body = {**body, "stream_options": {**(stream_options or {}), "include_usage": True}}
        try:
            source = self.upstream.chat_completions(body, credentials)
        except RxGemError as exc:
            return self._failed(exc, record)
        return CompletionResponse(
            source,
            stream=stream,
            send_usage=send_usage,
            keep_alive=self.settings.keep_alive,
            record=record,
            secrets=self._secrets(record),
            logger=self.logger,
            drain=self.drain,
            send_timeout=self.settings.send_timeout,
            upstream=self.settings.upstream,
        )

    async def list_models(self, request: Request) -> Response:
        record = access_record(request.scope)
        credentials = self._authorize(request, record)
        if isinstance(credentials, ErrorReply):
            return reply_response(credentials, record)
        try:
            return _json(await self.upstream.list_models(credentials))
        except RxGemError as exc:
            return self._failed(exc, record)

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
            return self._failed(exc, record)

    async def healthz(self, request: Request) -> Response:
        """Liveness: the process answers (also while it drains)."""
        return _json({"status": "ok"})

    async def readyz(self, request: Request) -> Response:
        """Readiness: not draining, below the request limit, and Gemini answers."""
        problems: list[str] = []
        if self.drain.started:
            problems.append("shutting down")
        if self.admission.full:
            problems.append("at max_concurrent_requests")
        upstream = await self.upstream.probe()
        if upstream is not None:
            problems.append(upstream)
        checks = {"upstream": upstream or "ok", "requests_in_progress": self.admission.active}
        if problems:
            body = {"status": "unavailable", "problems": problems, "checks": checks}
            return Response(
                msgspec.json.encode(body),
                status_code=503,
                media_type="application/json",
                headers={"retry-after": "1"},
            )
        return _json({"status": "ok", "checks": checks})


class _HostGuard:
    """ASGI middleware: a 421 for a request whose ``Host`` the server does not answer
    (:class:`~rxgem.server._hosts.HostCheck`), before anything is read or asked; the
    probes (``/healthz``, ``/readyz``) answer any name, as a load balancer sends its own."""

    def __init__(self, app: ASGIApp, check: HostCheck) -> None:
        self.app = app
        self.check = check
        self.reply = ErrorReply(
            421,
            "invalid_request_error",
            check.refusal(),
            code="misdirected_request",
            headers=(("x-should-retry", "false"),),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _PROBES:
            await self.app(scope, receive, send)
            return
        hosts = [value for name, value in scope["headers"] if name == b"host"]
        if len(hosts) == 1 and self.check.allows(hosts[0].decode("latin-1")):
            await self.app(scope, receive, send)
            return
        await reply_response(self.reply, access_record(scope))(scope, receive, send)


class _Gone:
    """The answer to a client that left while sending its request: nothing at all."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        return None


_GONE: Final = _Gone()


async def _http_exception(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    reply = http_reply(exc.status_code, exc.detail)
    response = reply_response(reply, access_record(request.scope))
    if exc.headers:
        response.headers.update(exc.headers)
    return response


def _cors(origins: tuple[str, ...]) -> Middleware:
    """CORS for browser clients: the API's methods, the headers the ``openai`` SDK
    sends (``*``), and the response headers a client reads (request id, retry)."""
    return Middleware(
        CORSMiddleware,
        allow_origins=list(origins),
        allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
        allow_headers=["*"],
        expose_headers=["x-request-id", "retry-after", "retry-after-ms", "x-should-retry"],
        max_age=600,
    )


def create_app(settings: ServerSettings, *, telemetry: Telemetry | None = None) -> Starlette:
    """The OpenAI-compatible server as a Starlette (ASGI) app.

    Routes: ``POST /v1/chat/completions``, ``POST /v1/responses`` with
    ``GET``/``DELETE /v1/responses/{id}`` and ``GET /v1/responses/{id}/input_items``
    (:mod:`rxgem.server._responses`; the store is opened here at startup and closed at
    shutdown, see ``settings.store``), ``GET /v1/models``,
    ``GET /v1/models/{id}``, ``GET /healthz`` (liveness), ``GET /readyz``
    (readiness: 503 while draining, at the request limit, or when Gemini does not
    answer). One ``httpx.AsyncClient`` serves
    every upstream request; it is closed at the app's shutdown (run the lifespan:
    uvicorn does by default). Chat completions keep no state between requests; stored
    responses are in the store, so copies sharing one (Redis) can run behind a load
    balancer.

    The JSON routes take only ``Content-Type: application/json`` (415), and every
    path but the probes only the ``Host`` names of ``settings.allowed_hosts``, or, with
    none, loopback names when ``settings.host`` is loopback (421); see
    :mod:`rxgem.server._hosts`.

    ``telemetry``: the app's metrics and traces (default: Prometheus metrics if
    ``settings.metrics``, OpenTelemetry spans through the global providers); pass one
    made with your own ``tracer_provider``/``meter_provider`` to route them elsewhere.
    ``GET /metrics`` is served when its ``metrics`` is on.

    The ``rxgem.server`` logger gets ``settings.log_level`` (its handlers are the
    application's business; ``rxgem serve`` logs to stderr).
    """
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(settings.logging_level)
    upstream = Upstream(settings)
    drain = Drain(settings.shutdown_grace)
    admission = Admission(settings.max_concurrent_requests, drain)
    service = _Service(settings, upstream, logger, admission, drain)
    responses = ResponsesRoutes(service, None)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        restore = install_drain_signal(drain)
        upstream.open()  # its TLS context takes tens of ms: not in the first request
        store = app.state.store = responses.store = open_response_store(settings)
        try:
            yield {LIMITS_STATE: connection_limits(settings)}
        finally:
            restore()
            await upstream.aclose()
            responses.store = None
            if store is not None:
                await store.aclose()

    routes = [
        Route("/v1/chat/completions", service.chat_completions, methods=["POST"]),
        Route("/v1/responses", responses.create, methods=["POST"]),
        Route("/v1/responses/{response_id}", responses.retrieve, methods=["GET"]),
        Route("/v1/responses/{response_id}", responses.delete, methods=["DELETE"]),
        Route("/v1/responses/{response_id}/input_items", responses.input_items, methods=["GET"]),
        Route("/v1/models", service.list_models, methods=["GET"]),
        Route("/v1/models/{model_id:path}", service.get_model, methods=["GET"]),
        Route("/healthz", service.healthz, methods=["GET"]),
        Route("/readyz", service.readyz, methods=["GET"]),
    ]
    if telemetry is None:
        telemetry = Telemetry(metrics=settings.metrics)
    if telemetry.metrics:

        async def metrics(request: Request) -> Response:
            body, content_type = telemetry.render(request.headers.get("accept"))
            return Response(body, headers={"content-type": content_type})

        routes.append(Route("/metrics", metrics, methods=["GET"]))
    middleware = [
        Middleware(AccessLog, logger=logger, secrets=settings.secrets, telemetry=telemetry)
    ]
    hosts = HostCheck(settings.host, settings.allowed_hosts)
    if hosts.enabled:
        middleware.append(Middleware(_HostGuard, check=hosts))
    middleware.append(Middleware(admission.middleware))
    if settings.cors_origins:
        middleware.append(_cors(settings.cors_origins))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={HTTPException: _http_exception},
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.upstream = upstream
    app.state.drain = drain
    app.state.admission = admission
    app.state.telemetry = telemetry
    return app
