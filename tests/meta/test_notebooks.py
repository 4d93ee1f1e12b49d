"""The notebooks run top to bottom on this interpreter, offline; they are committed clean."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
KERNEL = "rxgem-tests"


def test_there_are_four_narrated_notebooks() -> None:
    assert [p.name for p in NOTEBOOKS] == [
        "01_tour.ipynb",
        "02_tool_call_slots.ipynb",
        "03_live_stream.ipynb",
        "04_rich_content.ipynb",
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
def kernel_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kernelspec that runs ipykernel on this very interpreter, whatever else is installed."""
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "rxgem tests", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    return root


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_clean(
    path: Path, kernel_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_dir))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):  # offline: FakeGemini stands in
        monkeypatch.delenv(name, raising=False)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError naming the cell when one raises
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    errors = [o for cell in code for o in cell.outputs if o.output_type == "error"]
    assert errors == []
    shown = [o for cell in code for o in cell.outputs if o.output_type == "execute_result"]
    if path.name != "02_tool_call_slots.ipynb":
        assert any("image/svg+xml" in o.data for o in shown), "no diagram was drawn"
