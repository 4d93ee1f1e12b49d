"""The item types that flow between ``group_by_slot``, ``latest_args``,
``flush_on_finish`` and ``to_openai`` (one list of items per Gemini event).

Useful to write your own operators between those stages, or to test them.
"""

from .core.slots import (
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

__all__ = [
    "ArgsDelta",
    "Batch",
    "Blocked",
    "CallPart",
    "DataPart",
    "Details",
    "End",
    "Feedback",
    "Finish",
    "Item",
    "Logprobs",
    "Meta",
    "SlotUpdate",
    "Sources",
    "Text",
    "TextSignature",
    "ToolCall",
    "ToolCallHeader",
    "UnknownStep",
    "Usage",
]
