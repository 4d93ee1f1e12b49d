"""What both OpenAI outputs (``chat/`` and ``responses/``) share and neither owns.

Grounding metadata as URL citations and the content map that places them
(``_annotations``), and Gemini's non-text parts (code, inline data) as entries
(``_parts``). Finish reasons, usage and ids are Chat Completions' mapping
(``chat/_mapping``), which the Responses output builds on. And rxgem's exceptions as OpenAI's
error objects (``_error``), the one error vocabulary of every output and the server.
"""

from ._annotations import OTHER, TEXT, THOUGHT, ContentMap, MetadataMerger, url_citations
from ._error import OpenAIError, Scrub, openai_error, type_of, unscrubbed
from ._parts import ID_MARK, AudioStream, part_entry, render_code, without_data

__all__ = [
    "ID_MARK",
    "OTHER",
    "TEXT",
    "THOUGHT",
    "AudioStream",
    "ContentMap",
    "MetadataMerger",
    "OpenAIError",
    "Scrub",
    "openai_error",
    "part_entry",
    "render_code",
    "type_of",
    "unscrubbed",
    "url_citations",
    "without_data",
]
