"""``generateContent`` on Vertex AI (``*aiplatform.googleapis.com``): an OAuth access token
(``Authorization: Bearer``), tool schemas as the OpenAPI subset, Vertex's enum numbers."""

from ._upstream import VERTEX

__all__ = ["VERTEX"]
