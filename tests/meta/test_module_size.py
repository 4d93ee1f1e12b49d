"""One job per file: no module of rxgem is over 500 lines, except the data tables named here.

A module that grows past the limit does more than one job: split it by job (as
``core/chat/_chunk_builder.py`` and ``core/chat/_mapping.py``, ``server/observe/_telemetry.py`` and
``server/observe/_metrics.py``, ``server/observe/_tracing.py``). Only a table of data may be longer,
and it is named in :data:`DATA_TABLES`, with what it holds.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rxgem"

LIMIT = 500

DATA_TABLES: dict[str, str] = {
    "core/gemini/_enums.py": "the numbers of Gemini's enums, one table per proto enum and API",
}
"""The modules allowed over :data:`LIMIT`, by path under ``rxgem/``: data, not code."""


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _over(package: Path) -> dict[str, int]:
    """Each module of ``package`` over :data:`LIMIT` lines, by path, with its length."""
    return {
        path.relative_to(package).as_posix(): lines
        for path in sorted(package.rglob("*.py"))
        if (lines := _lines(path)) > LIMIT
    }


def test_no_module_is_over_the_limit_except_the_data_tables() -> None:
    over = {name: lines for name, lines in _over(PACKAGE).items() if name not in DATA_TABLES}
    assert over == {}, f"split these by job (at most {LIMIT} lines each): {over}"


def test_each_data_table_is_still_there_and_over_the_limit() -> None:
    # an entry for a module that shrank or went away would let a code module grow there
    for name in DATA_TABLES:
        assert _lines(PACKAGE / name) > LIMIT, f"{name} fits now: remove it from DATA_TABLES"


def test_the_check_counts_lines_and_finds_nested_modules(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "fits.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "sub" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "notes.txt").write_text("x\n" * (LIMIT + 1))
    assert _over(tmp_path) == {"sub/long.py": LIMIT + 1}
