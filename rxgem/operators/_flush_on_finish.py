from __future__ import annotations

from collections.abc import Callable

from reactivex import Observable

from ..core import Announce, Batch, FinishBuffer
from ._core_operator import core_operator

__all__ = ["flush_on_finish"]


def flush_on_finish(
    *, announce: Announce = "first", allow_truncated: bool = False
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

    Args:
        announce: ``"first"`` (default) emits a header for each candidate's first
            tool call as soon as it appears; ``"none"`` holds every call to the end.
        allow_truncated: end truncated candidates with a finish instead of an error.

    Returns:
        An operator from ``Observable[Batch]`` to ``Observable[Batch]``.
    """

    def buffer() -> FinishBuffer:
        return FinishBuffer(announce=announce, allow_truncated=allow_truncated)

    buffer()  # the options are checked now, not at subscription
    return core_operator(buffer, batched=True)
