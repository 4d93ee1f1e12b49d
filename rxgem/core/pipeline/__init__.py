"""The pipeline: its options, each declared once (``_options``), and its stages in order
(``_stages``: each stage's name, core and options, per upstream and output). It assembles
the other sides, so it imports them all and none imports it."""

from ._options import (
    FlushOnFinishOptions,
    GroupBySlotOptions,
    InteractionsPipelineOptions,
    InteractionsResponsesOptions,
    ParseOptions,
    PipelineOptions,
    ReadStepsOptions,
    ResponsesPipelineOptions,
    StreamOptions,
    ToOpenAIOptions,
    ToResponsesOptions,
    Upstream,
    UpstreamOptions,
    options_doc,
)
from ._stages import (
    INTERACTIONS_RESPONSES_STAGES,
    INTERACTIONS_STAGES,
    RESPONSES_STAGES,
    STAGES,
    Output,
    PipelineSettings,
    Reader,
    Stage,
    reader_of,
    stages_of,
)

__all__ = [
    "INTERACTIONS_RESPONSES_STAGES",
    "INTERACTIONS_STAGES",
    "RESPONSES_STAGES",
    "STAGES",
    "FlushOnFinishOptions",
    "GroupBySlotOptions",
    "InteractionsPipelineOptions",
    "InteractionsResponsesOptions",
    "Output",
    "ParseOptions",
    "PipelineOptions",
    "PipelineSettings",
    "ReadStepsOptions",
    "Reader",
    "ResponsesPipelineOptions",
    "Stage",
    "StreamOptions",
    "ToOpenAIOptions",
    "ToResponsesOptions",
    "Upstream",
    "UpstreamOptions",
    "options_doc",
    "reader_of",
    "stages_of",
]
