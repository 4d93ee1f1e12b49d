"""OpenAI Chat Completions requests → Gemini requests (sans-IO).

:func:`to_gemini_request` translates a request body; the rest of this package are
its parts (messages, parameters, tool schemas, thought signatures, model families).
"""

from ._messages import SignatureWarning
from ._models import ModelFamily, model_family
from ._params import SchemaWarning, Unsupported, UnsupportedWarning
from ._request import to_gemini_request
from ._signatures import PLACEHOLDER

__all__ = [
    "PLACEHOLDER",
    "ModelFamily",
    "SchemaWarning",
    "SignatureWarning",
    "Unsupported",
    "UnsupportedWarning",
    "model_family",
    "to_gemini_request",
]
