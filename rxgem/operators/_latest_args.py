from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core.slots import Batch
from ._stage_operator import stage_operator

__all__ = ["latest_args"]


def latest_args() -> Callable[[Observable[Batch]], Observable[Batch]]:
    """Keep the latest arguments of every slot; turn ``CallPart`` into ``SlotUpdate``.

    .. code::

        ---[CallPart(0, {q:"A"})]---[CallPart(0, {q:"AB"})]---[CallPart(0, {q:"AB"})]--|
        [                              latest_args()                                   ]
        ---[SlotUpdate(0, {q:"A"})]-[SlotUpdate(0, {q:"AB"})]-------------------------|

    A scan per slot: the latest complete args win, the latest non-empty
    ``thoughtSignature`` wins, Vertex ``partialArgs`` pieces are assembled into
    the arguments object (string fragments of one path concatenate; nested paths
    such as ``$.a.b[0].c``; a string streamed in fragments is written once it is
    complete, or at the end of the stream), and a replay that changes nothing is
    swallowed.
    Other items pass through in order.

    Returns:
        An operator from ``Observable[Batch]`` to ``Observable[Batch]``.
    """
    return stage_operator("latest_args", {})
