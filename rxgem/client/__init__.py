"""Application-facing calls that compose the request translation, the transport and the pipeline."""

from ._chat_completions import ChatCompletionsOptions, chat_completions
from ._responses import ResponsesOptions, response_events, responses

__all__ = [
    "ChatCompletionsOptions",
    "ResponsesOptions",
    "chat_completions",
    "response_events",
    "responses",
]
