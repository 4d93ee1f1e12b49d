"""What both OpenAI outputs (``chat/`` and ``responses/``) share, so neither imports the other.

Finish reasons, usage, log probabilities and ids (``_mapping``), grounding metadata as
URL citations and the content map they are placed by (``_annotations``), and Gemini's
non-text parts (code, inline data) as entries (``_parts``).
"""
