from __future__ import annotations

from collections.abc import Callable, Iterable

from reactivex import Observable

from .._args import ArgsTable
from .._items import Batch
from ._stage import Stage, stage_operator

__all__ = ["latest_args"]


class _LatestStage(Stage[Batch, Batch]):
    batched = True

    def __init__(self) -> None:
        self._table = ArgsTable()
        self.feed = self._table.feed

    def close(self) -> tuple[Iterable[Batch], Exception | None]:
        batch = self._table.close()
        return ((batch,) if batch else ()), None

    def abort(self, error: Exception) -> Iterable[Batch]:
        batch = self._table.close()
        return (batch,) if batch else ()


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
    return stage_operator(_LatestStage)
