"""rxgem's pytest plugin (registered as ``rxgem`` under ``pytest11``): a failed
``assert output == expect_marbles(...)`` shows both sides as marble strings
(:meth:`rxgem.testing.MarbleOutput.explain`), not as ``Marble(...)`` reprs.

pytest loads it at start-up wherever rxgem is installed: it loads nothing more
until two lists are compared after ``rxgem.testing`` was imported.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["pytest_assertrepr_compare"]


def pytest_assertrepr_compare(config: Any, op: str, left: Any, right: Any) -> list[str] | None:
    """The marble strings of a failed ``==`` between a ``MarbleOutput`` and a list of
    marbles; ``None`` (pytest's own explanation) for anything else."""
    if op != "==" or not isinstance(left, list) or not isinstance(right, list):
        return None
    if "rxgem.testing" not in sys.modules:  # no marble exists before it is imported
        return None
    from .testing import Marble, MarbleOutput

    if not all(isinstance(m, Marble) for m in (*left, *right)):
        return None
    if isinstance(left, MarbleOutput):
        return left.explain(right)
    if isinstance(right, MarbleOutput):
        return right.explain(left)
    return None
