"""Vertex AI's ``generateContent`` upstream."""

from __future__ import annotations

from typing import Final

from .._generate_content import GenerateContent

__all__ = ["VERTEX"]

VERTEX: Final = GenerateContent("generate-content", "vertex", "gcp.vertex_ai", "access_token")
"""A client's own token is an OAuth access token."""
