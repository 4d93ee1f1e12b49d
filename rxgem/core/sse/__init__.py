"""Reading an event stream: the incremental SSE decoder (bytes → :class:`~rxgem.core.SSEEvent`).

General to ``text/event-stream`` (WHATWG), with the framings Gemini also sends (raw JSON
blocks, the JSON array body). Any reader of an SSE upstream starts here. Its names are
exported by :mod:`rxgem.core`; nothing is exported from this folder.
"""

from ._decoder import SSEDecoder
from ._event import SSEEvent

__all__ = [
    "SSEDecoder",
    "SSEEvent",
]
