"""``open_store``: the store a ``--store`` setting names."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from ._limits import DEFAULT_MAX_CHAIN, DEFAULT_MAX_ITEMS, DEFAULT_MAX_RECORD_BYTES, DEFAULT_TIMEOUT
from ._paths import default_path
from ._protocol import ResponseStore
from ._signatures import DEFAULT_MAX_SIGNATURES, DEFAULT_SIGNATURE_TTL
from ._sqlite import SQLiteStore

__all__ = ["open_store", "store_location"]

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def open_store(
    url_or_path: str | None,
    *,
    ttl: float | None = None,
    secret: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES,
    max_items: int = DEFAULT_MAX_ITEMS,
    max_chain: int = DEFAULT_MAX_CHAIN,
    signature_ttl: float = DEFAULT_SIGNATURE_TTL,
    max_signatures: int = DEFAULT_MAX_SIGNATURES,
) -> ResponseStore:
    """The store ``url_or_path`` names, not yet connected (it connects on first use).

    - ``None``: a :class:`SQLiteStore` at :func:`default_path`;
    - ``redis://...``, ``rediss://...`` or ``unix://...``: a :class:`RedisStore`
      (the ``redis`` package, in the ``server`` extra, is imported then);
    - ``sqlite:///relative/file`` or ``sqlite:////absolute/file`` (SQLAlchemy's
      spelling), or a plain path (``~`` expanded): a :class:`SQLiteStore` there.

    The keyword arguments are the stores' own (see :class:`SQLiteStore`). Raises
    ``ValueError`` for another URL scheme.
    """
    if url_or_path is not None and url_or_path.startswith(_REDIS_SCHEMES):
        from ._redis import RedisStore

        return RedisStore(
            url_or_path,
            ttl=ttl,
            secret=secret,
            timeout=timeout,
            max_record_bytes=max_record_bytes,
            max_items=max_items,
            max_chain=max_chain,
            signature_ttl=signature_ttl,
            max_signatures=max_signatures,
        )
    path: Path | None = None
    if url_or_path is not None:
        if url_or_path.startswith("sqlite:///"):
            url_or_path = url_or_path.removeprefix("sqlite:///")
        elif _SCHEME.match(url_or_path):
            scheme = url_or_path.partition("://")[0]
            raise ValueError(
                f"a store is a path, sqlite:///path, redis://, rediss:// or unix://; not {scheme}://"
            )
        if not url_or_path:
            raise ValueError("the store's path is empty")
        path = Path(url_or_path).expanduser()
    return SQLiteStore(
        path,
        ttl=ttl,
        secret=secret,
        timeout=timeout,
        max_record_bytes=max_record_bytes,
        max_items=max_items,
        max_chain=max_chain,
        signature_ttl=signature_ttl,
        max_signatures=max_signatures,
    )


def store_location(url_or_path: str | None) -> str:
    """Where the store ``url_or_path`` names keeps responses, for people: the SQLite
    file's absolute path, or the Redis URL without its user and password."""
    if url_or_path is not None and url_or_path.startswith(_REDIS_SCHEMES):
        parts = urlsplit(url_or_path)
        host = parts.netloc.rpartition("@")[2]
        return f"Redis at {parts.scheme}://{host}{parts.path}"
    if url_or_path is None:
        path = default_path()
    else:
        path = Path(url_or_path.removeprefix("sqlite:///")).expanduser()
    return f"SQLite file {path.absolute()}"
