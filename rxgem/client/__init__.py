"""Application-facing calls that compose the request translation, the transport and the pipeline.

The one place where :mod:`rxgem.transport` (HTTP only) meets :mod:`rxgem.operators`.
"""

from typing import Any

from ._chat_completions import chat_completions
from ._chat_completions import chat_completions_on as chat_completions_on
from ._responses import response_events, responses
from ._responses import response_events_on as response_events_on
from ._stream_chat import stream_chat

__all__ = [
    "chat_completions",
    "response_events",
    "responses",
    "stream_chat",
]


_RETIRED = {
    "ChatCompletionsOptions": "._chat_completions",
    "ResponsesOptions": "._responses",
    "StreamChatOptions": "._stream_chat",
}
"""Names that left the public surface (CHANGELOG.md): still found here, with a warning, for
one release."""


def __getattr__(name: str) -> Any:
    if name in _RETIRED:
        import importlib
        import warnings

        warnings.warn(
            f"rxgem.client.{name} is deprecated: it leaves rxgem's public names"
            " in the next release (see CHANGELOG.md)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_RETIRED[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
