"""The items and the stages on them: slot grouping, latest arguments, the finish buffer.

:mod:`rxgem.items` is the vocabulary every reader produces and every output takes
(:class:`~rxgem.items.Text`, :class:`~rxgem.items.ToolCall`, ...): defined here, public
there. :class:`~rxgem.core.SlotTable` groups Gemini's parts into tool-call slots (its
:class:`~rxgem.core.SlotPolicy`), :class:`~rxgem.core.ArgsTable` keeps the latest
arguments (with the JSON growth and path helpers) and :class:`~rxgem.core.FinishBuffer`
holds what waits for the end.
"""
