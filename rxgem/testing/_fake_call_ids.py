"""The ids of FakeGemini's Interactions calls: ``call-1``, ``call-2``, … never given twice.

Google's call ids are unique, and what keys on them (a client pairing results with calls,
rxgem's signature memory) would mix up two conversations that both had a ``call-1``. A run's
calls are numbered after every call the fake made and every call its conversation holds
(a stateless client may replay ids of another fake, or of its own making).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from ._fake_response import FakeResponse
from ._interaction_script import FakeInteraction

__all__ = ["CallIds", "calls_made"]

Run = FakeInteraction | FakeResponse


def calls_made(steps: Any) -> int:
    """How many ``function_call`` steps ``steps`` (a create's ``input`` or a history) holds."""
    if not isinstance(steps, list):
        return 0
    return sum(1 for s in steps if isinstance(s, Mapping) and s.get("type") == "function_call")


def _calls_in(run: Run) -> int:
    """How many ``function_call`` steps a scripted run makes."""
    if not isinstance(run, FakeInteraction):
        return 0
    steps = [s for item in run.steps for s in (item if isinstance(item, tuple) else (item,))]
    return sum(1 for step in steps if step.final.get("type") == "function_call")


class CallIds:
    """The fake's call numbering, shared by its runs (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made = 0

    def run(self, conversation: int, build: Callable[[int], Run]) -> Run:
        """The run ``build(before)`` makes, its calls numbered after ``before``: the larger of
        the calls the conversation holds (``conversation``) and those the fake made."""
        with self._lock:
            before = max(conversation, self._made)
            run = build(before)
            self._made = before + _calls_in(run)
            return run
