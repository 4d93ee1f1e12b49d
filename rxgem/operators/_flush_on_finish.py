from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from reactivex import Observable

from ..core.pipeline import FlushOnFinishOptions
from ..core.slots import Batch
from ._stage_operator import documented, stage_operator

__all__ = ["flush_on_finish"]


@documented(FlushOnFinishOptions)
def flush_on_finish(
    **options: Unpack[FlushOnFinishOptions],
) -> Callable[[Observable[Batch]], Observable[Batch]]:
    """Pass text on at once; flush tool calls, finishes and usage at the end of the stream.

    .. code::

        ---[Text]---[SlotUpdate(0)]---[Finish(STOP)]---[Text]---|
        [                   flush_on_finish()                   ]
        ---[Text]---[Header(0)]-------------------------[Text]---[ToolCall(0), End, Usage]|

    The end is upstream completion (``[DONE]`` completes it too), never the first
    ``finishReason``, which can arrive mid-stream and more than once. At the end:
    per candidate in index order, every slot's final :class:`~rxgem.items.ToolCall`,
    the latest text-part signature, one :class:`~rxgem.items.End` with the last
    finish reason; then the last usage snapshot with token counts. Before an
    upstream error is passed on, every pending tool call is flushed. A candidate
    that produced output without ever getting a ``finishReason`` ends the stream
    with :class:`~rxgem.TruncatedStreamError` after its calls are flushed.

    Returns:
        An operator from ``Observable[Batch]`` to ``Observable[Batch]``.
    """
    return stage_operator("flush_on_finish", options)
