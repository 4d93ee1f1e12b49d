"""OpenAI requests → Gemini requests (sans-IO).

:func:`to_gemini_request` translates a Chat Completions request body,
:func:`responses_to_gemini_request` a Responses request body (into a
:class:`ResponsesRequest`: the Gemini body and what the server keeps);
:func:`chat_to_interaction` and :func:`responses_to_interaction` write the same requests
as Gemini Interactions create bodies.

Each translation is a reader and a writer (``translate/``): the readers (``read/chat``,
``read/responses``) make the typed form (``form/``: the conversation and the settings,
msgspec structs), the writers (``write/generate_content``, ``write/interactions``) put it
on the wire; ``schema/`` translates JSON Schemas, ``_policy`` holds what a translation
does with a field it cannot send.
"""

from typing import Any

from ._policy import SchemaWarning, UnsupportedWarning
from ._signatures import PlaceholderWarning, SignatureWarning
from .read.responses import item_references
from .translate import (
    InteractionRequest,
    ResponsesRequest,
    chat_to_interaction,
    responses_to_gemini_request,
    responses_to_interaction,
    to_gemini_request,
)

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from ._policy import Unsupported as Unsupported
from ._signatures import (
    call_signature as call_signature,
    message_signature as message_signature,
    split_id as split_id,
)
from .read.responses import Resolve as Resolve
# isort: on

__all__ = [
    "InteractionRequest",
    "PlaceholderWarning",
    "ResponsesRequest",
    "SchemaWarning",
    "SignatureWarning",
    "UnsupportedWarning",
    "chat_to_interaction",
    "item_references",
    "responses_to_gemini_request",
    "responses_to_interaction",
    "to_gemini_request",
]


_RETIRED = {
    "ModelFamily": "._model_families",
    "PLACEHOLDER": "._signatures",
    "model_family": "._model_families",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    if name in _RETIRED:
        import importlib
        import warnings

        warnings.warn(
            f"rxgem.request.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
