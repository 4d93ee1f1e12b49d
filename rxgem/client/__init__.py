"""Application-facing calls that compose the request translation, the transport and the pipeline."""

from ._chat_completions import ChatCompletionsOptions, chat_completions

__all__ = ["ChatCompletionsOptions", "chat_completions"]
