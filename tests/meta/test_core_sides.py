"""The core's folders are its sides, and data flows one way: readers → items → outputs.

``rxgem/core/`` has a folder per side (see its docstring). A reader (``sse/``, ``gemini/``,
and a future ``interactions/``) never imports an output, the items (``slots/``) never
import an output, and the chat output never imports the Responses one (which maps
finish reasons and usage through ``chat/``). The top-level modules (errors, options, the
core protocol) are for every side; ``_options`` assembles the stages and imports them all.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "rxgem" / "core"

MAY_IMPORT: dict[str, set[str]] = {
    "sse": set(),
    "gemini": {"sse"},
    "interactions": {"sse", "gemini", "slots"},
    "slots": {"gemini"},
    "openai": {"gemini", "slots"},
    "chat": {"gemini", "slots", "openai"},
    "responses": {"gemini", "slots", "openai", "chat"},
}
"""Each side of the core and the other sides it may import (its own and the top-level
modules always)."""


def _sides_imported(path: Path) -> set[str]:
    """The core's sides that ``path`` (a module in a side's folder) imports, anywhere in it
    (functions and ``TYPE_CHECKING`` blocks too)."""
    package = ["rxgem", "core", path.parent.name]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            targets = [[*module, alias.name] for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        else:
            continue
        for parts in targets:
            if parts[:2] == ["rxgem", "core"] and len(parts) > 2 and parts[2] in MAY_IMPORT:
                found.add(parts[2])
    return found


def test_every_folder_of_the_core_is_a_known_side() -> None:
    folders = {path.name for path in CORE.iterdir() if (path / "__init__.py").exists()}
    assert folders == set(MAY_IMPORT), "name the new side and what it may import"


def test_each_side_imports_only_the_sides_before_it() -> None:
    crossings = [
        f"{path.relative_to(CORE).as_posix()} imports {side}/"
        for name, allowed in MAY_IMPORT.items()
        for path in sorted((CORE / name).glob("*.py"))
        for side in sorted(_sides_imported(path) - allowed - {name})
    ]
    assert crossings == []


def test_the_check_sees_relative_absolute_and_deferred_imports(tmp_path: Path) -> None:
    module = tmp_path / "gemini" / "_m.py"
    module.parent.mkdir()
    module.write_text(
        "from ..chat._models import X\nimport rxgem.core.responses._sse\n"
        "def f() -> None:\n    from ..slots import _items\n"
        "from .._errors import E\nfrom ._models import M\n"
    )
    assert _sides_imported(module) == {"chat", "responses", "slots", "gemini"}
