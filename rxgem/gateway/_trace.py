"""What the gateway reads of the request it answers: its id (for the log lines), its
body's size (where its translation runs), and its counters (signature memory's)."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Keys", "SignatureCounts", "Trace"]


class SignatureCounts(Protocol):
    """Where a request's thought signatures are counted (the server's telemetry)."""

    def signatures(self, *, remembered: int = 0, restored: int = 0, placeholders: int = 0) -> None:
        """Signatures remembered, recalled, or sent as Google's placeholder."""


class Trace(Protocol):
    """One request as the gateway sees it (the server's access record is one)."""

    @property
    def request_id(self) -> str:
        """The id its log lines name."""

    @property
    def body_bytes(self) -> int:
        """Its body's size in bytes."""

    @property
    def telemetry(self) -> SignatureCounts | None:
        """Its counters, if any."""


class Keys(Protocol):
    """What one request sends Gemini (the server's credentials are these)."""

    @property
    def api_key(self) -> str | None:
        """Gemini's API key."""

    @property
    def access_token(self) -> str | None:
        """An OAuth access token."""
