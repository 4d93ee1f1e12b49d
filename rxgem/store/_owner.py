"""Owner ids: whose a stored turn is, derived from the client's bearer token.

A store never keeps a token. It keeps ``HMAC-SHA256(secret, token)`` in hex, with a
secret of the store's own: 32 random bytes created on first use and kept in the store
itself (the SQLite file's ``meta`` table, a Redis key), so that every process and every
instance sharing the store derives the same owner from the same token. Why a keyed hash
and not a plain one:

- a plain SHA-256 of a token is the same in every store and for every tool that hashes
  tokens, so it links a client across them, and a table of hashes of likely tokens (a
  key that leaked elsewhere, a default) finds it; an HMAC under a per-store secret does
  neither;
- someone holding a copy of the store holds its secret too, and can test a token they
  guess against the owner ids. Give the store a ``secret`` of your own (from the
  server's configuration, not from the store) and a copy of the store alone no longer
  tells whether a token is the one that wrote a turn.

Losing the secret (a new SQLite file, a flushed or evicting Redis) orphans the stored
turns: no token maps to their owner any more. They are not exposed to anyone; they
expire or stay unreachable.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["SECRET_BYTES", "derive_owner", "new_secret"]

SECRET_BYTES = 32


def new_secret() -> bytes:
    """A fresh owner secret (:data:`SECRET_BYTES` random bytes)."""
    return secrets.token_bytes(SECRET_BYTES)


def derive_owner(secret: bytes, token: str) -> str:
    """The owner id of ``token`` under ``secret``: 64 lowercase hex digits."""
    if len(secret) < 16:
        raise ValueError("an owner secret needs at least 16 bytes")
    return hmac.new(secret, token.encode("utf-8"), hashlib.sha256).hexdigest()
