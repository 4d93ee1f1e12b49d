"""CI's floors job (``.ci/floors``, run by ``.ci/run``) pins every runtime dependency.

``.ci/floors.py`` derives the pins from ``[project].dependencies``; these tests read the same
list with ``packaging`` (another parser) and check that each dependency is pinned to the lower
bound a user's resolver may pick, that a dependency without one is refused, and that
``.ci/run`` runs the job on the layers below the server.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
FLOORS = ROOT / ".ci" / "floors.py"


def pins(pyproject: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(FLOORS), str(pyproject)], capture_output=True, text=True, check=False
    )


def test_every_runtime_dependency_is_pinned_to_its_floor() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    expected = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        (floor,) = [s.version for s in requirement.specifier if s.operator == ">="]
        expected[requirement.name] = floor
    done = pins(ROOT / "pyproject.toml")
    assert done.returncode == 0, done.stderr
    assert dict(line.split("==") for line in done.stdout.split()) == expected


def test_a_runtime_dependency_without_a_floor_is_refused(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\ndependencies = ["reactivex>=6.1.1,<7", "httpx"]\n',
        encoding="utf-8",
    )
    done = pins(pyproject)
    assert done.returncode != 0
    assert "'httpx' has no single >= floor" in done.stderr


def test_ci_runs_the_floors_job_on_the_layers_below_the_server() -> None:
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    job = (ROOT / ".ci" / "floors").read_text(encoding="utf-8")
    assert 'bash "$floors/.ci/floors" "$floors"' in run
    assert "python3 .ci/floors.py pyproject.toml > .ci-floors.txt" in job
    assert "-c .ci-floors.txt" in job
    command = job[job.index(".venv-floors/bin/python -m pytest") :].split("\nrc=")[0]
    for layer in ("tests/core", "tests/operators", "tests/request", "tests/transport"):
        assert layer in command
