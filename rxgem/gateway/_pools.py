"""The gateway's connection pools toward Gemini: shared ``httpx.AsyncClient`` objects,
made on the event loop that uses them and taken in turn."""

from __future__ import annotations

import http.cookiejar
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import httpx

__all__ = ["Pools", "TransportFactory"]

_SHARD_SIZE: Final = 64
_MAX_SHARDS: Final = 16

TransportFactory = Callable[[httpx.Limits], "httpx.AsyncBaseTransport | None"]
"""What makes a pool's transport for its limits (``None``: httpx's own)."""


class _NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: the pools serve every client, so a cookie the
    upstream sets for one must not go out with another's requests (and looking each
    response's headers through for cookies costs time per request)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return None


class Pools:
    """The shared clients toward Gemini, made on first use and closed by :meth:`aclose`.

    Args:
        max_connections: the connections of all pools together.
        timeout: each request's.
        transport: what makes a pool's transport (``None``: httpx's own).
        sharded: several small pools rather than one large (httpx's own transport:
            httpcore looks at every connection of a pool for each request, so with
            hundreds of streams open one pool's scan costs more than the request);
            a transport that finds a connection without a scan (aiohttp's) wants one.
        hooks: the clients' ``event_hooks``.
    """

    def __init__(
        self,
        max_connections: int,
        timeout: httpx.Timeout,
        transport: TransportFactory | None = None,
        *,
        sharded: bool = True,
        hooks: Mapping[str, Sequence[Callable[..., Any]]] | None = None,
    ) -> None:
        self.max_connections = max_connections
        self.timeout = timeout
        self.transport = transport
        self.sharded = sharded
        self.hooks = hooks
        self._clients: list[httpx.AsyncClient] = []
        self._turn = 0

    @property
    def client(self) -> httpx.AsyncClient:
        """The first shared client (made on first use): for the model list and probes."""
        return self.clients[0]

    @property
    def clients(self) -> list[httpx.AsyncClient]:
        """The shared clients, made on first use; requests take them in turn."""
        if not self._clients:
            shards = -(-self.max_connections // _SHARD_SIZE) if self.sharded else 1
            shards = max(1, min(_MAX_SHARDS, shards))
            per_shard = -(-self.max_connections // shards)
            limits = httpx.Limits(
                max_connections=per_shard,
                max_keepalive_connections=min(_SHARD_SIZE, per_shard),
            )
            hooks = {k: list(v) for k, v in self.hooks.items()} if self.hooks else None
            self._clients = [
                httpx.AsyncClient(
                    limits=limits,
                    timeout=self.timeout,
                    follow_redirects=False,
                    cookies=_NoCookies(),
                    transport=self.transport(limits) if self.transport else None,
                    event_hooks=hooks,
                )
                for _ in range(shards)
            ]
        return self._clients

    def next_client(self) -> httpx.AsyncClient:
        """The pool the next request takes."""
        clients = self.clients
        self._turn = (self._turn + 1) % len(clients)
        return clients[self._turn]

    def open(self) -> None:
        """Make the shared clients now (on the event loop), not at first use."""
        _ = self.client

    @property
    def is_open(self) -> bool:
        """Whether the shared clients exist and are not closed."""
        return any(not client.is_closed for client in self._clients)

    async def aclose(self) -> None:
        """Close the shared clients (idempotent)."""
        clients, self._clients = self._clients, []
        for client in clients:
            await client.aclose()
