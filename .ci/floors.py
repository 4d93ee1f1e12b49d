"""Print pip constraints pinning each runtime dependency of rxgem to its floor.

Reads ``[project].dependencies`` in the pyproject.toml given (default: the one beside
``.ci``) and prints ``name==X`` for each ``name>=X``: the lowest versions a user's
resolver may pick, for CI's floors job (``.ci/run``). A runtime dependency without a
``>=`` floor is an error: nobody would know which oldest release it must work with.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*)")


def floors(pyproject: Path) -> dict[str, str]:
    """Each runtime dependency's name and the version of its ``>=`` specifier."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    found: dict[str, str] = {}
    for requirement in project["dependencies"]:
        match = _REQUIREMENT.match(requirement)
        if match is None:
            raise SystemExit(f"floors: cannot read the requirement {requirement!r}")
        name, specifiers = match.groups()
        lows = [s.strip()[2:].strip() for s in specifiers.split(",") if s.strip()[:2] == ">="]
        if len(lows) != 1:
            raise SystemExit(f"floors: {requirement!r} has no single >= floor in {pyproject}")
        found[name] = lows[0]
    return found


def main(argv: list[str]) -> None:
    default = Path(__file__).resolve().parent.parent / "pyproject.toml"
    pyproject = Path(argv[1]) if len(argv) > 1 else default
    for name, version in floors(pyproject).items():
        print(f"{name}=={version}")


if __name__ == "__main__":
    main(sys.argv)
