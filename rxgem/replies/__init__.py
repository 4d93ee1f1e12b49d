"""What an OpenAI-compatible endpoint answers besides the translation, sans-IO: the error
vocabulary (an exception in, an OpenAI error object and its status out) and Gemini's
model list in OpenAI's shape.

Shared by ``rxgem serve`` (:mod:`rxgem.server`) and the in-process transport
(:mod:`rxgem.inprocess`), so that both answer alike. ``_errors`` (the replies and their
constructors), ``_error_event`` (a Responses stream's ``error`` event), ``_model_list``
(the model objects).
"""

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._error_event import error_event as error_event
from ._errors import (
    ErrorReply as ErrorReply,
    Refusal as Refusal,
    bad_request as bad_request,
    body_timeout as body_timeout,
    busy as busy,
    error_reply as error_reply,
    head_too_large as head_too_large,
    http_reply as http_reply,
    internal_error as internal_error,
    misdirected as misdirected,
    not_found as not_found,
    not_json as not_json,
    redact as redact,
    scrubber as scrubber,
    shutting_down as shutting_down,
    store_unavailable as store_unavailable,
    too_large as too_large,
    unauthorized as unauthorized,
)
from ._model_list import (
    model_id as model_id,
    openai_model as openai_model,
    openai_model_list as openai_model_list,
    valid_model_name as valid_model_name,
)
# isort: on

__all__: list[str] = []
