"""The entry point installed before the command became the package :mod:`rxgem.cli`.

An editable install made before then runs ``rxgem._cli:main``; until it is reinstalled
(``pip install -e .``, which writes ``rxgem.cli:main``), this keeps it working.
"""

from __future__ import annotations

import sys

from .cli import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
