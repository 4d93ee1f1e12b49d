"""Where the SQLite store lives by default, and how its file is made private."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["create_private_file", "default_path"]


def default_path() -> Path:
    """``$XDG_DATA_HOME/rxgem/responses.sqlite3``, or ``~/.local/share/rxgem/...`` when
    ``XDG_DATA_HOME`` is unset or not absolute (as the XDG base directory spec says)."""
    base = os.environ.get("XDG_DATA_HOME", "")
    data = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return data / "rxgem" / "responses.sqlite3"


def create_private_file(path: Path) -> None:
    """Create ``path`` readable and writable by its owner only (0600), and its missing
    parent folders (0700), unless it exists. SQLite gives the ``-wal`` and ``-shm`` files
    it makes beside a database the database file's permissions.

    An existing file is never opened: closing any descriptor of a database file drops
    every POSIX lock the process holds on it, the locks SQLite's other connections in
    this process rely on (SQLite's "How To Corrupt" page, section 2.2). A file made
    here (``O_EXCL``) is one no connection has open yet."""
    if path.exists():
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        return
    os.close(fd)
