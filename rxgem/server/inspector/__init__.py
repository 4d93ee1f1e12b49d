"""The live inspector's page at ``/inspect``: its routes and feed (``_page``), the page and
script (``_assets``), browser sessions (``_session``) and diagrams (``_draw``, loaded only
with the inspector on).
"""

from __future__ import annotations

from ._page import InspectorGate

__all__ = [
    "InspectorGate",
]
