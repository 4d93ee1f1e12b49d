"""The Gemini reader: ``generateContent`` responses, their models, enums and parser.

:class:`~rxgem.core.ResponseParser` turns each SSE event into a
:class:`~rxgem.core.GenerateContentResponse` (enums sent as numbers read by
:data:`~rxgem.core.GeminiApi`), and :class:`~rxgem.core.SlotTable` (in ``slots/``) turns
those into items. Its names are exported by :mod:`rxgem.core`.
"""

from ._enums import GeminiApi
from ._models import (
    Candidate,
    FunctionCall,
    GenerateContentResponse,
    ModalityTokenCount,
    Part,
    PartialArg,
    UsageMetadata,
)
from ._parser import ResponseParser, check_api

__all__ = [
    "Candidate",
    "FunctionCall",
    "GeminiApi",
    "GenerateContentResponse",
    "ModalityTokenCount",
    "Part",
    "PartialArg",
    "ResponseParser",
    "UsageMetadata",
    "check_api",
]
