"""The notebooks, executed, as HTML pages in ``docs/notebooks/``: the diagrams without Jupyter.

``.venv/bin/python -m notebooks`` (with the ``notebooks`` extra: nbconvert writes the pages)
runs every notebook top to bottom, offline, on this interpreter and writes
``docs/notebooks/NAME.html``, the marble diagrams inline as SVG. Each page records two
fingerprints in a ``<meta name="rxgem-notebook">`` tag: one of the notebook's cells, one of
what they printed and drew. tests/meta/test_notebooks.py runs the notebooks again and checks
both, so a page that no longer shows what its notebook does fails the suite, naming this
command. Cells whose outputs differ on every run (``LIVE``: times measured on the wall
clock) are left out of the outputs fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
PAGES = HERE.parent / "docs" / "notebooks"
KERNEL = "rxgem-notebooks"
LIVE = {"03_live_stream.ipynb": {"cell-03", "cell-07"}}
"""The cells, by id, whose outputs differ between runs: 03 streams over HTTP and shows when
each chunk and piece arrived, by the wall clock (where the HTTP reads split is timing too)."""

ADDRESS = re.compile(r" at 0x[0-9a-f]+>")
"""An object's address in its default repr, different on every run."""
CREATED = re.compile(r"created(&quot;|\\\\\"|\\\"|'|\")?: ?\d+")
"""A chunk's ``created`` time (seconds since the epoch), in any quoting of its JSON."""
CALL_ID = re.compile(r"call_[0-9a-f]{24}")
"""A tool call id rxgem draws at random when the caller gives none."""
LOCAL_PORT = re.compile(r"//127\.0\.0\.1:\d+")
"""The port FakeGemini was given, free on this run."""

META = re.compile(r'<meta name="rxgem-notebook" content="cells=(\w+) outputs=([\w-]+)">')


def notebooks() -> list[Path]:
    return sorted(HERE.glob("*.ipynb"))


def cells_fingerprint(notebook: Any) -> str:
    """The cells' kinds and sources, nothing Jupyter adds when it saves."""
    cells = [[cell.cell_type, cell.source] for cell in notebook.cells]
    return _digest(cells)


def outputs_fingerprint(notebook: Any, name: str) -> str:
    """What the code cells printed and drew, but for the ``LIVE`` cells."""
    live = LIVE.get(name, set())
    outputs = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or cell.get("id") in live:
            continue
        start = len(outputs)
        for output in cell.outputs:
            if output.output_type == "stream":
                # a kernel may flush one print in two pieces: join a cell's runs of a stream
                last = outputs[-1] if len(outputs) > start else None
                if last is not None and last[0] == output.name and len(last) == 2:
                    outputs[-1] = [output.name, last[1] + output.text]
                else:
                    outputs.append([output.name, output.text])
            elif output.output_type in ("execute_result", "display_data"):
                outputs.append(sorted(output.data.items()))
            else:
                outputs.append([output.output_type])
    return _digest(outputs)


def recorded(page: Path) -> tuple[str, str] | None:
    """The (cells, outputs) fingerprints a rendered page records, if it is one."""
    found = META.search(page.read_text(encoding="utf-8")) if page.exists() else None
    return (found[1], found[2]) if found else None


@contextmanager
def this_interpreter() -> Iterator[None]:
    """Jupyter set to run ``KERNEL`` on this very interpreter, offline, in a scratch folder."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="rxgem-notebooks-") as scratch:
        root = Path(scratch)
        spec = root / "kernels" / KERNEL
        spec.mkdir(parents=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        kernel = {"argv": argv, "display_name": "rxgem", "language": "python"}
        (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
        os.environ.update(
            JUPYTER_PATH=str(root),
            JUPYTER_DATA_DIR=str(root / "data"),
            JUPYTER_RUNTIME_DIR=str(root / "runtime"),
            IPYTHONDIR=str(root / "ipython"),
        )
        for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):  # offline: FakeGemini stands in
            os.environ.pop(name, None)
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)


def execute(path: Path) -> Any:
    """The notebook run top to bottom (inside :func:`this_interpreter`)."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name=KERNEL,
        timeout=120,
        allow_errors=False,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return notebook


def render(path: Path) -> Path:
    from nbconvert import HTMLExporter  # the notebooks extra; the checks need only nbclient

    notebook = execute(path)
    html, _ = HTMLExporter().from_notebook_node(notebook)
    cells = cells_fingerprint(notebook)
    outputs = outputs_fingerprint(notebook, path.name)
    tag = f'<meta name="rxgem-notebook" content="cells={cells} outputs={outputs}">'
    html = html.replace("<head>", f"<head>\n{tag}", 1)
    page = PAGES / f"{path.stem}.html"
    page.write_text(html, encoding="utf-8")
    return page


def main(argv: list[str] | None = None) -> int:
    """Render the notebooks named (file names or stems), or all of them."""
    wanted = set(sys.argv[1:] if argv is None else argv)
    PAGES.mkdir(parents=True, exist_ok=True)
    with this_interpreter():
        for path in notebooks():
            if wanted and path.name not in wanted and path.stem not in wanted:
                continue
            print(f"rendered {render(path).relative_to(HERE.parent)}", flush=True)
    return 0


def _digest(value: object) -> str:
    text = ADDRESS.sub(" at 0x…>", json.dumps(value, sort_keys=True, ensure_ascii=False))
    text = CALL_ID.sub("call_…", CREATED.sub("created: 0", text))
    text = LOCAL_PORT.sub("//127.0.0.1:…", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
