"""Application-facing calls that compose the request translation, the transport and the pipeline.

The one place where :mod:`rxgem.transport` (HTTP only) meets :mod:`rxgem.operators`.
"""

from ._chat_completions import ChatCompletionsOptions, chat_completions
from ._responses import ResponsesOptions, response_events, responses
from ._stream_chat import StreamChatOptions, stream_chat

__all__ = [
    "ChatCompletionsOptions",
    "ResponsesOptions",
    "StreamChatOptions",
    "chat_completions",
    "response_events",
    "responses",
    "stream_chat",
]
