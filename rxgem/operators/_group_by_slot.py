from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core import (
    Batch,
    GenerateContentResponse,
    SlotPolicy,
    SlotPolicyName,
    SlotTable,
    resolve_policy,
)
from ._core_operator import core_operator

__all__ = ["group_by_slot"]


def group_by_slot(
    slot_policy: SlotPolicy | SlotPolicyName = "latest",
) -> Callable[[Observable[GenerateContentResponse]], Observable[Batch]]:
    """Split each response into items, giving every ``functionCall`` part a tool-call slot.

    .. code::

        ---r1{text}------r2{read(a)}---------r3{read(b)}---------r4{STOP}--|
        [                         group_by_slot()                          ]
        ---[Text]--------[CallPart(slot=0)]--[CallPart(slot=1)]--[Finish]--|

    One batch (a list of items) per response, none for a response with nothing in
    it. Text and thought parts become :class:`~rxgem.items.Text` at once, tagged
    with their candidate; each ``functionCall`` part becomes a
    :class:`~rxgem.items.CallPart` with the slot chosen by the slot rules (see
    the README): ids first, Vertex streamed calls by position, and for id-less
    complete calls the ``slot_policy``.

    Args:
        slot_policy: ``"latest"`` (default), ``"positional"``, ``"every_part"``, or a
            :class:`~rxgem.SlotPolicy` object.

    Returns:
        An operator from ``Observable[GenerateContentResponse]`` to
        ``Observable[Batch]``.
    """
    policy = resolve_policy(slot_policy)  # checked now; every subscription gets a fresh table

    def table() -> SlotTable:
        return SlotTable(policy)

    return core_operator(table, batched=True)
