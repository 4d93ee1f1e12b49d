"""The core's folders are its sides, and data flows one way: readers → items → outputs.

``rxgem/core/`` has a folder per side (see its docstring). A reader (``sse/``, ``gemini/``,
and a future ``interactions/``) never imports an output, the items (``slots/``) never
import an output, and the chat output never imports the Responses one (which maps
finish reasons and usage through ``chat/``). The top-level modules (errors, option checks,
the core protocol) are for every side; ``pipeline/`` declares the options, assembles the
stages and imports them all.

Each side has a face (its ``__init__.py`` with ``__all__``) and is crossed only through it:
no module outside a side's folder, in the core or anywhere in rxgem, imports that side's
private modules.
"""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

RXGEM = Path(__file__).resolve().parents[2] / "rxgem"
CORE = RXGEM / "core"

MAY_IMPORT: dict[str, set[str]] = {
    "sse": set(),
    "gemini": {"sse"},
    "interactions": {"sse", "gemini", "slots"},
    "slots": {"gemini"},
    "openai": {"gemini", "slots"},
    "chat": {"gemini", "slots", "openai"},
    "responses": {"gemini", "slots", "openai", "chat"},
    "pipeline": {"sse", "gemini", "interactions", "slots", "openai", "chat", "responses"},
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


def _side_privates_imported(path: Path, root: Path = RXGEM) -> set[str]:
    """The private modules of the core's sides (``rxgem.core.gemini._parser``, ...) that
    ``path`` (a module under ``root``, rxgem's folder) imports from outside their side,
    anywhere in it (functions and ``TYPE_CHECKING`` blocks too)."""
    relative = path.relative_to(root.parent).with_suffix("").parts
    package = list(relative[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            targets = [module] + [[*module, alias.name] for alias in node.names]
        elif isinstance(node, ast.Import):
            targets = [alias.name.split(".") for alias in node.names]
        else:
            continue
        for parts in targets:
            if (
                parts[:2] == ["rxgem", "core"]
                and len(parts) > 3
                and parts[2] in MAY_IMPORT
                and parts[3].startswith("_")
                and package[:3] != parts[:3]
            ):
                found.add(".".join(parts[:4]))
    return found


def test_no_module_outside_a_side_imports_its_private_modules() -> None:
    crossings = [
        f"{path.relative_to(RXGEM.parent).as_posix()} imports {module}"
        for path in sorted(RXGEM.rglob("*.py"))
        for module in sorted(_side_privates_imported(path))
    ]
    assert crossings == [], "import it from the side's face (its __init__)"


def test_the_privates_check_sees_relative_absolute_and_deferred_imports(tmp_path: Path) -> None:
    root = tmp_path / "rxgem"
    module = root / "core" / "chat" / "_m.py"
    module.parent.mkdir(parents=True)
    module.write_text(
        "from ..gemini._models import Part\nimport rxgem.core.sse._decoder\n"
        "def f() -> None:\n    from ..slots import _items\n"
        "from ._models import M\nfrom ..openai import url_citations\nfrom .. import chat\n"
    )
    assert _side_privates_imported(module, root) == {
        "rxgem.core.gemini._models",
        "rxgem.core.sse._decoder",
        "rxgem.core.slots._items",
    }
    outside = root / "operators" / "_op.py"
    outside.parent.mkdir()
    outside.write_text("from ..core.chat._sse import encode_chunk\nfrom ..core.chat import X\n")
    assert _side_privates_imported(outside, root) == {"rxgem.core.chat._sse"}


def test_each_side_has_a_face_that_offers_what_it_lists() -> None:
    for side in MAY_IMPORT:
        face = importlib.import_module(f"rxgem.core.{side}")
        listed = getattr(face, "__all__", None)
        assert listed, f"rxgem.core.{side} has no __all__"
        assert len(listed) == len(set(listed)), side
        missing = [name for name in listed if not hasattr(face, name)]
        assert missing == [], side
        unlisted = {
            name
            for name, value in vars(face).items()
            if not name.startswith("_") and not isinstance(value, types.ModuleType)
        }
        assert unlisted <= set(listed), f"rxgem.core.{side} offers names beyond its __all__"
