"""The items and the stages on them: slot grouping, latest arguments, the finish buffer.

:mod:`rxgem.items` is the vocabulary every reader produces and every output takes
(:class:`~rxgem.items.Text`, :class:`~rxgem.items.ToolCall`, ...): defined here, public
there. :class:`~rxgem.core.SlotTable` groups Gemini's parts into tool-call slots (its
:class:`~rxgem.core.SlotPolicy`), :class:`~rxgem.core.ArgsTable` keeps the latest
arguments (with the JSON growth and path helpers) and :class:`~rxgem.core.FinishBuffer`
holds what waits for the end.
"""

from ._args_table import ArgsTable
from ._finish_buffer import Announce, FinishBuffer
from ._items import (
    ArgsDelta,
    Batch,
    Blocked,
    CallPart,
    DataPart,
    Details,
    End,
    Feedback,
    Finish,
    Item,
    Logprobs,
    Meta,
    SlotUpdate,
    Sources,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    UnknownStep,
    Usage,
)
from ._policies import SlotPolicy, SlotPolicyName, resolve_policy
from ._table import SlotTable

__all__ = [
    "Announce",
    "ArgsDelta",
    "ArgsTable",
    "Batch",
    "Blocked",
    "CallPart",
    "DataPart",
    "Details",
    "End",
    "Feedback",
    "Finish",
    "FinishBuffer",
    "Item",
    "Logprobs",
    "Meta",
    "SlotPolicy",
    "SlotPolicyName",
    "SlotTable",
    "SlotUpdate",
    "Sources",
    "Text",
    "TextSignature",
    "ToolCall",
    "ToolCallHeader",
    "UnknownStep",
    "Usage",
    "resolve_policy",
]
