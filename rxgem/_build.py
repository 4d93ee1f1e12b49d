"""Which build of rxgem runs: the modules compiled by mypyc, or the pure-Python sources.

``pip install`` compiles rxgem's hot modules with mypyc when a C compiler is there
(``setup.py``) and records, in ``_mypyc_build.txt`` beside this file, each compiled
module with the SHA-256 of the source it was compiled from. At ``import rxgem``, before
any of those modules is imported, this module loads their ``.py`` sources instead of the
extensions when

- the environment has ``RXGEM_PURE_PYTHON=1``, or
- a source no longer matches its extension (an editable install, then an edit), or
- mypyc's shared library, which every extension loads, cannot be imported (an editable
  install whose finder no longer maps it), or
- extensions sit beside the sources with no record (a pure reinstall over a compiled
  build, by a ``setup.py`` that left them): these warn, naming the fix, so that what runs
  is always the code as written and ``import rxgem`` never fails on a build's leftovers.

Both builds behave the same; ``rxgem.COMPILED`` tells which one is in use. Never compiled
itself, nor is ``rxgem/__init__.py``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from types import ModuleType

__all__ = [
    "GROUP_LIBRARY",
    "LEFTOVER",
    "PURE_REQUESTED",
    "RECORDED",
    "STALE",
    "compiled",
    "leftover_extensions",
    "read_record",
    "source_path",
    "stale_sources",
]

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PURE_REQUESTED: bool = os.environ.get("RXGEM_PURE_PYTHON", "") not in ("", "0")
"""``RXGEM_PURE_PYTHON`` was set (to anything but ``0``) when rxgem was imported."""


def read_record(root: str = _ROOT) -> dict[str, tuple[str, int, int]]:
    """What the build compiled: module name → (SHA-256, size, mtime in ns) of its source
    at build time (``-``: not to be checked, a wheel). Empty when the install is pure Python."""
    try:
        with open(os.path.join(root, "rxgem", "_mypyc_build.txt"), encoding="utf-8") as file:
            lines = file.read().splitlines()
    except OSError:
        return {}
    record = {}
    for line in lines:
        module, digest, size, mtime = line.split()
        record[module] = (digest, int(size), int(mtime))
    return record


def source_path(module: str, root: str = _ROOT) -> str:
    """The ``.py`` source of a module of rxgem, e.g. ``rxgem.core.sse._decoder``."""
    return os.path.join(root, *module.split(".")) + ".py"


def stale_sources(record: dict[str, tuple[str, int, int]], root: str = _ROOT) -> list[str]:
    """The compiled modules whose source differs from the one they were compiled from
    (the content is hashed only when the size or time differs)."""
    stale = []
    for module, (digest, size, mtime) in record.items():
        path = source_path(module, root)
        try:
            stat = os.stat(path)
            if digest == "-" or (stat.st_size == size and stat.st_mtime_ns == mtime):
                continue
            with open(path, "rb") as file:
                data = file.read()
        except OSError:
            continue  # an install without sources: nothing to compare
        import hashlib

        if hashlib.sha256(data).hexdigest() != digest:
            stale.append(module)
    return stale


GROUP_LIBRARY = "rxgem_mypyc__mypyc"
"""mypyc's shared library, a top-level module beside ``rxgem`` that the extension of each
compiled module loads (``setup.py``: ``GROUP + "__mypyc"``)."""


def leftover_extensions(root: str = _ROOT) -> list[str]:
    """The modules of rxgem with an extension beside their ``.py`` source, when mypyc's shared
    library sits beside the package: what a compiled build left (looked for only when
    there is no record; empty, after three ``stat`` calls, in a pure install)."""
    if not any(os.path.exists(os.path.join(root, GROUP_LIBRARY + s)) for s in EXTENSION_SUFFIXES):
        return []
    found = []
    for folder, subfolders, files in os.walk(os.path.join(root, "rxgem")):
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in files:
            stem = name.partition(".")[0]
            if name.endswith(tuple(EXTENSION_SUFFIXES)) and stem + ".py" in files:
                relative = os.path.relpath(os.path.join(folder, stem), root)
                found.append(relative.replace(os.sep, "."))
    return sorted(found)


RECORDED: dict[str, tuple[str, int, int]] = read_record()
"""The modules of the compiled build (empty when the install is pure Python)."""

LEFTOVER: list[str] = [] if RECORDED else leftover_extensions()
"""Modules with an extension that no record vouches for (their sources are loaded)."""

STALE: list[str] = stale_sources(RECORDED) if RECORDED and not PURE_REQUESTED else []
"""Compiled modules whose ``.py`` source has changed since the build (not used)."""


class _SourceFinder:
    """A meta-path finder that loads the ``.py`` source of each of ``modules``."""

    def __init__(self, modules: Sequence[str]) -> None:
        self.modules = frozenset(modules)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname not in self.modules:
            return None
        from importlib.util import spec_from_file_location  # only the pure build needs it

        leaf = fullname.rpartition(".")[2] + ".py"
        for folder in path or ():
            source = os.path.join(folder, leaf)
            if os.path.isfile(source):
                return spec_from_file_location(fullname, source)
        return None

    def invalidate_caches(self) -> None:
        pass


def _group_library_error() -> str | None:
    """Why mypyc's shared library beside the package cannot be imported, if it cannot
    (imported now, as the first compiled module would import it)."""
    from importlib import import_module
    from importlib.util import find_spec

    try:
        spec = find_spec(GROUP_LIBRARY)
        origin = spec.origin if spec is not None else None
        if origin is None:
            return f"no module named {GROUP_LIBRARY!r}"
        if os.path.realpath(os.path.dirname(origin)) != os.path.realpath(_ROOT):
            return f"the one found is another build's: {origin}"
        import_module(GROUP_LIBRARY)
    except ImportError as error:
        return str(error)
    return None


def install() -> None:
    """Load the pure-Python sources of the compiled modules, when asked or when the
    extensions cannot be trusted or loaded."""
    modules = list(RECORDED) or LEFTOVER
    if not modules:
        return
    if PURE_REQUESTED:
        pass
    elif LEFTOVER:
        _warn(
            f"{len(LEFTOVER)} modules ({LEFTOVER[0]}, ...) have extensions in {_ROOT} that "
            "no build record vouches for (a pure reinstall over a compiled build?); running "
            "the pure-Python sources. Reinstall with `pip install -e .` to remove them (or set "
            "RXGEM_PURE_PYTHON=1)."
        )
    elif STALE:
        _warn(
            f"{', '.join(STALE)} changed since rxgem was compiled; running the "
            "pure-Python sources. Rebuild with `pip install -e .` (or set "
            "RXGEM_PURE_PYTHON=1 to say you mean it)."
        )
    elif (error := _group_library_error()) is not None:
        _warn(
            f"the compiled modules cannot load their library {GROUP_LIBRARY} ({error}); "
            "running the pure-Python sources. Reinstall with `pip install -e .` (or set "
            "RXGEM_PURE_PYTHON=1)."
        )
    else:
        return
    for finder in sys.meta_path:
        if isinstance(finder, _SourceFinder):
            return
    sys.meta_path.insert(0, _SourceFinder(modules))


def _warn(message: str) -> None:
    warnings.warn(f"rxgem: {message}", RuntimeWarning, stacklevel=3)


def compiled() -> bool:
    """Whether the compiled build is in use: the compiled modules imported so far (at least
    one) are all extension modules."""
    loaded = [sys.modules[name] for name in RECORDED or LEFTOVER if name in sys.modules]
    return bool(loaded) and all(
        isinstance(getattr(module.__spec__, "loader", None), ExtensionFileLoader)
        for module in loaded
    )


install()  # at `import rxgem`, before the compiled modules are imported
