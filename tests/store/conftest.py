"""The stores under test: each contract test runs on SQLite and on a real Redis.

Redis runs as a ``redis-server`` on 127.0.0.1 (a free port, no persistence) started
once per session; without the binary or the ``redis`` package those tests skip,
saying which is missing (``.ci/run`` installs ``redis-server``).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from redis_server import redis_url
from store_helpers import StoreFactory

from rxgem.store import ResponseStore, SQLiteStore

__all__ = ["redis_url"]  # the session's redis-server, for the tests here


_PREFIXES = itertools.count()


@pytest.fixture(params=["sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    """Makes stores of one backend that share their data within the test: a SQLite
    file in ``tmp_path``, or a key prefix of the test's own on the session's Redis."""
    if request.param == "sqlite":

        def sqlite(**options: Any) -> ResponseStore:
            return SQLiteStore(tmp_path / "responses.sqlite3", **options)

        return sqlite
    url = request.getfixturevalue("redis_url")
    prefix = f"rxgem:test{next(_PREFIXES)}:"

    def redis(**options: Any) -> ResponseStore:
        from rxgem.store import RedisStore

        return RedisStore(url, prefix=prefix, **options)

    return redis
