"""The stores under test: each contract test runs on every backend."""

from __future__ import annotations

import itertools
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rxgem.store import ResponseStore, SQLiteStore

StoreFactory = Callable[..., ResponseStore]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


_PREFIXES = itertools.count()


@pytest.fixture(params=["sqlite"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Makes stores of one backend that share their data within the test: a SQLite
    file in ``tmp_path``, or a key prefix of the test's own on the session's Redis."""
    if request.param == "sqlite":

        def sqlite(**options: Any) -> ResponseStore:
            return SQLiteStore(tmp_path / "responses.sqlite3", **options)

        return sqlite
    raise AssertionError(request.param)
