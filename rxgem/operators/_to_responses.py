from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

from reactivex import Observable

from ..core.pipeline import ToResponsesOptions
from ..core.responses import ResponsesEvent
from ..core.slots import Batch
from ._stage_operator import documented, stage_operator

__all__ = ["to_responses"]


@documented(ToResponsesOptions)
def to_responses(
    **options: Unpack[ToResponsesOptions],
) -> Callable[[Observable[Batch]], Observable[ResponsesEvent]]:
    """Turn pipeline items into OpenAI Responses streaming events.

    .. code::

        ---[Meta, Text("Hi")]------[ToolCall(0), End(STOP), Usage]---|
        [                      to_responses()                        ]
        ---created,in_progress,------------------------------fc added,args,fc done,
           msg added,part added,                             msg text done,part done,
           text delta                                        msg done,completed|

    The items of candidate 0 become output items (``message``, ``reasoning``,
    ``function_call``, ``code_interpreter_call``, ``image_generation_call``), each from
    ``response.output_item.added`` to ``.done``, closed when the input ends (so text an
    operator before this one holds past the finish still gets in); the end of input gives
    the terminal event (``response.completed``, ``.incomplete`` or ``.failed``; an upstream error:
    ``response.failed`` with the output so far, then the error). Events carry
    ``sequence_number`` 0, 1, 2… and ``to_dict()``/``to_json()``.

    Returns:
        An operator from ``Observable[Batch]`` to ``Observable[ResponsesEvent]``.
    """
    return stage_operator("to_responses", options)
