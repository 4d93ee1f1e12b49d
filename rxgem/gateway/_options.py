"""What a :class:`~rxgem.gateway.Gateway` is made with, sans-IO: the upstream, the pools'
bounds, and the pipeline options split between the chat and the Responses stages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.pipeline import Stage
from ..upstreams import Upstream, upstream_of
from ._store_limits import StoreLimits

__all__ = ["GatewayOptions", "taken_by"]


def taken_by(stages: Sequence[Stage[Any]], options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``options`` that ``stages`` declare (the others are another upstream's)."""
    names = {name for stage in stages for name in stage.declared}
    return {k: v for k, v in options.items() if k in names}


@dataclass(frozen=True)
class GatewayOptions:
    """The gateway's options (the server makes them from its settings).

    Attributes:
        upstream: Gemini's base URL.
        chosen: the upstream API that answers (:mod:`rxgem.upstreams`; default: the
            registry's default).
        pipeline: the pipeline options of every answer (each upstream's stages take theirs).
        api_key: the gateway's own key, for the readiness probe (requests bring theirs).
        access_token: the same, as an OAuth token.
        interactions_store: on Interactions, whether Google may keep the turns.
        max_line_bytes: the longest line Gemini's stream may send.
        max_connections: the pools' size toward Gemini.
        connect_timeout: seconds to connect.
        read_timeout: seconds Gemini may stay silent.
        recorder: where each upstream exchange is written as a cassette, if anywhere.
        transport: more options of every call to Gemini (``retry``, ``headers``,
            ``resume``, ...: :func:`rxgem.from_gemini`'s), over those above.
        store_limits: what a stored response may hold, checked before Gemini is asked
            (the items, record bytes, chain length and conversation bytes of
            :class:`~._store_limits.StoreLimits`; ``None``: the store's own limits alone).
    """

    upstream: str
    chosen: Upstream = field(default_factory=upstream_of)
    pipeline: Mapping[str, Any] = field(default_factory=dict)
    api_key: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)
    interactions_store: bool = False
    max_line_bytes: int = 64 * 1024 * 1024
    max_connections: int = 1000
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    recorder: Any = None
    transport: Mapping[str, Any] = field(default_factory=dict)
    store_limits: tuple[int, int, int, int] | None = None

    def limits(self) -> StoreLimits | None:
        """:attr:`store_limits`, as checked."""
        if self.store_limits is None:
            return None
        return StoreLimits(*self.store_limits)

    def chat_pipeline(self) -> dict[str, Any]:
        """The pipeline options of every chat completion: those the upstream's stages take
        (and those that choose its reader: ``upstream``, ``api``)."""
        return self.chosen.pipeline(taken_by(self.chosen.reader.chat, self.pipeline))

    def responses_pipeline(self) -> dict[str, Any]:
        """The same for every Responses answer."""
        return self.chosen.pipeline(taken_by(self.chosen.reader.responses, self.pipeline))

    def calls(self) -> dict[str, Any]:
        """What every call to Gemini is made with (the credentials and client aside)."""
        return {
            "base_url": self.upstream,
            "max_line_bytes": self.max_line_bytes,
            "record": self.recorder,
            **self.transport,
        }
