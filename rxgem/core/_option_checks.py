"""The check of each pipeline option that has one: shared by its declaration
(``pipeline/_options``) and the core that takes it, so that a bad value is refused
in the same words whether it reaches the core through the pipeline or directly.

Each check raises ``ValueError`` (a value out of range) or ``TypeError`` (a value of the
wrong kind) and returns nothing. ``slot_policy``'s check is
``resolve_policy`` (``slots/_policies``), ``api``'s is ``check_api`` (``gemini/_parser``,
beside the enum tables it names).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, get_args

__all__ = [
    "Upstream",
    "check_announce",
    "check_callable",
    "check_reasoning_field",
    "check_upstream",
]

Upstream = Literal["generate-content", "interactions"]
"""The stream formats the pipeline reads (its ``upstream`` option): Gemini's
``streamGenerateContent`` stream (the Gemini API's and Vertex AI's), or the Interactions
API's (``POST /v1beta/interactions``, ``step.*`` events). Each is one reader of the
pipeline's (``pipeline/_stages.READERS``); an upstream API that speaks one of them
(:mod:`rxgem.upstreams`) names it, and a new one needs nothing here."""


def check_announce(announce: object) -> None:
    """``announce``: ``"first"`` or ``"none"``."""
    if announce not in ("first", "none"):
        raise ValueError(f"announce must be 'first' or 'none', not {announce!r}")


def check_reasoning_field(reasoning_field: object) -> None:
    """``reasoning_field``: ``"reasoning_content"``, ``"reasoning"`` or ``None``."""
    if reasoning_field not in ("reasoning_content", "reasoning", None):
        raise ValueError(
            "reasoning_field must be 'reasoning_content', 'reasoning' or None,"
            f" not {reasoning_field!r}"
        )


def check_callable(name: str) -> Callable[[object], None]:
    """The check of an option ``name`` that must be callable (``id_factory``, ``clock``)."""

    def check(value: object) -> None:
        if not callable(value):
            raise TypeError(f"{name} must be callable, not {value!r}")

    return check


def check_upstream(upstream: object) -> None:
    """``upstream``: one of :data:`Upstream` (``"generate-content"`` or
    ``"interactions"``: whose stream is read)."""
    names = get_args(Upstream)
    if upstream not in names:
        listed = ", ".join(map(repr, names[:-1]))
        raise ValueError(f"upstream must be {listed} or {names[-1]!r}, not {upstream!r}")
