"""The six cores composed without Rx (:class:`Converter`), and the pipeline's options."""

from ._converter import Converter
from ._options import STAGES, PipelineOptions, PipelineSettings, StreamOptions, pipeline_settings

__all__ = [
    "STAGES",
    "Converter",
    "PipelineOptions",
    "PipelineSettings",
    "StreamOptions",
    "pipeline_settings",
]
