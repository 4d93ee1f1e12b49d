"""The optional compiled build: the hot modules of rxgem compiled with mypyc.

``pip install .`` (or ``-e .``) compiles the modules in :data:`COMPILED` to C
extensions when it can; the package's metadata is in ``pyproject.toml``. When it
cannot (no C compiler, a failed compile, mypyc missing, or ``RXGEM_COMPILE=0``),
the install still succeeds and gives the pure-Python package, with a warning; an
editable install then removes the extensions an earlier compiled one left in the tree.

Beside the extensions the build writes ``rxgem/_mypyc_build.txt``: one line per
compiled module with the SHA-256 of the source it was compiled from. ``import
rxgem`` reads it (``rxgem/_build.py``): ``RXGEM_PURE_PYTHON=1`` loads the ``.py``
sources instead of the extensions, and an extension older than its source (an
editable install, then an edit) is not used.
"""

from __future__ import annotations

import hashlib
import os
import sys
import traceback
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.editable_wheel import editable_wheel

ROOT = Path(__file__).resolve().parent

COMPILED = [
    "rxgem/core/sse/_decoder.py",
    "rxgem/core/sse/_event.py",
    "rxgem/core/sse/_raw_json.py",
    "rxgem/core/sse/_named.py",
    "rxgem/core/gemini/_parser.py",
    "rxgem/core/gemini/_enums.py",
    "rxgem/core/slots/_table.py",
    "rxgem/core/slots/_policies.py",
    "rxgem/core/slots/_json_growth.py",
    "rxgem/core/slots/_json_path.py",
    "rxgem/core/slots/_args_table.py",
    "rxgem/core/slots/_finish_buffer.py",
    "rxgem/core/chat/_chunk_builder.py",
    "rxgem/core/chat/_choice.py",
    "rxgem/core/interactions/_parser.py",
    "rxgem/core/interactions/_reader.py",
    "rxgem/core/interactions/_parts.py",
    "rxgem/core/chat/_mapping.py",
    "rxgem/core/openai/_annotations.py",
    "rxgem/core/openai/_parts.py",
    "rxgem/operators/_core_operator.py",
    "rxgem/converter/_converter.py",
    "rxgem/converter/_responses_converter.py",
]
"""The modules compiled by mypyc: the per-event path of a stream. Not compiled:
``core/slots/_policy_protocol`` (``SlotPolicy`` is a Protocol users may subclass, which a compiled
class forbids), the msgspec models, and everything off that path."""

GROUP = "rxgem_mypyc"
"""mypyc's shared library, a top-level module beside ``rxgem``: ``rxgem_mypyc__mypyc.*.so``
(the extensions of the modules above are stubs that load it)."""

RECORD = "rxgem/_mypyc_build.txt"

PLACEHOLDER = [Extension(GROUP + "__mypyc", sources=[])]
"""Stands for the extensions until ``build_ext`` runs mypyc (``setup.py`` is also run just
to read metadata, where type-checking would be wasted)."""


def _warn(message: str) -> None:
    print(f"rxgem: {message}", file=sys.stderr)


def _module(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".")


def _remove_inplace_build() -> None:
    """Remove the extensions and the record that an earlier editable (in-place) build left in
    the source tree, so that a pure install never loads them."""
    stale: list[Path] = [ROOT / RECORD]
    for pattern in ("*.so", "*.pyd"):  # rxgem has no other extensions
        stale += ROOT.glob(GROUP + "__mypyc." + pattern)
        stale += (ROOT / "rxgem").rglob(pattern)
    for file in stale:
        if file.exists():
            file.unlink()


class OptionalMypycBuild(build_ext):
    """``build_ext`` that runs mypyc, and falls back to the pure package on any failure."""

    _record: list[tuple[str, str, int, int]] = []  # noqa: RUF012 (set once per build)

    def finalize_options(self) -> None:
        if self.distribution.ext_modules == PLACEHOLDER:
            self.distribution.ext_modules = self._mypycify()
        super().finalize_options()

    def _mypycify(self) -> list[Extension]:
        if os.environ.get("RXGEM_COMPILE", "1") == "0":
            _warn("RXGEM_COMPILE=0: installing the pure-Python package")
            return []
        try:
            from mypyc.build import mypycify  # only the build needs mypy

            os.chdir(ROOT)
            # mypyc's own cache, apart from the project's `mypy` runs (other options)
            os.environ.setdefault("MYPY_CACHE_DIR", str(ROOT / "build" / "mypyc-cache"))
            self._record = self._snapshot()
            # Errors only in the compiled modules: the others may import what the build
            # environment lacks (httpx, openai), and only their types are needed here.
            options = ["--follow-imports=silent", "--ignore-missing-imports"]
            extensions: list[Extension] = mypycify(
                [*options, *COMPILED], opt_level="3", group_name=GROUP
            )
        except (Exception, SystemExit) as error:  # mypyc missing, or its errors
            self._fall_back(error)
            return []
        return extensions

    def run(self) -> None:
        self._clean_inplace()
        if not self.extensions:
            return
        try:
            super().run()
        except (Exception, SystemExit) as error:  # no compiler, a compile error
            self._fall_back(error)
            self.extensions = []
            self._clean_inplace()
            return
        self._write_record()

    def _fall_back(self, error: BaseException) -> None:
        traceback.print_exc()
        _warn(
            f"the compiled build failed ({type(error).__name__}: {error}); installing "
            "the pure-Python package, which does the same, slower"
        )

    def _snapshot(self) -> list[tuple[str, str, int, int]]:
        """The compiled sources as mypyc is about to read them: module, SHA-256, size and
        mtime in ns."""
        snapshot = []
        for path in COMPILED:
            source = ROOT / path
            stat = source.stat()
            digest = hashlib.sha256(source.read_bytes()).hexdigest()
            snapshot.append((_module(path), digest, stat.st_size, stat.st_mtime_ns))
        return snapshot

    def _write_record(self) -> None:
        """The record, for ``rxgem/_build.py`` to spot an edited source in an editable
        install (in a wheel, whose sources nobody edits, ``-`` skips the check)."""
        if self._editable():
            lines = [f"{m} {digest} {size} {mtime}\n" for m, digest, size, mtime in self._record]
            target = ROOT / RECORD
        else:
            lines = [f"{m} - 0 0\n" for m, *_ in self._record]
            target = Path(self.build_lib) / RECORD
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(lines), encoding="utf-8")

    def _editable(self) -> bool:
        return bool(self.inplace or getattr(self, "editable_mode", False))

    def _clean_inplace(self) -> None:
        if self._editable():
            _remove_inplace_build()

    def get_outputs(self) -> list[str]:
        outputs: list[str] = super().get_outputs()
        if self.extensions:
            outputs.append(str(Path(self.build_lib) / RECORD))
        return outputs


class PureEditableCleanup(editable_wheel):
    """``editable_wheel`` (``pip install -e .``) that, when the build is pure Python
    (``RXGEM_COMPILE=0``, or the compiled build failed), removes the extensions and the record
    of an earlier compiled editable build from the tree. ``build_ext`` cannot: with no
    extension left, setuptools does not run it."""

    def run(self) -> None:
        super().run()
        if not self.distribution.ext_modules:
            _remove_inplace_build()


setup(
    ext_modules=PLACEHOLDER,
    cmdclass={"build_ext": OptionalMypycBuild, "editable_wheel": PureEditableCleanup},
)
