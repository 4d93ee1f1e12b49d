"""The package boundaries hold: what ``import rxgem`` loads, and who imports whose privates.

- ``import rxgem`` (translating bytes one already has) loads no HTTP library and no web
  framework: httpx comes with the transport's names on first use, Starlette and uvicorn
  with the server.
- ``rxgem.bridge`` (``iterate``, ``aiterate``, the flow gate) stands on the ground floor:
  it imports nothing of rxgem and no HTTP library.
- ``rxgem.transport`` is HTTP only: of rxgem it imports the core (errors, ``GeminiApi``)
  and the bridge (the flow gate); composing it with the pipeline (the operators, the
  converter) is ``rxgem.client``'s, the one composition layer.
- The server and the in-process transport (``rxgem.OpenAITransport``) do their
  transport's work only: they import no pipeline package (``rxgem.operators``,
  ``rxgem.converter``, ``rxgem.request``, ``rxgem.client``); what is asked of Gemini is
  composed by ``rxgem.gateway``, below both.
- No module reaches into another package's private modules (``from ..core._x import``,
  ``from .._bridge import``): each package's face, its ``__init__``, exports what the
  others use. The root package's own modules (``rxgem/*.py``) count as one package.
- No two modules import each other, even through imports deferred into a function or
  loaded by name (``importlib.import_module`` of a lazy name): each cycle is a module
  that cannot be understood, tested or moved without the other. No package but the
  command's own imports ``rxgem.cli``: the command stands on top of the server.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "rxgem"

HEAVY = ("httpx", "httpcore", "starlette", "uvicorn")


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _loaded_by(statement: str) -> str:
    return _run(
        f"{statement}; import sys; print(sorted(m for m in sys.modules"
        f" if m.split('.')[0] in {HEAVY!r}))"
    )


def test_import_rxgem_loads_no_http_library_nor_web_framework() -> None:
    assert _loaded_by("import rxgem") == "[]"


def test_the_in_process_transport_loads_no_web_framework() -> None:
    # rxgem.OpenAITransport works with the core dependencies alone: httpx, not the server's
    loaded = _loaded_by("import rxgem.inprocess")
    assert "'httpx'" in loaded
    assert "starlette" not in loaded
    assert "uvicorn" not in loaded


def test_the_in_process_transport_imports_nothing_of_the_server() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {'.'.join(parts)}"
        for path in sorted((PACKAGE / "inprocess").rglob("*.py"))
        for line, parts in _imports(path)
        if parts[0] == "rxgem" and _home(parts) in ("server", "cli")
    ]
    assert found == [], "what the server and the transport share goes below both (rxgem.replies)"


def test_the_bridge_loads_no_http_library() -> None:
    assert _loaded_by("import rxgem.bridge") == "[]"


def test_the_lazy_names_still_load_on_first_use() -> None:
    out = _run(
        "import rxgem, sys; names = [rxgem.from_gemini, rxgem.from_interactions, rxgem.stream_chat,"
        " rxgem.RetryPolicy, rxgem.OpenAITransport, rxgem.chat_completions,"
        " rxgem.to_gemini_request];"
        " print(all(callable(n) for n in names), 'httpx' in sys.modules)"
    )
    assert out == "True True"


def _module_name(path: Path, root: Path = ROOT) -> list[str]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imports(path: Path, root: Path = ROOT) -> list[tuple[int, list[str]]]:
    """Every module or name of rxgem (or of an HTTP library) that ``path`` imports,
    anywhere in it (functions and ``TYPE_CHECKING`` blocks too), as dotted parts."""
    name = _module_name(path, root)
    package = name if path.name == "__init__.py" else name[:-1]
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = base + (node.module.split(".") if node.module else [])
            found += [(node.lineno, [*module, alias.name]) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")) for alias in node.names]
    return [(line, parts) for line, parts in found if parts[0] in ("rxgem", *HEAVY)]


def _home(parts: list[str], root: Path = ROOT) -> str:
    """The top-level package of ``rxgem.x...``: ``x`` for a subpackage, ``""`` for the
    root package's own modules."""
    if len(parts) < 2 or not (root / "rxgem" / parts[1]).is_dir():
        return ""
    return parts[1]


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _crossings(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """(file, line, private module) for each import of another package's private module."""
    found = []
    for path in sorted((root / "rxgem").rglob("*.py")):
        importer = _home(_module_name(path, root), root)
        for line, parts in _imports(path, root):
            if parts[0] != "rxgem" or _home(parts, root) == importer:
                continue
            private = next((i for i, part in enumerate(parts) if _private(part)), None)
            if private is not None:
                module = ".".join(parts[: private + 1])
                found.append((path.relative_to(root).as_posix(), line, module))
    return sorted(found)


def test_no_module_imports_another_packages_private_modules() -> None:
    unexpected = [f"{file}:{line}: {module}" for file, line, module in _crossings()]
    assert unexpected == [], "import these from the package's __init__ instead"


def test_the_check_finds_every_kind_of_crossing(tmp_path: Path) -> None:
    files = {
        "__init__.py": "from . import _build\nfrom .core import x\n",
        "_build.py": "",
        "_bridge.py": "from .core import x\n",
        "core/__init__.py": "from ._x import x\n",
        "core/_x.py": "x = 1\n",
        "server/__init__.py": "",
        "server/_s.py": (
            "from .. import _bridge\nfrom ..core import _x\nfrom ..core import x\n"
            "def f() -> None:\n    from ..core._x import x\n"
            "import rxgem.core._x\nfrom ._t import t\n"
        ),
    }
    for name, text in files.items():
        (tmp_path / "rxgem" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "rxgem" / name).write_text(text, encoding="utf-8")
    assert _crossings(tmp_path) == [
        ("rxgem/server/_s.py", 1, "rxgem._bridge"),
        ("rxgem/server/_s.py", 2, "rxgem.core._x"),
        ("rxgem/server/_s.py", 5, "rxgem.core._x"),
        ("rxgem/server/_s.py", 6, "rxgem.core._x"),
    ]


def test_the_bridge_imports_nothing_of_rxgem_nor_http() -> None:
    for path in sorted((PACKAGE / "bridge").glob("*.py")):
        for line, parts in _imports(path):
            assert parts[:2] == ["rxgem", "bridge"], f"{path.name}:{line}: {parts}"


KNOWN_CYCLES: dict[frozenset[str], str] = {}
"""Cycles there now, each with the change that ends it; remove an entry once it lands
(and add none: move what both modules need into a third)."""


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under ``if TYPE_CHECKING:``: names for the type checker, not run."""
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            hidden |= {id(inner) for part in node.body for inner in ast.walk(part)}
    return hidden


def _module_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each module of rxgem (dotted) and the modules of rxgem it imports when it runs: at
    the top, in functions (deferred), and by name through ``importlib.import_module``: each
    relative name the module spells (a table of lazy attributes), and, for an
    ``f".{name}"``, each of its names that is a module. ``from x import y`` is the module
    ``x.y`` when there is one, else ``x``. Not the imports under ``TYPE_CHECKING``."""
    paths = {".".join(_module_name(path, root)): path for path in (root / "rxgem").rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]

        def absolute(spec: str, here: list[str] = here) -> str:
            level = len(spec) - len(spec.lstrip("."))
            return ".".join([*here[: len(here) - level + 1], spec.lstrip(".")]).rstrip(".")

        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = _type_checking_only(tree)
        nodes = [node for node in ast.walk(tree) if id(node) not in hidden]
        targets: list[str] = []
        for node in nodes:
            if isinstance(node, ast.ImportFrom):
                module = absolute("." * node.level + (node.module or ""))
                targets += [
                    f"{module}.{alias.name}" if f"{module}.{alias.name}" in paths else module
                    for alias in node.names
                ]
            elif isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
        by_name = [
            node.args[0]
            for node in nodes
            if isinstance(node, ast.Call)
            and ast.unparse(node.func).endswith("import_module")
            and node.args
        ]
        if by_name:
            texts = [
                node.value
                for node in nodes
                if isinstance(node, ast.Constant) and isinstance(node.value, str)
            ]
            targets += [absolute(text) for text in texts if re.fullmatch(r"\.+\w[\w.]*", text)]
            if any(ast.unparse(arg).startswith("f'.{") for arg in by_name):
                targets += [absolute(f".{text}") for text in texts if text.isidentifier()]
        graph[name] = {target for target in targets if target in paths} - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = {stack.pop()}
            while module not in component:
                component.add(stack.pop())
            if len(component) > 1:
                found.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycles_counting_deferred_imports() -> None:
    cycles = [sorted(cycle) for cycle in _cycles(_module_graph()) if cycle not in KNOWN_CYCLES]
    assert cycles == [], "move what both modules need into a third"


def test_the_known_cycles_are_still_there() -> None:
    # An entry whose cycle is gone would hide a new one between the same modules.
    assert set(KNOWN_CYCLES) <= set(_cycles(_module_graph()))


def test_no_package_but_the_command_imports_it() -> None:
    graph = _module_graph()
    named = [
        f"{module} -> {other}"
        for module, others in sorted(graph.items())
        if not module.startswith("rxgem.cli")
        for other in sorted(others)
        if other == "rxgem.cli" or other.startswith("rxgem.cli.")
    ]
    assert named == [], "the command stands on the server, not the other way round"


def test_the_cycle_check_finds_deferred_and_lazy_imports(tmp_path: Path) -> None:
    files = {
        "__init__.py": (
            "import importlib\n"
            "def __getattr__(name):\n"
            "    return importlib.import_module(f'.{name}', __name__)\n"
            "_LAZY = frozenset({'viz'})\n"
        ),
        "viz/__init__.py": "from .. import items\n",
        "items.py": "def f():\n    import rxgem\n",
        "a.py": "def f():\n    from . import b\n",
        "b.py": "from .a import f\n",
        "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import d\n",
        "d.py": "from . import c\n",
        "server/__init__.py": "import importlib\n_LAZY = {'run': '..cli.serve'}\n"
        "def g(n):\n    return importlib.import_module(_LAZY[n], __name__)\n",
        "cli/__init__.py": "",
        "cli/serve.py": "from ..server import g\n",
    }
    for name, text in files.items():
        (tmp_path / "rxgem" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "rxgem" / name).write_text(text, encoding="utf-8")
    graph = _module_graph(tmp_path)
    assert sorted(sorted(cycle) for cycle in _cycles(graph)) == [
        ["rxgem", "rxgem.items", "rxgem.viz"],
        ["rxgem.a", "rxgem.b"],
        ["rxgem.cli.serve", "rxgem.server"],
    ]
    assert graph["rxgem.server"] == {"rxgem.cli.serve"}


TRANSPORT_IMPORTS = {"transport", "core", "bridge"}
"""What ``rxgem.transport`` may import of rxgem: no operators, converter or client."""


def test_the_transport_imports_of_rxgem_only_the_core_and_the_bridge() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {'.'.join(parts)}"
        for path in sorted((PACKAGE / "transport").rglob("*.py"))
        for line, parts in _imports(path)
        if parts[0] == "rxgem" and _home(parts) not in TRANSPORT_IMPORTS
    ]
    assert found == [], "compose the transport with the pipeline in rxgem.client"


PIPELINE = {"operators", "converter", "request", "client"}
"""The pipeline's packages: what a request's translation and its answer are made of."""


def _pipeline_imports(package: str, root: Path = ROOT) -> list[str]:
    return [
        f"{path.relative_to(root).as_posix()}:{line}: {'.'.join(parts)}"
        for path in sorted((root / "rxgem" / package).rglob("*.py"))
        for line, parts in _imports(path, root)
        if parts[0] == "rxgem" and _home(parts, root) in PIPELINE
    ]


def test_the_server_and_the_in_process_transport_import_no_pipeline_package() -> None:
    # they do their transport's work only (HTTP, framing); the gateway composes the rest
    assert _pipeline_imports("server") == [], "ask rxgem.gateway instead"
    assert _pipeline_imports("inprocess") == [], "ask rxgem.gateway instead"


def test_the_pipeline_check_finds_every_kind_of_import(tmp_path: Path) -> None:
    files = {
        "__init__.py": "",
        "operators/__init__.py": "",
        "request/__init__.py": "",
        "server/__init__.py": "",
        "server/_a.py": (
            "from ..operators import x\nimport rxgem.request\n"
            "def f() -> None:\n    from rxgem.converter import y\nfrom ..gateway import G\n"
        ),
    }
    for name, text in files.items():
        (tmp_path / "rxgem" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "rxgem" / name).write_text(text, encoding="utf-8")
    (tmp_path / "rxgem" / "converter").mkdir()
    assert _pipeline_imports("server", tmp_path) == [
        "rxgem/server/_a.py:1: rxgem.operators.x",
        "rxgem/server/_a.py:2: rxgem.request",
        "rxgem/server/_a.py:4: rxgem.converter.y",
    ]
