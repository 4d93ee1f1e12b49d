"""The code stays clean: ruff, ruff format and mypy --strict, as part of the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize(
    "command",
    [
        ("ruff", "check", "rxgem", "tests"),
        ("ruff", "format", "--check", "rxgem", "tests"),
        ("mypy", "--strict", "rxgem"),
    ],
    ids=["ruff-check", "ruff-format", "mypy-strict"],
)
def test_tool_is_clean(command: tuple[str, ...]) -> None:
    result = _run(*command)
    assert result.returncode == 0, result.stdout + result.stderr


def test_test_modules_have_unique_names() -> None:
    # The test folders are not packages: pytest imports each module by its bare name, so two
    # with one name stop the whole run at collection ("import file mismatch").
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if path.name == "conftest.py" or "node_modules" in path.parts:
            continue
        if path.name in seen:
            clashes.append(f"{seen[path.name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen.setdefault(path.name, path)
    assert not clashes, "test modules share a name: " + "; ".join(clashes)
