"""Release habits: the version written once, the license shipped, the descriptions true.

The version lives in ``rxgem/_version.py``; ``pyproject.toml`` reads it from there and the
installed metadata must agree with the package. Every short description of rxgem names both
upstreams it reads (generateContent and the Interactions API) and both outputs it writes
(Chat Completions and Responses).
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

import rxgem

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _assigned_versions() -> list[str]:
    """Each module of rxgem (and setup.py) that assigns a literal to a version-like name."""
    found = []
    for path in [ROOT / "setup.py", *sorted((ROOT / "rxgem").rglob("*.py"))]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                names = [ast.unparse(t) for t in node.targets]
                if any(re.fullmatch(r"_*version_*", n, re.IGNORECASE) for n in names):
                    found.append(str(path.relative_to(ROOT)))
    return found


def test_the_version_is_written_once_in_rxgem_version() -> None:
    project = PYPROJECT["project"]
    assert "version" not in project, "pyproject.toml reads the version from rxgem/_version.py"
    assert "version" in project["dynamic"]
    dynamic = PYPROJECT["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "rxgem._version.__version__"}
    assert _assigned_versions() == ["rxgem/_version.py"]
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?", rxgem.__version__)


def test_the_installed_metadata_has_the_packages_version() -> None:
    installed = importlib.metadata.version("rxgem")
    assert installed == rxgem.__version__, "reinstall (pip install -e .) after a version change"


def test_the_changelog_has_a_section_for_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{rxgem.__version__}]" in changelog


def test_the_license_is_apache_2_in_full_and_declared() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    lines = [line.strip() for line in text.splitlines()]
    assert lines[1:3] == ["Apache License", "Version 2.0, January 2004"]
    assert "END OF TERMS AND CONDITIONS" in lines
    assert "APPENDIX: How to apply the Apache License to your work." in lines
    assert lines[-1] == "limitations under the License."
    assert len(lines) == 202
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]


def test_the_build_backend_reads_a_license_expression() -> None:
    # setuptools 77 is the first to write License-Expression and License-File (PEP 639); an
    # older one refuses a license string. Read from pyproject.toml, not from an install, which
    # may predate the declaration.
    (setuptools,) = [r for r in PYPROJECT["build-system"]["requires"] if r.startswith("setuptools")]
    assert setuptools == "setuptools>=77"


_UPSTREAMS_AND_OUTPUTS = ("generateContent", "Interactions API", "Chat Completions", "Responses")


def _opening(path: Path, lines: int) -> str:
    text = path.read_text(encoding="utf-8")
    return " ".join(text.splitlines()[:lines])


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("pyproject.toml description", PYPROJECT["project"]["description"]),
        ("rxgem's docstring", (rxgem.__doc__ or "").split("\n\n")[0]),
        ("README.md's opening", _opening(ROOT / "README.md", 6)),
        ("docs/index.md's opening", _opening(ROOT / "docs" / "index.md", 6)),
    ],
)
def test_every_description_names_both_upstreams_and_both_outputs(where: str, text: str) -> None:
    flat = " ".join(text.replace("`", "").split())
    missing = [name for name in _UPSTREAMS_AND_OUTPUTS if name not in flat]
    assert not missing, f"{where} does not name {missing}: {flat[:300]!r}"
