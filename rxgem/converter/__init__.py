"""The six cores composed without Rx (:class:`Converter`; :class:`ResponsesConverter` for
the Responses output), and the pipeline's options.

The options are declared once in :mod:`rxgem.core` (each with its type, default, check
and doc); :class:`PipelineOptions` and :class:`StreamOptions` are their typing faces.
"""

from ..core import PipelineOptions, StreamOptions
from ._converter import Converter
from ._responses_converter import ResponsesConverter

# Not public: the converter in the cores' shape, for the operators (`gemini_to_openai`).
from ._converter import CoreConverter as CoreConverter  # isort: skip
from ._responses_converter import CoreResponsesConverter as CoreResponsesConverter  # isort: skip

__all__ = ["Converter", "PipelineOptions", "ResponsesConverter", "StreamOptions"]
