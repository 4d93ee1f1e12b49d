"""The server's settings: one frozen dataclass, checked when it is made, and its environment form.

No I/O and no Starlette here: the ``serve`` command builds the settings from its
arguments, :func:`settings_from_env` from environment variables (what each worker
process reads when ``--workers`` is above 1).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias
from urllib.parse import urlsplit

from ..transport import DEFAULT_BASE_URL

__all__ = ["ENV", "AuthMode", "ServerSettings", "SettingsError", "settings_from_env"]

AuthMode: TypeAlias = Literal["tokens", "pass-through", "open"]
"""How clients are let in: ``"tokens"`` (a bearer token from ``client_tokens``, the
server's own Gemini credentials upstream), ``"pass-through"`` (the client's bearer
token *is* the Gemini key) or ``"open"`` (anyone, with the server's credentials)."""

_LEVELS: Final = ("critical", "error", "warning", "info", "debug")

ENV: Final = {
    "upstream": "RXGEM_UPSTREAM",
    "api_key": "RXGEM_API_KEY",
    "access_token": "RXGEM_ACCESS_TOKEN",
    "client_tokens": "RXGEM_CLIENT_TOKENS",
    "pass_through_auth": "RXGEM_PASS_THROUGH_AUTH",
    "keep_alive": "RXGEM_KEEP_ALIVE",
    "log_level": "RXGEM_LOG_LEVEL",
}
"""The environment variable of each setting read by :func:`settings_from_env`."""

_KEY_FALLBACKS: Final = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
_TRUE: Final = frozenset({"1", "true", "yes", "on"})
_FALSE: Final = frozenset({"", "0", "false", "no", "off"})


class SettingsError(ValueError):
    """Settings that cannot make a server (the message says which and why, without secrets)."""


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """Everything :func:`~rxgem.server.create_app` needs; checked at construction.

    Attributes:
        upstream: Gemini's API base URL, in the form ``base_url=`` of
            :func:`~rxgem.stream_chat` takes (default Google AI Studio ``v1beta``; a
            Vertex AI ``…/publishers/google`` base with ``access_token``).
        api_key: the server's Gemini API key (sent as ``x-goog-api-key``).
        access_token: an OAuth access token (Vertex AI), sent instead of a key.
        client_tokens: the bearer tokens clients must present (compared in constant
            time). Empty, and without ``pass_through_auth``: no client check at all.
        pass_through_auth: use each client's ``Authorization: Bearer`` value as the
            Gemini key (as the access token for a Vertex upstream); the server then
            holds no credentials of its own.
        keep_alive: seconds of upstream silence after which an SSE comment is sent;
            also the longest a streaming client waits for the response headers.
        log_level: the level of the ``rxgem.server`` logger.
        connect_timeout: seconds to connect to the upstream.
        read_timeout: seconds the upstream may stay silent before the request fails.
        max_request_bytes: the largest request body accepted (HTTP 413 beyond).
        max_upstream_connections: the connection pool's size toward Gemini.

    The secrets are left out of ``repr()``.
    """

    upstream: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)
    client_tokens: tuple[str, ...] = field(default=(), repr=False)
    pass_through_auth: bool = False
    keep_alive: float = 15.0
    log_level: str = "info"
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_request_bytes: int = 32 * 1024 * 1024
    max_upstream_connections: int = 1000

    def __post_init__(self) -> None:
        split = urlsplit(self.upstream)
        if split.scheme not in ("http", "https") or not split.hostname:
            raise SettingsError(f"upstream must be an http(s) URL, not {self.upstream!r}")
        if split.query or split.fragment:
            raise SettingsError("upstream must be a base URL without a query or fragment")
        object.__setattr__(self, "client_tokens", tuple(self.client_tokens))
        if any(not token or token != token.strip() for token in self.client_tokens):
            raise SettingsError("client tokens must be non-empty, without surrounding spaces")
        if self.pass_through_auth:
            if self.client_tokens:
                raise SettingsError(
                    "pass-through auth uses each client's bearer token as its Gemini key:"
                    " it cannot be combined with client tokens"
                )
            if self.api_key or self.access_token:
                raise SettingsError(
                    "pass-through auth uses each client's key: give the server no"
                    " API key or access token of its own"
                )
        elif not (self.api_key or self.access_token):
            raise SettingsError(
                "no Gemini API key: pass --api-key or set GEMINI_API_KEY (or GOOGLE_API_KEY);"
                " or --access-token for Vertex AI; or --pass-through-auth"
            )
        for name in ("keep_alive", "connect_timeout", "read_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and value > 0):
                raise SettingsError(f"{name} must be a positive number of seconds, not {value!r}")
        if self.log_level.lower() not in _LEVELS:
            raise SettingsError(f"log level must be one of {', '.join(_LEVELS)}")
        object.__setattr__(self, "log_level", self.log_level.lower())
        for name in ("max_request_bytes", "max_upstream_connections"):
            if getattr(self, name) < 1:
                raise SettingsError(f"{name} must be at least 1")

    @property
    def auth_mode(self) -> AuthMode:
        """How clients are let in (see :data:`AuthMode`)."""
        if self.pass_through_auth:
            return "pass-through"
        return "tokens" if self.client_tokens else "open"

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret the server holds, to scrub from anything it writes."""
        own = (self.api_key, self.access_token, *self.client_tokens)
        return tuple(s for s in own if s)

    @property
    def logging_level(self) -> int:
        """``log_level`` as a :mod:`logging` number."""
        return logging.getLevelNamesMapping()[self.log_level.upper()]

    def to_env(self) -> dict[str, str]:
        """The environment that makes :func:`settings_from_env` give these settings back
        (the timeouts and size limits are not carried: workers get the defaults)."""
        env = {
            ENV["upstream"]: self.upstream,
            ENV["client_tokens"]: ",".join(self.client_tokens),
            ENV["pass_through_auth"]: "1" if self.pass_through_auth else "0",
            ENV["keep_alive"]: repr(float(self.keep_alive)),
            ENV["log_level"]: self.log_level,
        }
        if self.api_key:
            env[ENV["api_key"]] = self.api_key
        if self.access_token:
            env[ENV["access_token"]] = self.access_token
        return env


def _flag(environ: Mapping[str, str], name: str) -> bool:
    value = environ.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name} must be 1 or 0 (true/false), not {value!r}")


def settings_from_env(environ: Mapping[str, str] | None = None) -> ServerSettings:
    """Server settings from environment variables (``os.environ`` by default).

    ======================== ===================================================
    ``RXGEM_UPSTREAM``        the upstream base URL (default AI Studio ``v1beta``)
    ``RXGEM_API_KEY``         the Gemini key; else ``GEMINI_API_KEY``, else
                              ``GOOGLE_API_KEY`` (those two are not read with
                              pass-through auth or an access token)
    ``RXGEM_ACCESS_TOKEN``    a Vertex AI access token, instead of a key
    ``RXGEM_CLIENT_TOKENS``   the client tokens, comma-separated
    ``RXGEM_PASS_THROUGH_AUTH`` ``1`` to use each client's bearer token as its key
    ``RXGEM_KEEP_ALIVE``      seconds between keep-alive comments (default 15)
    ``RXGEM_LOG_LEVEL``       ``debug``, ``info`` (default), ``warning``, …
    ======================== ===================================================

    Raises:
        SettingsError: a value is malformed, or the settings are inconsistent.
    """
    env = os.environ if environ is None else environ
    pass_through = _flag(env, ENV["pass_through_auth"])
    api_key = env.get(ENV["api_key"]) or None
    access_token = env.get(ENV["access_token"]) or None
    if api_key is None and access_token is None and not pass_through:
        api_key = next((env[name] for name in _KEY_FALLBACKS if env.get(name)), None)
    tokens = tuple(t.strip() for t in env.get(ENV["client_tokens"], "").split(",") if t.strip())
    keep_alive_text = env.get(ENV["keep_alive"], "").strip()
    try:
        keep_alive = float(keep_alive_text) if keep_alive_text else 15.0
    except ValueError:
        raise SettingsError(f"{ENV['keep_alive']} must be a number of seconds") from None
    return ServerSettings(
        upstream=env.get(ENV["upstream"]) or DEFAULT_BASE_URL,
        api_key=api_key,
        access_token=access_token,
        client_tokens=tokens,
        pass_through_auth=pass_through,
        keep_alive=keep_alive,
        log_level=env.get(ENV["log_level"]) or "info",
    )
