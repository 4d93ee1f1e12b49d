"""Which Gemini a model name is: what its thinking settings and request rules are.

Gemini 3 models think in *levels* and cannot stop thinking; Gemini 2.5 models think
within a token *budget* (Pro cannot stop thinking either); older models do not think.
Gemini 3 validates the thought signatures of the current turn and takes call ids on
``functionCall``/``functionResponse`` parts, which Gemini 2.x refuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["ModelFamily", "model_family"]

_VERSION = re.compile(r"gemini-(\d+)(?:\.(\d+))?")


@dataclass(frozen=True, slots=True)
class ModelFamily:
    """What a model name says about the model.

    Attributes:
        generation: ``3`` for Gemini 3 and later (also for names that say no
            version, such as ``gemini-flash-latest``), ``2.5``, or ``2`` for older.
        tier: ``"pro"``, ``"flash"`` or ``"flash-lite"`` (``"flash"`` when unsaid).
    """

    generation: float
    tier: Literal["pro", "flash", "flash-lite"]

    @property
    def thinks_in_levels(self) -> bool:
        return self.generation >= 3

    @property
    def thinks_in_budget(self) -> bool:
        return self.generation == 2.5

    @property
    def strict_signatures(self) -> bool:
        """Gemini 3 refuses a current turn whose calls lost their thought signatures."""
        return self.generation >= 3

    @property
    def call_ids(self) -> bool:
        """Gemini 3 takes call ids on ``functionCall``/``functionResponse``; 2.x refuses them."""
        return self.generation >= 3


def model_family(model: str) -> ModelFamily:
    """The family of a model name (``gemini-2.5-pro``, ``models/gemini-3-flash-preview``, ...)."""
    name = model.rsplit("/", 1)[-1].lower()
    tier: Literal["pro", "flash", "flash-lite"] = (
        "flash-lite" if "flash-lite" in name else "pro" if "pro" in name else "flash"
    )
    found = _VERSION.search(name)
    if found is None:
        return ModelFamily(3.0, tier)  # an alias (gemini-flash-latest): the newest generation
    major = int(found.group(1))
    minor = int(found.group(2) or 0)
    if major >= 3:
        return ModelFamily(3.0, tier)
    if (major, minor) == (2, 5):
        return ModelFamily(2.5, tier)
    return ModelFamily(2.0, tier)
