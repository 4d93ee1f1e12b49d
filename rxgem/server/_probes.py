"""The probes a load balancer asks: ``GET /healthz`` (liveness) and ``GET /readyz``
(readiness: not draining, below the request limit, and Gemini answers)."""

from __future__ import annotations

from typing import Final

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from ..gateway import Gateway
from ._handling import json_response
from .guard import Admission, Drain
from .observe import HEALTHZ_ROUTE, READYZ_ROUTE

__all__ = ["PROBES", "Probes"]

PROBES: Final = frozenset({HEALTHZ_ROUTE, READYZ_ROUTE})
"""The probes' paths: answered for any ``Host`` name, as a load balancer sends its own."""


class Probes:
    """The probe handlers, on the app's drain, admission and upstream."""

    def __init__(self, drain: Drain, admission: Admission, upstream: Gateway) -> None:
        self.drain = drain
        self.admission = admission
        self.upstream = upstream

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
        upstream = await self.upstream.probe()
        if upstream is not None:
            problems.append(upstream)
        checks = {"upstream": upstream or "ok", "requests_in_progress": self.admission.active}
        if problems:
            body = {"status": "unavailable", "problems": problems, "checks": checks}
            return json_response(msgspec.json.encode(body), 503, {"retry-after": "1"})
        return json_response(msgspec.json.encode({"status": "ok", "checks": checks}))
