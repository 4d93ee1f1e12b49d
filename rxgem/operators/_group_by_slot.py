from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from reactivex import Observable

from ..core import GenerateContentResponse
from ..core.pipeline import GroupBySlotOptions
from ..core.slots import Batch
from ._stage_operator import documented, stage_operator

__all__ = ["group_by_slot"]


@documented(GroupBySlotOptions)
def group_by_slot(
    **options: Unpack[GroupBySlotOptions],
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
    ``docs/operators.md``): ids first, Vertex streamed calls by position, and for
    id-less complete calls the ``slot_policy``.

    Returns:
        An operator from ``Observable[GenerateContentResponse]`` to
        ``Observable[Batch]``.
    """
    return stage_operator("group_by_slot", options)
