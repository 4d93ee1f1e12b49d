"""The six cores composed without Rx (:class:`Converter`), and the pipeline's options.

The options are declared once in :mod:`rxgem.core` (each with its type, default, check
and doc); :class:`PipelineOptions` and :class:`StreamOptions` are their typing faces.
"""

from ..core import PipelineOptions, StreamOptions
from ._converter import Converter

__all__ = ["Converter", "PipelineOptions", "StreamOptions"]
