"""Moved to :mod:`rxgem.bridge`; this alias is left only for ``rxgem/_cli.py``'s two
``from ._bridge import iterate`` until the CLI (being moved to ``rxgem/cli/``) imports
``rxgem.bridge``. Delete it then: nothing else may import it (tests/integration/test_boundaries.py).
"""

from .bridge import MAX_BUFFERED, aiterate, iterate

__all__ = ["MAX_BUFFERED", "aiterate", "iterate"]
