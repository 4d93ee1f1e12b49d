"""ReceivedRequest: one request as FakeGemini received it, as tests read it."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

__all__ = ["ReceivedRequest"]


@dataclasses.dataclass(frozen=True)
class ReceivedRequest:
    """One request as FakeGemini received it."""

    method: str
    path: str
    """The percent-decoded path, e.g. ``/v1beta/models/gemini-2.5-flash:streamGenerateContent``."""
    query: dict[str, str]
    """The query parameters, e.g. ``{"alt": "sse"}`` (the last value of a repeated name)."""
    headers: dict[str, str]
    """Header names lower-cased; repeated headers joined with ``", "``."""
    body: bytes

    @property
    def json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.body)
