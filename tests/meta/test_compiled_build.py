"""The optional compiled build (``setup.py``): in use where it can be, and the pure-Python
fallback (``RXGEM_PURE_PYTHON=1``, or an install without a C compiler) passes the
conformance suite."""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
from pathlib import Path

import pytest

import rxgem
from rxgem import _build

ROOT = Path(__file__).resolve().parents[2]


def _setup_py_modules() -> list[str]:
    """The modules that ``setup.py`` compiles (its ``COMPILED`` list)."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "COMPILED":
            paths: list[str] = ast.literal_eval(node.value)
            return [path.removesuffix(".py").replace("/", ".") for path in paths]
    raise AssertionError("setup.py has no COMPILED list")


def _c_compiler() -> str | None:
    """The C compiler a build here would use (``CC``, else Python's own), if on PATH."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""
    return shutil.which(command.split()[0]) if command.split() else None


@pytest.mark.skipif(
    _build.PURE_REQUESTED, reason="RXGEM_PURE_PYTHON is set: the pure-Python build is asked for"
)
@pytest.mark.skipif(_c_compiler() is None, reason="no C compiler: the install is pure Python")
def test_with_a_c_compiler_the_compiled_build_is_in_use() -> None:
    # So the suite, which CI runs after `pip install -e '.[dev]'` with gcc at hand, tests
    # the compiled build: every module setup.py compiles is an extension module.
    fix = "reinstall (`pip install -e .`) and read the build's warnings"
    assert sorted(_build.RECORDED) == sorted(_setup_py_modules()), f"not compiled: {fix}"
    assert rxgem.COMPILED, fix
    for name in _build.RECORDED:
        module = sys.modules[name]
        assert module.__spec__ is not None
        assert isinstance(module.__spec__.loader, ExtensionFileLoader), name
        assert str(module.__file__).endswith(tuple(EXTENSION_SUFFIXES)), name


_PURE_RUN = """
import importlib, sys
import pytest
import rxgem
assert not rxgem.COMPILED
for name in sys.argv[1].split(","):
    module = importlib.import_module(name)
    assert module.__file__.endswith(".py"), module.__file__
sys.exit(pytest.main(sys.argv[2:]))
"""


@pytest.mark.skipif(not rxgem.COMPILED, reason="the suite itself runs the pure-Python build")
def test_the_pure_python_build_passes_the_conformance_suite() -> None:
    # RXGEM_PURE_PYTHON=1 loads the .py sources of every compiled module, as an install
    # without a C compiler has them; they pass the conformance suite and the cores' tests.
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            _PURE_RUN,
            ",".join(_setup_py_modules()),
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/integration/test_conformance.py",
            "tests/core",
            "tests/operators",
        ],
        cwd=ROOT,
        env={**os.environ, "RXGEM_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert " passed" in result.stdout


def _record_of(path: Path, module: str) -> dict[str, tuple[str, int, int]]:
    stat = path.stat()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return {module: (digest, stat.st_size, stat.st_mtime_ns)}


def test_an_edited_source_is_stale_and_a_touched_one_is_not(tmp_path: Path) -> None:
    source = tmp_path / "rxgem" / "core" / "_mod.py"
    source.parent.mkdir(parents=True)
    source.write_text("X = 1\n")
    record = _record_of(source, "rxgem.core._mod")
    assert _build.stale_sources(record, str(tmp_path)) == []
    os.utime(source, ns=(1, 1))  # a checkout: new time, same bytes
    assert _build.stale_sources(record, str(tmp_path)) == []
    source.write_text("X = 2\n")  # an edit
    assert _build.stale_sources(record, str(tmp_path)) == ["rxgem.core._mod"]
    assert _build.stale_sources({"rxgem.core._mod": ("-", 0, 0)}, str(tmp_path)) == []
    assert _build.stale_sources({"rxgem.core._gone": ("0", 0, 0)}, str(tmp_path)) == []


# --------------------------------------------------------------------------- leftovers of a build
#
# What an editable compiled build leaves in the tree: an extension beside each compiled
# module's source, mypyc's shared library beside the package, and the record. The files made
# here have those names but are empty: loading any of them fails, so each test passes only if
# `import rxgem` loads the sources instead (or, after a pure reinstall, the files are gone).

_REPORT = "import rxgem; print(rxgem.COMPILED); import rxgem.operators, rxgem.converter"


def _copy_sources(target: Path) -> None:
    """The files ``pip install -e`` needs, without extensions, records or caches."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "_mypyc_build.txt")
    shutil.copytree(ROOT / "rxgem", target / "rxgem", ignore=ignore)
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, target / name)


def _leave_compiled_build(root: Path, *, record: bool = True, library: bool = True) -> None:
    suffix = EXTENSION_SUFFIXES[0]
    lines = []
    for module in _setup_py_modules():
        source = Path(_build.source_path(module, str(root)))
        source.with_name(source.stem + suffix).write_bytes(b"")
        (digest, size, mtime) = _record_of(source, module)[module]
        lines.append(f"{module} {digest} {size} {mtime}\n")
    if library:
        (root / (_build.GROUP_LIBRARY + suffix)).write_bytes(b"")
    if record:
        (root / "rxgem" / "_mypyc_build.txt").write_text("".join(lines), encoding="utf-8")


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("RXGEM_PURE_PYTHON", "PYTHONPATH")}
    return subprocess.run(
        command, cwd=cwd, env={**clean, **env}, capture_output=True, text=True, timeout=600
    )


def test_the_group_library_name_is_the_one_setup_py_builds() -> None:
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    values = {
        ast.unparse(node.targets[0]): ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
    }
    assert values["GROUP"] + "__mypyc" == _build.GROUP_LIBRARY


@pytest.mark.parametrize(
    ("record", "library", "warning"),
    [
        (
            True,
            False,
            "cannot load their library rxgem_mypyc__mypyc",
        ),  # the editable finder lost it
        (True, True, "cannot load their library rxgem_mypyc__mypyc"),  # it is there, unloadable
        (False, True, "no build record vouches for"),  # a pure reinstall that left them
    ],
)
def test_extensions_that_cannot_be_trusted_or_loaded_give_the_sources(
    tmp_path: Path, record: bool, library: bool, warning: str
) -> None:
    root = tmp_path / "tree"
    _copy_sources(root)
    _leave_compiled_build(root, record=record, library=library)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd in (root, elsewhere):
        result = _run([sys.executable, "-c", _REPORT], cwd, PYTHONPATH=str(root))
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.split() == ["False"]
        assert warning in result.stderr


def test_a_pure_install_without_leftovers_says_nothing(tmp_path: Path) -> None:
    _copy_sources(tmp_path)
    result = _run(
        [sys.executable, "-W", "error::RuntimeWarning", "-c", _REPORT],
        tmp_path,
        PYTHONPATH=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["False"]


def _build_isolation() -> list[str]:
    """Build with this interpreter's setuptools when it can make a wheel; else let pip fetch
    the build requirements (``pyproject.toml``)."""
    import importlib.metadata as metadata

    version = tuple(int(n) for n in metadata.version("setuptools").split(".")[:2])
    # 77 reads pyproject.toml's license expression (PEP 639); it makes wheels without `wheel`
    can = version >= (77, 0)
    return ["--no-build-isolation"] if can else []


def test_a_pure_editable_reinstall_removes_a_compiled_build(tmp_path: Path) -> None:
    # `RXGEM_COMPILE=0 pip install -e .` over a compiled editable install: the extensions, the
    # shared library and the record go, and rxgem runs from the sources wherever it starts.
    repo, venv, elsewhere = tmp_path / "repo", tmp_path / "venv", tmp_path / "elsewhere"
    _copy_sources(repo)
    _leave_compiled_build(repo)
    elsewhere.mkdir()
    # A venv that sees this one's packages (no download of rxgem's dependencies) but not its
    # rxgem, so that pip leaves this environment alone.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    deps = tmp_path / "deps"
    deps.mkdir()
    purelib = Path(sysconfig.get_paths()["purelib"])
    for entry in purelib.iterdir():
        if not entry.name.lower().startswith(("rxgem", "__editable__", "_virtualenv")):
            (deps / entry.name).symlink_to(entry)
    python = venv / "bin" / "python"
    site = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path
    )
    (Path(site.stdout.strip()) / "deps.pth").write_text(f"{deps}\n", encoding="utf-8")

    install = [str(python), "-m", "pip", "install", "-q", "--no-deps", *_build_isolation()]
    result = _run([*install, "-e", str(repo)], tmp_path, RXGEM_COMPILE="0")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    left = sorted(str(p.relative_to(repo)) for p in repo.rglob("*") if p.name.endswith(".so"))
    assert left == []
    assert not (repo / "rxgem" / "_mypyc_build.txt").exists()
    for cwd in (repo, elsewhere):
        result = _run([str(python), "-W", "error::RuntimeWarning", "-c", _REPORT], cwd)
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.split() == ["False"]
    result = _run([str(venv / "bin" / "rxgem"), "--help"], elsewhere)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "usage" in result.stdout
