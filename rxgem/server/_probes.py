"""The probes a load balancer asks: ``GET /healthz`` (liveness) and ``GET /readyz``
(readiness: not draining, below the request limit, and Gemini answers)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Final

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from ..core import RxGemError
from ..gateway import Gateway
from ._handling import json_response
from .guard import Admission, Credentials, Drain
from .observe import HEALTHZ_ROUTE, READYZ_ROUTE

__all__ = ["PROBES", "Probes"]

PROBES: Final = frozenset({HEALTHZ_ROUTE, READYZ_ROUTE})
"""The probes' paths: answered for any ``Host`` name, as a load balancer sends its own."""


class Probes:
    """The probe handlers, on the app's drain, admission and upstream."""

    def __init__(
        self,
        drain: Drain,
        admission: Admission,
        upstream: Gateway,
        own_credentials: Callable[[], Awaitable[Credentials]] | None = None,
    ) -> None:
        self.drain = drain
        self.admission = admission
        self.upstream = upstream
        self.own_credentials = own_credentials
        """Where the server finds its credentials itself (Vertex AI's ADC), else ``None``:
        readiness then includes finding one, and Gemini is asked with it."""

    async def healthz(self, request: Request) -> Response:
        """Liveness: the process answers (also while it drains)."""
        return json_response(msgspec.json.encode({"status": "ok"}))

    async def readyz(self, request: Request) -> Response:
        """Readiness: not draining, below the request limit, and Gemini answers."""
        problems: list[str] = []
        if self.drain.started:
            problems.append("shutting down")
        if self.admission.full:
            problems.append("at max_concurrent_requests")
        upstream = await self._probe()
        if upstream is not None:
            problems.append(upstream)
        checks = {"upstream": upstream or "ok", "requests_in_progress": self.admission.active}
        if problems:
            body = {"status": "unavailable", "problems": problems, "checks": checks}
            return json_response(msgspec.json.encode(body), 503, {"retry-after": "1"})
        return json_response(msgspec.json.encode({"status": "ok", "checks": checks}))

    async def _probe(self) -> str | None:
        if self.own_credentials is None:
            return await self.upstream.probe()
        try:
            found = await self.own_credentials()
        except RxGemError as exc:
            # the class only: the operator's log has the whole message from requests
            return f"no credentials ({type(exc).__name__})"
        return await self.upstream.probe(found)
