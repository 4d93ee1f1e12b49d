"""What both OpenAI outputs (``chat/`` and ``responses/``) share and neither owns.

Grounding metadata as URL citations and the content map that places them
(``_annotations``), and Gemini's non-text parts (code, inline data) as entries
(``_parts``). Finish reasons, usage and ids are Chat Completions' mapping
(``chat/_mapping``), which the Responses output builds on.
"""
