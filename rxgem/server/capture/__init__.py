"""The live inspector's capture: the recent upstream exchanges kept as they stream
(``_inspector``), redacted (``_redact``), in the spool every worker reads (``_spool``).
"""

from __future__ import annotations

from ._inspector import Inspector, serving_request
from ._spool import Kept, Spool

__all__ = [
    "Inspector",
    "Kept",
    "Spool",
    "serving_request",
]
