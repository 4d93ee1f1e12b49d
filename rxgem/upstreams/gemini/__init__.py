"""``generateContent`` on the Gemini API (``generativelanguage.googleapis.com``): an API key
(``x-goog-api-key``), tool schemas as full JSON Schema, the Gemini API's enum numbers."""

from ._upstream import GEMINI

__all__ = ["GEMINI"]
