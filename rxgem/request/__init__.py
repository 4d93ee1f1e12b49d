"""OpenAI requests → Gemini requests (sans-IO).

:func:`to_gemini_request` translates a Chat Completions request body,
:func:`responses_to_gemini_request` a Responses request body (into a
:class:`ResponsesRequest`: the Gemini body and what the server keeps); the rest of this
package are their parts (messages and input items, parameters, tool schemas, thought
signatures, model families). :mod:`.interactions` writes the same requests as Gemini
Interactions create bodies (:func:`chat_to_interaction`, :func:`responses_to_interaction`).
"""

from ._model_families import ModelFamily, model_family
from ._params import SchemaWarning, Unsupported, UnsupportedWarning
from ._request import to_gemini_request
from ._signatures import (
    PLACEHOLDER,
    PlaceholderWarning,
    SignatureWarning,
    call_signature,
    message_signature,
    split_id,
)
from .interactions import InteractionRequest, chat_to_interaction, responses_to_interaction
from .responses._input import Resolve, item_references
from .responses._request import ResponsesRequest, responses_to_gemini_request

__all__ = [
    "PLACEHOLDER",
    "InteractionRequest",
    "ModelFamily",
    "PlaceholderWarning",
    "Resolve",
    "ResponsesRequest",
    "SchemaWarning",
    "SignatureWarning",
    "Unsupported",
    "UnsupportedWarning",
    "call_signature",
    "chat_to_interaction",
    "item_references",
    "message_signature",
    "model_family",
    "responses_to_gemini_request",
    "responses_to_interaction",
    "split_id",
    "to_gemini_request",
]
