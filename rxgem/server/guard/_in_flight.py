"""The server-wide budget on what requests in progress hold: body bytes and JSON values.

Each request is bounded alone (``max_request_bytes``, ``max_json_values``), but not how
many such requests a process holds at once: ten 31.5 MiB bodies of short strings took a
server to 1.26 GB. :class:`InFlight` counts, per process, the body bytes and the decoded
JSON values of the API requests in progress, and a request that would take either past
its budget gets a 503 with ``Retry-After`` (the ``openai`` SDK waits and retries) before
it holds more: bytes are taken as the body arrives (its whole ``Content-Length`` before
the first byte is read, when it says one), values once the body is measured and before
it is decoded. What a request took is given back when it ends, however it ends
(answered, refused, failed, or its client gone): its ASGI call returns.

A budget is at least the per-request limit (the settings check it), so a request the
limits accept always fits in an idle server: a 503 here is always worth a retry.
"""

from __future__ import annotations

from typing import Final

from starlette.types import ASGIApp, Receive, Scope, Send

from ...replies import Refusal, busy

__all__ = ["Charge", "InFlight", "in_flight_charge"]

_KEY: Final = "rxgem.in_flight"


class Charge:
    """One request's share of the budget: what it took, all given back by :meth:`release`."""

    def __init__(self, budget: InFlight | None) -> None:
        self._budget = budget
        self.bytes = 0
        self.values = 0

    def take_bytes(self, count: int) -> None:
        """Take ``count`` more body bytes (raises :class:`~rxgem.replies.Refusal`:
        503, nothing taken, if the budget has not that many left)."""
        budget = self._budget
        if budget is None:
            return
        if budget.bytes + count > budget.max_bytes:
            raise _refusal(
                f"the server holds its limit of {budget.max_bytes} bytes of request bodies"
                " in progress (max_bytes_in_flight); retry shortly"
            )
        budget.bytes += count
        self.bytes += count

    def take_values(self, count: int) -> None:
        """Take ``count`` decoded JSON values (raises ``Refusal`` as :meth:`take_bytes`)."""
        budget = self._budget
        if budget is None:
            return
        if budget.values + count > budget.max_values:
            raise _refusal(
                f"the server holds its limit of {budget.max_values} JSON values of request"
                " bodies in progress (max_values_in_flight); retry shortly"
            )
        budget.values += count
        self.values += count

    def release(self) -> None:
        """Give back everything taken (idempotent)."""
        budget = self._budget
        if budget is None:
            return
        budget.bytes -= self.bytes
        budget.values -= self.values
        self.bytes = self.values = 0


def _refusal(message: str) -> Refusal:
    return Refusal(busy(message, retry_after=1))


class InFlight:
    """The body bytes and JSON values the requests in progress hold, and the budget.

    Args:
        max_bytes: the most body bytes at once.
        max_values: the most decoded JSON values at once.
    """

    def __init__(self, max_bytes: int, max_values: int) -> None:
        self.max_bytes = max_bytes
        self.max_values = max_values
        self.bytes = 0
        self.values = 0

    def middleware(self, app: ASGIApp) -> ASGIApp:
        """The ASGI middleware that gives each HTTP request its :class:`Charge` (found
        by :func:`in_flight_charge`) and releases it when the request's call returns."""

        async def charged(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            charge = Charge(self)
            scope[_KEY] = charge
            try:
                await app(scope, receive, send)
            finally:
                charge.release()

        return charged


def in_flight_charge(scope: Scope) -> Charge:
    """The request's charge (one that takes nothing outside :meth:`InFlight.middleware`)."""
    charge = scope.get(_KEY)
    return charge if isinstance(charge, Charge) else Charge(None)
