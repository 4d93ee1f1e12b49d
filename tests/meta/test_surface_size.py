"""The public surface stays small.

The public surface is the names in the ``__all__`` of ``rxgem`` and of each of its public
top-level packages and modules (``rxgem.core``, ``rxgem.testing``, ``rxgem.store``, ...,
found on disk, so a new package counts from its first commit). A name several of them
export counts once. Deeper faces (``rxgem.core.chat``, ``rxgem.server.stream``, the CLI's
command modules) are how rxgem's own packages cross into a folder, not a place users
import from, and do not count.

A name leaves ``__all__`` when only rxgem itself uses it: it stays on the package's face
(outside ``__all__``) only while another rxgem package imports it from there, and
otherwise lives in the package's private modules.
"""

from __future__ import annotations

import ast
import importlib
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rxgem"
CORE = PACKAGE / "core"

MAX_NAMES = 200
"""Distinct names across every public package's ``__all__`` (h11 has 23, reactivex 41,
httpx 70)."""

MAX_TESTING = 30
"""Names in ``rxgem.testing.__all__``: the fake servers, the marble kit, the checkers."""


def _public_modules() -> list[str]:
    """``rxgem`` and its top-level packages and modules whose names are not private."""
    names = ["rxgem"]
    for path in sorted(PACKAGE.iterdir()):
        name = path.name.removesuffix(".py")
        if name.startswith(("_", ".")):
            continue
        if (path.is_dir() and (path / "__init__.py").exists()) or path.suffix == ".py":
            names.append(f"rxgem.{name}")
    return names


def _surface() -> dict[str, set[str]]:
    return {
        name: set(getattr(importlib.import_module(name), "__all__", ()))
        for name in _public_modules()
    }


def _count(surface: dict[str, set[str]]) -> int:
    return len(set().union(*surface.values()))


def test_the_public_surface_is_at_most_200_names() -> None:
    surface = _surface()
    sizes = ", ".join(f"{name} {len(names)}" for name, names in surface.items() if names)
    assert _count(surface) <= MAX_NAMES, f"{_count(surface)} public names: {sizes}"


def test_the_count_sees_every_top_level_package() -> None:
    modules = _public_modules()
    for name in ("rxgem.core", "rxgem.testing", "rxgem.store", "rxgem.items", "rxgem.server"):
        assert name in modules
    assert not any(part.startswith("_") for name in modules for part in name.split("."))


def test_rxgem_testing_is_at_most_30_names() -> None:
    import rxgem.testing

    assert len(set(rxgem.testing.__all__)) <= MAX_TESTING, sorted(rxgem.testing.__all__)


def _face_names(module: types.ModuleType) -> set[str]:
    """What ``module``'s face holds that looks public: rxgem's names, not its submodules
    nor what it imports from the standard library for its own use."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and str(getattr(value, "__module__", "rxgem")).startswith("rxgem")
        and name not in ("annotations", "TYPE_CHECKING")
    }


def _imported_from(face: str) -> set[str]:
    """The names modules of other rxgem packages import from ``face`` (``rxgem.x``)."""
    home = face.split(".")[1]
    found: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if len(parts) > 2 and parts[1] == home:
            continue
        package = parts[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + (node.module.split(".") if node.module else []))
            if module == face:
                found |= {alias.name for alias in node.names}
    return found


def _used_by_the_face(module: types.ModuleType) -> set[str]:
    """The names the face's own code uses (a function of the face calling a helper)."""
    tree = ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8"))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _reexported(module: types.ModuleType) -> set[str]:
    """The face's names that come from the package's own private modules."""
    return {
        name
        for name in _face_names(module)
        if any(
            part.startswith("_")
            for part in str(getattr(getattr(module, name), "__module__", "_")).split(".")
        )
        or not hasattr(getattr(module, name), "__module__")
    }


def test_a_face_holds_beyond_its_all_only_what_other_rxgem_packages_import() -> None:
    extra = {}
    for name in _public_modules():
        module = importlib.import_module(name)
        if name in ("rxgem", "rxgem.core") or not hasattr(module, "__all__"):
            continue
        beyond = _reexported(module) - set(module.__all__) - _imported_from(name)
        beyond -= _used_by_the_face(module)
        if beyond:
            extra[name] = sorted(beyond)
    assert extra == {}, "import these from the package's private modules instead"
