"""The notebooks run top to bottom on this interpreter, offline; they are committed clean, and
their rendered pages in docs/notebooks/ show what they do now (``python -m notebooks``)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `python -m pytest` has it; a bare `pytest` may not
    sys.path.insert(0, str(ROOT))

from notebooks import render  # noqa: E402

NOTEBOOKS = render.notebooks()
NO_DIAGRAM = {"02_tool_call_slots.ipynb"}  # its diagrams are side by side, in HTML


def test_there_are_five_narrated_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01_tour.ipynb",
        "02_tool_call_slots.ipynb",
        "03_live_stream.ipynb",
        "04_rich_content.ipynb",
        "05_your_operator.ipynb",
    ]
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        kinds = [cell.cell_type for cell in notebook.cells]
        assert kinds[0] == "markdown", path.name
        assert kinds.count("markdown") >= 3, path.name


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a cell has outputs"
            assert cell.execution_count is None, f"{path.name}: a cell has an execution count"


@pytest.fixture(scope="module")
def executed() -> Iterator[Callable[[Path], Any]]:
    """Each notebook run once, top to bottom, offline, on this interpreter (cached)."""
    runs: dict[Path, Any] = {}

    def run(path: Path) -> Any:
        if path not in runs:
            runs[path] = render.execute(path)  # CellExecutionError names the failing cell
        return runs[path]

    with render.this_interpreter():
        yield run


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_clean(path: Path, executed: Callable[[Path], Any]) -> None:
    notebook = executed(path)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    errors = [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert errors == []
    shown = [o for cell in code for o in cell.outputs if o.output_type == "execute_result"]
    if path.name not in NO_DIAGRAM:
        assert any("image/svg+xml" in o.data for o in shown), "no diagram was drawn"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_rendered_page_is_current(path: Path, executed: Callable[[Path], Any]) -> None:
    page = render.PAGES / f"{path.stem}.html"
    fix = f"render it again: .venv/bin/python -m notebooks {path.stem}"
    assert page.exists(), f"docs/notebooks/{page.name} is missing: {fix}"
    notebook = executed(path)
    now = (render.cells_fingerprint(notebook), render.outputs_fingerprint(notebook, path.name))
    assert render.recorded(page) == now, f"docs/notebooks/{page.name} is stale: {fix}"
    if path.name not in NO_DIAGRAM:
        assert "<svg" in page.read_text(encoding="utf-8"), "the page shows no diagram"
