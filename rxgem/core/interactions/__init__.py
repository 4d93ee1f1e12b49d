"""The Interactions reader: Google's ``POST /v1beta/interactions`` stream and objects.

:class:`~rxgem.core.InteractionsParser` turns each SSE event into a typed event
(``_models``), :class:`~rxgem.core.StepReader` turns those into the items of
:mod:`rxgem.items`, and :func:`~rxgem.core.interaction_items` reads a non-streamed
Interaction object into the same items. Its names are exported by :mod:`rxgem.core`.
"""

from ._models import Interaction, InteractionEvent
from ._object import interaction_items
from ._parser import InteractionsParser
from ._reader import StepReader

__all__ = [
    "Interaction",
    "InteractionEvent",
    "InteractionsParser",
    "StepReader",
    "interaction_items",
]
