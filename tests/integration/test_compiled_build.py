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
