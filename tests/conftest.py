"""The suite's configuration (the helpers the tests share are in ``pipeline_harness.py``):

- Hypothesis is derandomized (profile ``rxgem``: the same examples on every run, no example
  database); ``--hypothesis-profile=rxgem-explore`` draws fresh ones for a local bug hunt.
- With rxgem compiled (an editable install with a C compiler, see ``setup.py``), a
  compiled module whose source was edited since stops the run, naming the fix.
- The recorded captures in ``../shared/captures`` (``RXGEM_SHARED_CAPTURES`` overrides the path)
  are an external corpus: the tests marked ``shared_captures`` run only when the folder is there;
  when it is not, they are deselected and the summary says so once, by name.
- The suite never writes into the user's own data: ``XDG_DATA_HOME`` points at a fresh
  temporary folder for the run (servers started without a ``store`` keep their responses
  and thought signatures in a store under it, and subprocesses inherit it).
- Codex CLI (npm ``@openai/codex``, not a Python package) is found by the ``codex`` fixture:
  ``RXGEM_CODEX``, else where ``.ci/run`` installs it (``CODEX_CACHE``), else ``PATH``; the
  tests that need it skip, saying so, when it is in none of them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from pipeline_harness import SHARED_CAPTURES

import rxgem

settings.register_profile("rxgem", derandomize=True, database=None, print_blob=True)
settings.register_profile("rxgem-explore", derandomize=False, database=None, print_blob=True)
settings.load_profile("rxgem")

_SHARED_NOT_RUN = pytest.StashKey[int]()
CODEX_CACHE = Path.home() / ".cache" / "rxgem-test-tools" / "codex" / "node_modules" / ".bin"


def pytest_configure(config: pytest.Config) -> None:
    # the default store (rxgem.store.default_path) of every server the tests start
    data = Path(tempfile.mkdtemp(prefix="rxgem-tests-data-"))
    os.environ["XDG_DATA_HOME"] = str(data)
    config.add_cleanup(lambda: shutil.rmtree(data, ignore_errors=True))
    if rxgem._build.STALE:  # the tests would not test the code as compiled: say so, stop
        raise pytest.UsageError(
            f"rxgem's compiled build is stale: {', '.join(rxgem._build.STALE)} changed since"
            " it was built. Rebuild with `.venv/bin/pip install -e .` (about a minute), or test"
            " the pure-Python sources: `RXGEM_PURE_PYTHON=1 .venv/bin/python -m pytest`."
        )
    config.addinivalue_line(
        "markers", "shared_captures: uses the recorded captures in ../shared/captures"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if SHARED_CAPTURES.is_dir():
        return
    missing = [item for item in items if item.get_closest_marker("shared_captures")]
    if missing:
        items[:] = [item for item in items if not item.get_closest_marker("shared_captures")]
        config.hook.pytest_deselected(items=missing)
        config.stash[_SHARED_NOT_RUN] = len(missing)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    count = config.stash.get(_SHARED_NOT_RUN, 0)
    if count:
        terminalreporter.write_line(
            f"shared captures not found at {SHARED_CAPTURES}: {count} capture tests not run",
            yellow=True,
        )


@pytest.fixture(scope="session")
def codex() -> str:
    """The ``codex`` executable: ``$RXGEM_CODEX``, else ``.ci/run``'s install, else ``PATH``."""
    chosen = os.environ.get("RXGEM_CODEX")
    if chosen and not os.access(chosen, os.X_OK):
        pytest.fail(f"RXGEM_CODEX={chosen} is not an executable")
    found = chosen or shutil.which("codex", path=str(CODEX_CACHE)) or shutil.which("codex")
    if found is None:
        pytest.skip(
            "Codex CLI is not installed: `npm install --prefix ~/.cache/rxgem-test-tools/codex"
            " @openai/codex` (.ci/run does), or set RXGEM_CODEX to its executable"
        )
    try:
        subprocess.run([found, "--version"], capture_output=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        pytest.skip(f"Codex CLI at {found} does not run here: {error!r}")
    return found
