"""The inspector's browser sessions: a random id, signed, with its expiry; sans-IO.

Opening ``/inspect?token=<token>`` once sets a cookie holding a session, never the token
(cookies ignore ports: any service on the same host under ``/inspect`` receives it). A
session is ``<nonce>.<expiry>.<mac>``: 16 random bytes, the Unix time it ends, and
HMAC-SHA256 of both under the server's session key, so every worker of a server (they
share the key) accepts it without keeping a list, and a restarted server (a new key)
accepts none.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from typing import Final

__all__ = ["SESSION_SECONDS", "Sessions"]

SESSION_SECONDS: Final = 8 * 3600
"""How long a session lasts (the cookie's ``Max-Age``): a working day."""
_SHAPE: Final = re.compile(r"([A-Za-z0-9_-]{22})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Sessions:
    """Issues and checks sessions under one key.

    Args:
        key: the server's session key (random, shared by its workers).
        lifetime: seconds a session is valid.
    """

    def __init__(self, key: bytes, lifetime: int = SESSION_SECONDS) -> None:
        self._key = key
        self.lifetime = lifetime

    def _mac(self, nonce: str, expiry: str) -> str:
        message = f"{nonce}.{expiry}".encode("ascii")
        return _b64(hmac.new(self._key, message, hashlib.sha256).digest())

    def issue(self, now: float | None = None) -> str:
        """A new session, valid for :attr:`lifetime` seconds from ``now``."""
        moment = time.time() if now is None else now
        nonce = _b64(secrets.token_bytes(16))
        expiry = str(int(moment) + self.lifetime)
        return f"{nonce}.{expiry}.{self._mac(nonce, expiry)}"

    def valid(self, value: str, now: float | None = None) -> bool:
        """Whether ``value`` is a session this key issued that has not expired."""
        match = _SHAPE.fullmatch(value)
        if match is None:
            return False
        nonce, expiry, mac = match.groups()
        if not hmac.compare_digest(mac, self._mac(nonce, expiry)):
            return False
        return (time.time() if now is None else now) < int(expiry)
