"""The cores composed without Rx (:class:`Converter`; :class:`ResponsesConverter` for
the Responses output; either reads a ``generateContent`` or an Interactions stream), a
non-streamed Interaction object translated whole (:func:`interaction_completion`,
:func:`interaction_response`, and their chunks or events), and the pipeline's options.

The options are declared once in :mod:`rxgem.core` (each with its type, default, check
and doc); :class:`PipelineOptions` and :class:`StreamOptions` are their typing faces.
"""

from ..core.pipeline import PipelineOptions
from ._converter import Converter
from ._interaction_object import (
    interaction_chunks,
    interaction_completion,
    interaction_events,
    interaction_response,
)
from ._responses_converter import ResponsesConverter

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ..core.pipeline import StreamOptions as StreamOptions
from ._converter import CoreConverter as CoreConverter
from ._responses_converter import CoreResponsesConverter as CoreResponsesConverter
# isort: on

__all__ = [
    "Converter",
    "PipelineOptions",
    "ResponsesConverter",
    "interaction_chunks",
    "interaction_completion",
    "interaction_events",
    "interaction_response",
]
