"""What an OpenAI-compatible endpoint answers besides the translation, sans-IO: the error
vocabulary (an exception in, an OpenAI error object and its status out) and Gemini's
model list in OpenAI's shape.

Shared by ``rxgem serve`` (:mod:`rxgem.server`) and the in-process transport
(:mod:`rxgem.inprocess`), so that both answer alike. ``_errors`` (the replies and their
constructors), ``_error_event`` (a Responses stream's ``error`` event), ``_model_list``
(the model objects).
"""

from ._error_event import error_event
from ._errors import (
    ErrorReply,
    Refusal,
    bad_request,
    body_timeout,
    busy,
    error_reply,
    head_too_large,
    hide_upstream,
    http_reply,
    internal_error,
    misdirected,
    not_found,
    not_json,
    redact,
    scrubber,
    shutting_down,
    store_unavailable,
    too_large,
    unauthorized,
)
from ._model_list import model_id, openai_model, openai_model_list, valid_model_name

__all__ = [
    "ErrorReply",
    "Refusal",
    "bad_request",
    "body_timeout",
    "busy",
    "error_event",
    "error_reply",
    "head_too_large",
    "hide_upstream",
    "http_reply",
    "internal_error",
    "misdirected",
    "model_id",
    "not_found",
    "not_json",
    "openai_model",
    "openai_model_list",
    "redact",
    "scrubber",
    "shutting_down",
    "store_unavailable",
    "too_large",
    "unauthorized",
    "valid_model_name",
]
