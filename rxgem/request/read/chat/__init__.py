"""The Chat Completions reader: ``messages`` into the conversation (``_messages``), the
other fields into the settings (``_settings``), after checking which fields the request
sends (``_fields``). Both writers' Chat Completions translations read through this face.
"""

from ._fields import check_fields as check_fields
from ._fields import checked_model as checked_model
from ._messages import call_arguments as call_arguments
from ._messages import file_part as file_part
from ._messages import read_messages as read_messages
from ._messages import response_object as response_object
from ._settings import read_settings as read_settings
