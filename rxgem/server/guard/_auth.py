"""Who may use the server and with which Gemini credentials, sans-IO.

Three modes (:attr:`ServerSettings.auth_mode <rxgem.server.ServerSettings.auth_mode>`):

- ``tokens``: the client's ``Authorization: Bearer`` token must be one of the
  configured client tokens (each compared with :func:`hmac.compare_digest`, all of
  them every time); Gemini gets the server's own key or access token.
- ``pass-through``: the client's bearer token is the Gemini API key (the access
  token for a Vertex AI upstream); the server holds no credentials.
- ``open``: no check; Gemini gets the server's credentials.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

from ...replies import ErrorReply, unauthorized
from ...store import ANONYMOUS
from ..settings import ServerSettings

__all__ = [
    "ANONYMOUS",
    "Credentials",
    "authorize",
    "bearer_token",
    "own_credentials",
    "owner_token",
]


_BEARER: Final = re.compile(r"^[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+(\S+)[ \t]*$")
_HEADER_SAFE: Final = re.compile(r"^[\x21-\x7e]+$")


@dataclass(frozen=True)
class Credentials:
    """What to send Gemini for one request (left out of ``repr()``)."""

    api_key: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)
    client_secret: str | None = field(default=None, repr=False)
    """A secret the client sent (its pass-through key), to scrub from replies and logs."""


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, else ``None``."""
    if not authorization:
        return None
    match = _BEARER.match(authorization)
    return match.group(1) if match else None


def owner_token(authorization: str | None) -> str:
    """What the store derives a client's owner id from: its bearer token, else
    :data:`ANONYMOUS`."""
    return bearer_token(authorization) or ANONYMOUS


def _known(token: str, tokens: tuple[str, ...]) -> bool:
    given = token.encode()
    found = False
    for expected in tokens:  # every token, every time: no early exit to time
        found |= hmac.compare_digest(given, expected.encode())
    return found


def authorize(authorization: str | None, settings: ServerSettings) -> Credentials | ErrorReply:
    """The Gemini credentials for a request with this ``Authorization`` header, or a 401.

    The reply never repeats what the client sent.
    """
    mode = settings.auth_mode
    if mode == "open":
        return Credentials(settings.api_key, settings.access_token)
    token = bearer_token(authorization)
    if token is None:
        return unauthorized(
            "missing bearer token: send Authorization: Bearer <token>"
            + (" (your Gemini API key)" if mode == "pass-through" else "")
        )
    if mode == "tokens":
        if not _known(token, settings.client_tokens):
            return unauthorized("invalid bearer token")
        return Credentials(settings.api_key, settings.access_token)
    if not _HEADER_SAFE.match(token):
        return unauthorized("malformed bearer token")
    return Credentials(**settings.chosen_upstream.credentials(token), client_secret=token)


def own_credentials(settings: ServerSettings) -> Callable[[], Awaitable[Credentials]] | None:
    """Where the server's own credentials come from when it was given none and its upstream
    finds them itself (Vertex AI: Application Default Credentials), fresh for each request;
    else ``None``. Blocks while the upstream looks.

    Raises:
        MissingCredentialsError: the upstream found none.
    """
    upstream = settings.chosen_upstream
    given = settings.api_key or settings.access_token or settings.pass_through_auth
    if given or upstream.finds_credentials is None:
        return None
    tokens = upstream.own_tokens(timeout=settings.connect_timeout)

    async def fresh() -> Credentials:
        return Credentials(**upstream.credentials(await tokens.atoken()))

    return fresh
