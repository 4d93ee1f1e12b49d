"""``open_store`` picks the backend a ``--store`` setting names; the package stays out of
``import rxgem``, and the Redis client out of ``import rxgem.store``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import run

from rxgem.store import SQLiteStore, open_store

ROOT = Path(__file__).resolve().parents[2]


def test_none_is_sqlite_at_the_default_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    store = open_store(None, ttl=5)
    assert isinstance(store, SQLiteStore)
    assert (store.path, store.ttl) == (tmp_path / "rxgem" / "responses.sqlite3", 5)
    run(store.aclose)


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        ("{tmp}/a.sqlite3", "{tmp}/a.sqlite3"),
        ("sqlite:///{tmp}/b.sqlite3", "{tmp}/b.sqlite3"),
        ("relative.sqlite3", "relative.sqlite3"),
        ("sqlite:///relative.sqlite3", "relative.sqlite3"),
        ("~/c.sqlite3", "{home}/c.sqlite3"),
    ],
)
def test_paths_and_sqlite_urls_are_sqlite(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, setting: str, expected: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    fill = {"tmp": str(tmp_path), "home": str(tmp_path / "home")}
    store = open_store(setting.format(**fill), max_record_bytes=10)
    assert isinstance(store, SQLiteStore)
    assert store.path == Path(expected.format(**fill))
    assert store.max_record_bytes == 10
    run(store.aclose)


@pytest.mark.parametrize("url", ["redis://127.0.0.1:1/0", "rediss://h:2", "unix:///tmp/r.sock"])
def test_redis_urls_are_redis(url: str) -> None:
    pytest.importorskip(
        "redis", reason="the redis package is missing (pip install 'rxgem[server]')"
    )
    from rxgem.store import RedisStore

    store = open_store(url, ttl=60, max_chain=5)
    assert isinstance(store, RedisStore)
    assert (store.ttl, store.max_chain) == (60, 5)
    run(store.aclose)


@pytest.mark.parametrize("setting", ["postgres://db/x", "http://h/", "", "sqlite:///"])
def test_other_settings_are_refused(setting: str) -> None:
    with pytest.raises(ValueError, match="store"):
        open_store(setting)


def _loaded(statement: str) -> list[str]:
    code = (
        f"{statement}; import sys; print(sorted(m for m in sys.modules"
        " if m == 'redis' or m.startswith(('redis.', 'rxgem.store'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return eval(result.stdout)  # a printed list of str


def test_import_rxgem_loads_no_store() -> None:
    assert _loaded("import rxgem") == []


def test_the_store_loads_redis_only_for_a_redis_store() -> None:
    assert "redis" not in _loaded("import rxgem.store; rxgem.store.open_store('x.sqlite3')")
    assert "redis" not in _loaded("import rxgem.store; rxgem.store.RedisStore")
    assert "redis" in _loaded("import rxgem.store; rxgem.store.open_store('redis://h')")
