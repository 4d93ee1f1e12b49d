"""The server's folders are its concerns, each crossed only through its face, none upward.

``rxgem/server/`` keeps the app's assembly and its routes at the top (``_app``, ``_chat``,
``_probes``, ``responses/``) and a folder per concern below them: ``http/`` (the request's
HTTP form, sans-IO), ``observe/`` (access log, metrics, traces), ``settings/``, ``guard/``
(auth, admission, the budgets), ``run/`` (uvicorn), ``capture/`` (the inspector's record of
the upstream exchanges), ``inspector/`` (its page) and ``stream/`` (answering over ASGI).

- A folder imports only the folders :data:`MAY_IMPORT` lists for it, which never list one
  another both ways: a concern is understood, tested and moved with what is below it.
- A folder by concern imports none of the server's top-level modules (the app, the
  routes), but for :data:`TOP_LEVEL_IMPORTS`.
- Every other module of rxgem imports a folder through its face (its ``__init__``, with
  ``__all__``), never one of its private modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "rxgem" / "server"

MAY_IMPORT: dict[str, set[str]] = {
    "http": set(),
    "observe": set(),
    "settings": {"http"},
    "guard": {"settings"},
    "run": {"http", "settings"},
    "capture": {"settings"},
    "stream": {"observe", "guard", "run"},
    "inspector": {"observe", "settings", "guard", "run", "capture"},
    "responses": {"observe", "settings", "guard", "stream"},
}
"""Each folder of the server and the other folders it may import."""

TOP_LEVEL_IMPORTS: dict[str, set[str]] = {
    "inspector": {"_handling"},  # reply_response: an error reply as a response
    "responses": {"_handling"},
}
"""The server's top-level modules a folder imports: the Responses routes stand beside the
chat ones, on the same request handling."""


def _targets(path: Path, root: Path) -> list[tuple[int, list[str]]]:
    """Each module or name of ``rxgem.server`` that ``path`` imports, anywhere in it
    (functions and ``TYPE_CHECKING`` blocks too), as its parts below ``rxgem.server``."""
    parts = list(path.relative_to(root.parent.parent).with_suffix("").parts)
    package = parts[:-1]
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            found += [(node.lineno, [*module, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")) for alias in node.names]
    return [(line, t[2:]) for line, t in found if t[:2] == ["rxgem", "server"] and len(t) > 2]


def _folders(root: Path) -> set[str]:
    return {path.name for path in root.iterdir() if (path / "__init__.py").exists()}


def _upward(root: Path) -> list[str]:
    """Each import of a folder by another that may not, or of a top-level module by a
    folder beyond :data:`TOP_LEVEL_IMPORTS`."""
    folders = _folders(root)
    found = []
    for folder in sorted(folders):
        for path in sorted((root / folder).rglob("*.py")):
            for line, parts in _targets(path, root):
                head = parts[0]
                where = f"{path.relative_to(root).as_posix()}:{line}"
                if head in folders and head != folder and head not in MAY_IMPORT.get(folder, ()):
                    found.append(f"{where} imports {head}/")
                elif (root / f"{head}.py").exists() and head not in TOP_LEVEL_IMPORTS.get(
                    folder, ()
                ):
                    found.append(f"{where} imports {head}")
    return found


def _past_the_face(root: Path) -> list[str]:
    """Each import of a folder's private module from outside the folder, in all of rxgem."""
    folders = _folders(root)
    found = []
    for path in sorted(root.parent.rglob("*.py")):
        inside = path.relative_to(root.parent).parts
        home = inside[1] if inside[0] == root.name and len(inside) > 2 else None
        for line, parts in _targets(path, root):
            private = len(parts) > 1 and parts[1].startswith("_") and not parts[1].startswith("__")
            if parts[0] in folders and parts[0] != home and private:
                found.append(f"{path.relative_to(root.parent).as_posix()}:{line}: {parts}")
    return found


def test_every_folder_of_the_server_is_a_known_concern() -> None:
    assert _folders(SERVER) == set(MAY_IMPORT), "name the new folder and what it may import"


def test_no_two_folders_may_import_each_other() -> None:
    order: list[str] = []
    left = dict(MAY_IMPORT)
    while left:
        ready = sorted(name for name, below in left.items() if below <= set(order))
        assert ready, f"a circle among {sorted(left)}"
        order += ready
        for name in ready:
            del left[name]


def test_each_folder_imports_only_what_is_below_it() -> None:
    assert _upward(SERVER) == []


def test_every_folder_is_crossed_through_its_face() -> None:
    assert _past_the_face(SERVER) == [], "export it from the folder's __init__ instead"


def test_every_face_says_what_it_exports() -> None:
    for folder in sorted(_folders(SERVER)):
        tree = ast.parse((SERVER / folder / "__init__.py").read_text(encoding="utf-8"))
        exported = [
            node
            for node in tree.body
            if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
        ]
        assert exported, f"{folder}/__init__.py has no __all__"


def test_the_checks_see_every_kind_of_import(tmp_path: Path) -> None:
    root = tmp_path / "rxgem" / "server"
    files = {
        "__init__.py": "",
        "_app.py": "from .guard import x\nfrom .guard._auth import y\n",
        "_routes.py": "",
        "http/__init__.py": "__all__ = []\n",
        "settings/__init__.py": "__all__ = []\nfrom ..http import h\n",
        "guard/__init__.py": "__all__ = []\n",
        "guard/_auth.py": (
            "from ..settings import s\nfrom .._routes import r\n"
            "def f() -> None:\n    import rxgem.server.run._runner\n"
        ),
        "run/__init__.py": "__all__ = []\n",
        "run/_runner.py": "from ..guard import _auth\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (tmp_path / "rxgem" / "__init__.py").write_text("")
    (tmp_path / "rxgem" / "cli.py").write_text("from rxgem.server.settings._s import s\n")
    assert _upward(root) == [
        "guard/_auth.py:2 imports _routes",
        "guard/_auth.py:4 imports run/",
        "run/_runner.py:1 imports guard/",
    ]
    assert _past_the_face(root) == [
        "cli.py:1: ['settings', '_s', 's']",
        "server/_app.py:2: ['guard', '_auth', 'y']",
        "server/guard/_auth.py:4: ['run', '_runner']",
        "server/run/_runner.py:1: ['guard', '_auth']",
    ]
