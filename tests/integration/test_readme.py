"""The README's Python examples run as written, in order, in one namespace.

Blocks preceded by ``<!-- not-run: … -->`` need a real Gemini key and the network:
they are compiled (so they at least stay valid Python) but not run.
"""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"(<!-- not-run:[^>]*-->\n)?```python\n(.*?)```", re.DOTALL)


def test_readme_python_examples_run() -> None:
    blocks = BLOCK.findall(README.read_text(encoding="utf-8"))
    runnable = [code for marker, code in blocks if not marker]
    assert len(runnable) >= 3
    assert len(blocks) > len(runnable)
    namespace: dict[str, object] = {"__name__": "readme"}
    for marker, code in blocks:
        compiled = compile(code, str(README), "exec")
        if not marker:
            exec(compiled, namespace)
