"""The slot policy protocol: what a custom policy implements.

Kept apart from the built-in policies (``_policies``) so that
those can be compiled while a user's class may still subclass :class:`SlotPolicy`
(a compiled class cannot be inherited from by an interpreted one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from ..gemini import FunctionCall

if TYPE_CHECKING:
    from ._policies import SlotInfo

__all__ = ["SlotPolicy", "SlotPolicyName"]

SlotPolicyName: TypeAlias = Literal["latest", "positional", "every_part"]


class SlotPolicy(Protocol):
    """Decides whether a complete, id-less call joins an existing slot.

    ``match`` gets the slots the call may join, in opening order: the slots of the
    same candidate with the call's name, not streamed (the table keeps them indexed
    by name, so a policy never walks the other tools' calls). It returns the slot
    the call joins, or ``None`` to open a new one. Policies hold no state of their own.
    """

    name: str

    def match(
        self,
        slots: Sequence[SlotInfo],
        call: FunctionCall,
        *,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None: ...
