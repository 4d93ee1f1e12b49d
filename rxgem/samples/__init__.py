"""Sample Gemini captures shipped with rxgem, written for it from the documented wire format.

Each ``<name>.sse`` is a complete ``streamGenerateContent?alt=sse`` response body;
``expected.json`` states what a correct translation of each one is. They feed the
demo (``rxgem demo``), the documentation and the tests. See ``README.md`` here.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["expected", "names", "read"]


def names() -> list[str]:
    """The sample file names (``"text.sse"``, …), sorted."""
    folder = resources.files(__name__)
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".sse"))


def read(name: str) -> bytes:
    """The bytes of one sample (``name`` with or without ``.sse``)."""
    if not name.endswith(".sse"):
        name += ".sse"
    if name not in names():
        raise FileNotFoundError(f"no sample named {name!r}; samples: {', '.join(names())}")
    return (resources.files(__name__) / name).read_bytes()


def expected() -> dict[str, Any]:
    """The expected outcome of every sample, keyed by file name (``README.md`` here).

    Each choice's ``tool_calls`` are in the assembled message's shape (``index``,
    ``id``, ``type``, ``function.name``, ``function.arguments`` as JSON text,
    ``extra_content.google.thought_signature``); ``id`` is ``None`` where Gemini sent
    none and the translator mints one.
    """
    data: dict[str, Any] = json.loads((resources.files(__name__) / "expected.json").read_text())
    return data
