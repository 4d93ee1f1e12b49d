"""The in-process transport's options, sans-IO: the transport's (toward Gemini) and the
pipeline's, checked once when the transport is made, and made its gateway's options
(:class:`~rxgem.gateway.GatewayOptions`, which splits the pipeline's between the chat and
the Responses stages as ``rxgem serve``'s does)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from ..gateway import GatewayOptions
from ..transport import DEFAULT_BASE_URL, DEFAULT_MAX_LINE_BYTES
from ..upstreams import UPSTREAM_NAMES, Upstream, upstream_of

__all__ = ["Options", "options_of"]


def _camel(name: str) -> str:
    """``generate-content`` as the transport spells it: ``generateContent``."""
    first, *rest = name.split("-")
    return first + "".join(word.capitalize() for word in rest)


_NAMES: Final = MappingProxyType({_camel(name): name for name in UPSTREAM_NAMES})
"""The transport's spelling of each upstream (camel case, as Gemini's methods are spelled)
→ the registry's, the default first."""
_SPELLED: Final = " or ".join(
    filter(None, (", ".join(map(repr, [*_NAMES][:-1])), repr([*_NAMES][-1])))
)

_FROM_REQUEST: Final = frozenset(
    {"model", "include_usage", "request", "include_encrypted_reasoning", "namespaced"}
)
_OWN: Final = frozenset({"client", "scheduler", "interaction_id", "response_id"})
"""Made by the transport for each request: not options."""
_GATEWAY_OWN: Final = frozenset({"api_key", "access_token", "base_url", "max_line_bytes", "record"})
"""The transport's options the gateway takes as its own."""


@dataclass(frozen=True)
class Options:
    """What every request of one transport is sent and translated with."""

    upstream: str
    """The upstream as the transport spells it (``generateContent``)."""
    chosen: Upstream
    """The upstream ``upstream`` (and the ``api``, else the base URL) chose."""
    transport: dict[str, Any]
    """``from_gemini``'s (or ``from_interactions``') options: key, base URL, retry..."""
    chat: dict[str, Any]
    """The chat stages' options (``upstream`` included)."""
    responses: dict[str, Any]
    """The Responses stages' options (``upstream`` included)."""

    @property
    def base_url(self) -> str | None:
        base: str | None = self.transport.get("base_url")
        return base

    @property
    def api_key(self) -> str | None:
        key: str | None = self.transport.get("api_key")
        return key

    @property
    def access_token(self) -> str | None:
        token: str | None = self.transport.get("access_token")
        return token

    def gateway(self) -> GatewayOptions:
        """The options of the transport's gateway: the same upstream and pipeline options,
        and the transport's but the credentials (each request is sent with
        :attr:`api_key`, :attr:`access_token`: the environment's when none was given)."""
        t = self.transport
        return GatewayOptions(
            upstream=t.get("base_url") or DEFAULT_BASE_URL,
            chosen=self.chosen,
            pipeline={**self.chat, **self.responses},
            max_line_bytes=t.get("max_line_bytes", DEFAULT_MAX_LINE_BYTES),
            recorder=t.get("record"),
            transport={k: v for k, v in t.items() if k not in _GATEWAY_OWN},
        )

    @property
    def secrets(self) -> tuple[str, ...]:
        """What no error body may show."""
        found = (self.transport.get("api_key"), self.transport.get("access_token"))
        return tuple(s for s in found if isinstance(s, str) and s)


def options_of(upstream: str, options: Mapping[str, Any]) -> Options:
    """The options of a transport (raises ``TypeError`` for one nothing takes, or one
    that comes from the request; ``ValueError`` for an unknown upstream)."""
    if upstream not in _NAMES:
        raise ValueError(f"upstream must be {_SPELLED}, not {upstream!r}")
    chosen = upstream_of(_NAMES[upstream], api=options.get("api"), base_url=options.get("base_url"))
    keys = chosen.transport_options
    chat_names = {n for stage in chosen.reader.chat for n in stage.declared} - _FROM_REQUEST
    responses_names = {
        n for stage in chosen.reader.responses for n in stage.declared
    } - _FROM_REQUEST
    for name in options:
        if name in _FROM_REQUEST or name in _OWN:
            raise TypeError(f"OpenAITransport: {name} is not an option (each request says it)")
        if name not in keys and name not in chat_names | responses_names:
            raise TypeError(f"OpenAITransport got an unexpected option {name!r}")
    transport = {k: v for k, v in options.items() if k in keys}
    chat = chosen.pipeline({k: v for k, v in options.items() if k in chat_names})
    responses = chosen.pipeline({k: v for k, v in options.items() if k in responses_names})
    return Options(upstream, chosen, transport, chat, responses)
