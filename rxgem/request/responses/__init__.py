"""The Responses reader, and the Responses → ``generateContent`` translation on it.

The reader takes a Responses body, with the history the caller resolved: its input items
into the conversation (``_input``, their content in ``_content``, code in ``_code``,
carried thought signatures in ``_signatures``), its parameters (``_params``), its tools
(``_tools``), and the fields it checks and repeats (``_request``). Both writers' entry
points read through this face: ``responses_to_gemini_request`` (in ``_request``) and
:mod:`rxgem.request.interactions`'s ``responses_to_interaction``.
"""

from ._content import function_output as function_output
from ._input import Resolve as Resolve
from ._input import read_input as read_input
from ._params import include_list as include_list
from ._request import check_continuation as check_continuation
from ._request import check_fields as check_fields
from ._request import echo_of as echo_of
from ._request import read_settings as read_settings
from ._request import with_warnings as with_warnings
