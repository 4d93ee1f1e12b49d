"""The request side is mirrored: readers, the typed form, writers, and the translations.

``rxgem/request/read/`` holds the two readers (Chat Completions, Responses),
``write/`` the two writers (``generateContent``, Interactions), ``form/`` the typed form
between them and ``translate/`` the four translations, each a reader and a writer. A
reader knows no writer and a writer no reader; the form knows neither.
"""

from __future__ import annotations

import ast
from pathlib import Path

REQUEST = Path(__file__).resolve().parents[2] / "rxgem" / "request"

SIDES = {
    "read": {"chat", "responses"},
    "write": {"generate_content", "interactions"},
}
FORBIDDEN = {
    "read": {"write", "translate"},
    "write": {"read", "translate"},
    "form": {"read", "write", "translate"},
}


def _imported_folders(source: str, package: tuple[str, ...]) -> set[str]:
    """The folders of ``rxgem/request`` a module in ``package`` (its folders below
    ``rxgem/request``) imports from, relatively or absolutely."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            keep = len(package) - node.level + 1
            if keep < 0:
                continue  # above rxgem.request
            parts = [*package[:keep], *(node.module.split(".") if node.module else [])]
            found |= {parts[0]} if parts else {alias.name for alias in node.names}
        elif node.module and node.module.startswith("rxgem.request."):
            found.add(node.module.split(".")[2])
    return found


def _folders_of(path: Path) -> set[str]:
    package = path.relative_to(REQUEST).parent.parts
    return _imported_folders(path.read_text(encoding="utf-8"), package)


def test_each_side_has_its_two_folders() -> None:
    for side, folders in SIDES.items():
        present = {p.name for p in (REQUEST / side).iterdir() if (p / "__init__.py").exists()}
        assert present == folders, side
    assert (REQUEST / "form" / "__init__.py").exists()
    assert (REQUEST / "translate" / "__init__.py").exists()


def test_a_reader_knows_no_writer_and_the_form_neither() -> None:
    crossings = []
    for top, forbidden in FORBIDDEN.items():
        for path in sorted((REQUEST / top).rglob("*.py")):
            wrong = _folders_of(path) & forbidden
            if wrong:
                crossings.append(f"{path.relative_to(REQUEST)}: {sorted(wrong)}")
    assert crossings == []


def test_the_check_sees_every_kind_of_crossing() -> None:
    at = ("read", "chat")
    assert _imported_folders("from ...write import generate_content", at) == {"write"}
    assert _imported_folders("from ...write.interactions._steps import x", at) == {"write"}
    assert _imported_folders("from rxgem.request.translate import x", at) == {"translate"}
    assert _imported_folders("from .. import responses", at) == {"read"}
    assert _imported_folders("from ....core import x", at) == set()
