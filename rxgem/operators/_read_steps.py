from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from reactivex import Observable

from ..core.interactions import InteractionEvent
from ..core.pipeline import ReadStepsOptions
from ..core.slots import Batch
from ._stage_operator import documented, stage_operator

__all__ = ["read_steps"]


@documented(ReadStepsOptions)
def read_steps(
    **options: Unpack[ReadStepsOptions],
) -> Callable[[Observable[InteractionEvent]], Observable[Batch]]:
    """Turn each Interactions event into the items it completes, one batch per event.

    .. code::

        ---created---start{function_call}---delta{arguments}---completed{requires_action}--|
        [                                read_steps()                                      ]
        ---[Meta]----[ToolCallHeader(0)]----[ArgsDelta(0)]-----[ToolCall(0), End, Usage]---|

    The batches are ready for ``to_openai`` or ``to_responses``: text from a
    ``model_output`` step's content and its ``text`` deltas, thought summaries as
    :class:`~rxgem.items.Text` with ``thought=True``, each ``function_call`` step a
    tool call whose ``arguments_delta`` fragments pass on as they arrive
    (:class:`~rxgem.items.ArgsDelta`), a thought step's signature on the next call
    (or the text's), the final status and usage of ``interaction.completed`` as the
    :class:`~rxgem.items.End` and :class:`~rxgem.items.Usage`. A step type it does not
    know becomes an item the outputs ignore. A stream that ends without
    ``interaction.completed`` ends with :class:`~rxgem.TruncatedStreamError` (after
    what was valid), unless ``allow_truncated``.

    Returns:
        An operator from ``Observable[InteractionEvent]`` to ``Observable[Batch]``.
    """
    return stage_operator("read_steps", options)
