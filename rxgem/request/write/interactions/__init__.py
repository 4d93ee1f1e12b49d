"""The Interactions writer: the conversation as ``input`` steps (``_steps``, media in
``_media``), the settings as ``tools``, ``generation_config`` and ``response_format``
(``_config``)."""

from ._config import interaction_config as interaction_config
from ._config import interaction_tools as interaction_tools
from ._config import response_format as response_format
from ._config import settings_fields as settings_fields
from ._media import media_content as media_content
from ._steps import conversation_steps as conversation_steps
from ._steps import result_value as result_value
