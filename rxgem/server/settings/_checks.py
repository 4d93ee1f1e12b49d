"""The checks of the server's settings that stand alone (a store's location, a CORS
origin), and the error every check raises."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

__all__ = ["SettingsError", "check_origin", "check_store"]

_STORE_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
_STORE_SCHEMES: Final = frozenset({"sqlite", "redis", "rediss", "unix"})


class SettingsError(ValueError):
    """Settings that cannot make a server (the message says which and why, without secrets)."""


def check_store(store: str) -> None:
    """A store is a path, ``sqlite:///path`` or a Redis URL (:func:`rxgem.store.open_store`)."""
    if not store.strip():
        raise SettingsError("store must be a path, sqlite:///path or redis://...; not empty")
    scheme = _STORE_SCHEME.match(store)
    if scheme is not None and scheme.group(1).lower() not in _STORE_SCHEMES:
        raise SettingsError(
            f"store must be a path, sqlite:///path, redis://, rediss:// or unix://;"
            f" not {scheme.group(1)}://"
        )


def check_origin(origin: str) -> None:
    if origin == "*":
        return
    split = urlsplit(origin)
    if (
        split.scheme not in ("http", "https")
        or not split.hostname
        or origin != f"{split.scheme}://{split.netloc}"
    ):
        raise SettingsError(
            f"a CORS origin is a scheme and host (and port), like https://chat.example.com,"
            f" or *; not {origin!r}"
        )
