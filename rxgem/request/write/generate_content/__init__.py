"""The ``generateContent`` writer: the conversation as ``contents`` (``_contents``), the
settings as ``tools``, ``toolConfig`` and ``generationConfig`` (``_settings``)."""

from ._contents import gemini_contents as gemini_contents
from ._settings import write_settings as write_settings
