"""The Starlette app, assembled: the routes, the middleware, the one exception handler,
and the lifespan of the shared client and the store."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..store import ResponseStore, open_store
from ._chat import ChatRoutes
from ._handling import Handling, HostGuard, exception_handlers
from ._probes import PROBES, Probes
from ._upstream import server_gateway
from .capture import Inspector, Spool
from .guard import Admission, Drain, InFlight, install_drain_signal
from .http import HostCheck
from .inspector import InspectorGate
from .observe import (
    CANCEL_ROUTE,
    CHAT_ROUTE,
    HEALTHZ_ROUTE,
    INPUT_ITEMS_ROUTE,
    METRICS_ROUTE,
    MODEL_ROUTE,
    MODELS_ROUTE,
    READYZ_ROUTE,
    RESPONSE_ROUTE,
    RESPONSES_ROUTE,
    AccessLog,
    Telemetry,
)
from .responses import ResponsesRoutes
from .run import LIMITS_STATE, connection_limits
from .settings import ServerSettings

__all__ = ["LOGGER_NAME", "create_app"]

LOGGER_NAME: Final = "rxgem.server"


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
        signature_ttl=settings.signature_ttl,
        max_signatures=settings.max_signatures,
    )


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
    ``GET``/``DELETE /v1/responses/{id}``, ``GET /v1/responses/{id}/input_items`` and
    ``POST /v1/responses/{id}/cancel``
    (:class:`~rxgem.server.responses.ResponsesRoutes`; the store is opened here at
    startup and closed at shutdown, see ``settings.store``), ``GET /v1/models``,
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
    ``HostCheck``.

    ``telemetry``: the app's metrics and traces (default: Prometheus metrics if
    ``settings.metrics``, OpenTelemetry spans through the global providers); pass one
    made with your own ``tracer_provider``/``meter_provider`` to route them elsewhere.
    ``GET /metrics`` is served when its ``metrics`` is on.

    The ``rxgem.server`` logger gets ``settings.log_level`` (its handlers are the
    application's business; ``rxgem serve`` logs to stderr).
    """
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(settings.logging_level)
    inspector = (
        Inspector(
            settings.inspect_requests,
            settings.inspect_kb * 1024,
            settings.secrets,
            Spool(settings.inspect_spool, settings.inspect_requests),
        )
        if settings.inspect
        else None
    )
    gateway = server_gateway(settings, inspector, logger)
    drain = Drain(settings.shutdown_grace)
    admission = Admission(settings.max_concurrent_requests, drain)
    in_flight = InFlight(settings.bytes_in_flight, settings.values_in_flight)
    handling = Handling(settings, gateway, logger, drain)
    chat = ChatRoutes(handling)
    responses = ResponsesRoutes(handling)
    probes = Probes(drain, admission, gateway, handling.own_credentials)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
        restore = install_drain_signal(drain)
        gateway.open()  # its TLS context takes tens of ms: not in the first request
        store = app.state.store = gateway.store = open_response_store(settings)
        try:
            yield {LIMITS_STATE: connection_limits(settings)}
        finally:
            restore()
            await gateway.aclose()
            gateway.store = None
            if store is not None:
                await store.aclose()
            if inspector is not None:
                inspector.spool.close()

    routes = [
        Route(CHAT_ROUTE, chat.completions, methods=["POST"]),
        Route(RESPONSES_ROUTE, responses.create, methods=["POST"]),
        Route(RESPONSE_ROUTE, responses.retrieve, methods=["GET"]),
        Route(RESPONSE_ROUTE, responses.delete, methods=["DELETE"]),
        Route(INPUT_ITEMS_ROUTE, responses.input_items, methods=["GET"]),
        Route(CANCEL_ROUTE, responses.cancel, methods=["POST"]),
        Route(MODELS_ROUTE, chat.list_models, methods=["GET"]),
        Route(MODEL_ROUTE, chat.get_model, methods=["GET"]),
        Route(HEALTHZ_ROUTE, probes.healthz, methods=["GET"]),
        Route(READYZ_ROUTE, probes.readyz, methods=["GET"]),
    ]
    if telemetry is None:
        telemetry = Telemetry(metrics=settings.metrics)
    if telemetry.metrics:

        async def metrics(request: Request) -> Response:
            body, content_type = telemetry.render(request.headers.get("accept"))
            return Response(body, headers={"content-type": content_type})

        routes.append(Route(METRICS_ROUTE, metrics, methods=["GET"]))
    middleware = [
        Middleware(AccessLog, logger=logger, secrets=settings.secrets, telemetry=telemetry)
    ]
    hosts = HostCheck(settings.host, settings.allowed_hosts)
    if hosts.enabled:
        middleware.append(Middleware(HostGuard, check=hosts, exempt=PROBES))
    middleware.append(Middleware(admission.middleware))
    if inspector is not None:  # inside the Host check and admission, outside CORS
        options = (gateway.chat_pipeline, gateway.responses_pipeline)
        middleware.append(
            Middleware(
                InspectorGate,
                inspector=inspector,
                settings=settings,
                options=options,
                drain=drain,
            )
        )
    middleware.append(Middleware(in_flight.middleware))
    if settings.cors_origins:
        middleware.append(_cors(settings.cors_origins))
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers=exception_handlers(),
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.gateway = gateway
    app.state.drain = drain
    app.state.admission = admission
    app.state.in_flight = in_flight
    app.state.telemetry = telemetry
    app.state.inspector = inspector
    return app
