"""The Gemini API's ``generateContent`` upstream."""

from __future__ import annotations

from typing import Final

from .._generate_content import GenerateContent

__all__ = ["GEMINI"]

GEMINI: Final = GenerateContent("generate-content", "gemini", "gcp.gemini", "api_key")
"""A client's own token is a Gemini API key."""
