"""The Responses reader.

It takes a Responses body, with the history the caller resolved: its input items into
the conversation (``_input``, their content in ``_content``, code in ``_code``, carried
thought signatures in ``_signatures``), its tools (``_tools``) and parameters
(``_params``) into the settings, and the fields it checks and repeats (``_fields``). Both
Responses translations (:mod:`rxgem.request.translate`) read through this face.
"""

from ._content import function_output as function_output
from ._fields import check_continuation as check_continuation
from ._fields import check_fields as check_fields
from ._fields import echo_of as echo_of
from ._fields import read_settings as read_settings
from ._input import Resolve as Resolve
from ._input import item_references as item_references
from ._input import read_input as read_input
from ._params import include_list as include_list
