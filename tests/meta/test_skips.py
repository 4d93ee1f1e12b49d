"""Every skip for a missing tool names the command that installs it.

``pytest.importorskip(name)`` alone says "could not import 'name'", and a newcomer is left to
guess the package: each call gives a ``reason`` with ``pip install …``. A ``pytest.skip`` whose
message says something is missing or not installed names an install command too
(``pip install``, ``apt-get install`` or ``npm install``).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
INSTALL = ("pip install", "apt-get install", "npm install")
MISSING = ("missing", "not installed", "no ", "could not import")


def calls(name: str) -> list[tuple[str, ast.Call]]:
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == name
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "pytest"
            ):
                found.append((f"{path.relative_to(TESTS)}:{node.lineno}", node))
    return found


def text(node: ast.expr) -> str:
    """The literal parts of a str, f-string or implicit concatenation."""
    return "".join(
        part.value
        for part in ast.walk(node)
        if isinstance(part, ast.Constant) and isinstance(part.value, str)
    )


def test_every_importorskip_names_its_install_command() -> None:
    found = calls("importorskip")
    assert found
    bad = []
    for where, call in found:
        reason = next((k.value for k in call.keywords if k.arg == "reason"), None)
        if reason is None or "pip install" not in text(reason):
            bad.append(where)
    assert bad == [], "give these a reason=... naming `pip install ...`"


def test_every_skip_for_something_missing_names_its_install_command() -> None:
    bad = []
    for where, call in calls("skip"):
        message = text(call.args[0]) if call.args else ""
        if any(word in message for word in MISSING) and not any(c in message for c in INSTALL):
            bad.append(f"{where}: {message}")
    assert bad == []
