"""Running the app in uvicorn: the connection guard, the config, one process or several
(``_runner``).
"""

from __future__ import annotations

from ._runner import ABORT_EXTENSION, LIMITS_STATE, connection_limits, uvicorn_options

__all__ = [
    "ABORT_EXTENSION",
    "LIMITS_STATE",
    "connection_limits",
    "uvicorn_options",
]
