"""OpenAI ``chat.completion.chunk`` objects, with the ``openai`` SDK's attribute paths.

``chunk.choices[0].delta.tool_calls[0].function.arguments`` works as it does on the
SDK's ``ChatCompletionChunk``. These are ``msgspec`` structs (fast to build and to
encode, compared by value); ``to_dict()`` gives plain JSON data with ``None``
fields omitted (except ``choices[].finish_reason``, which OpenAI always sends, as
``null`` until the last chunk of a choice), and ``to_json()`` its compact UTF-8
JSON. Fields beyond OpenAI's own (``reasoning_content``/``reasoning``,
``images``, ``extra_content``, ``native_finish_reason``) are the widely used
extensions documented in the README; the ``openai`` SDK keeps them as extra
attributes.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

import msgspec

__all__ = [
    "ChatCompletion",
    "ChatCompletionChunk",
    "ChatCompletionMessage",
    "Choice",
    "ChoiceDelta",
    "ChoiceDeltaToolCall",
    "ChoiceDeltaToolCallFunction",
    "ChunkChoice",
    "CompletionUsage",
    "FinishReason",
]

FinishReason: TypeAlias = Literal["stop", "length", "tool_calls", "content_filter", "function_call"]


class _Model(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data (dicts, lists, str, numbers), ``None`` fields left out."""
        data: dict[str, Any] = msgspec.to_builtins(self)
        return data

    def to_json(self) -> bytes:
        """Compact UTF-8 JSON of :meth:`to_dict`."""
        return msgspec.json.encode(self)


def _chunk_object() -> Literal["chat.completion.chunk"]:
    return "chat.completion.chunk"


class ChoiceDeltaToolCallFunction(_Model):
    """``name`` (first delta of a call only) and an ``arguments`` fragment."""

    name: str | None = None
    arguments: str | None = None


class ChoiceDeltaToolCall(_Model):
    """A tool-call delta: dense ``index`` per choice; ``id``/``type`` in its first delta only."""

    index: int
    id: str | None = None
    type: Literal["function"] | None = None
    function: ChoiceDeltaToolCallFunction | None = None
    extra_content: dict[str, Any] | None = None


class ChoiceDelta(_Model):
    """What one chunk adds to a choice's message."""

    role: Literal["assistant"] | None = None
    content: str | None = None
    refusal: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ChoiceDeltaToolCall] | None = None
    images: list[dict[str, Any]] | None = None
    audio: dict[str, Any] | None = None
    annotations: list[dict[str, Any]] | None = None
    extra_content: dict[str, Any] | None = None


class ChunkChoice(_Model):
    """A choice in a chunk; ``finish_reason`` is ``None`` until the choice's last chunk."""

    index: int
    delta: ChoiceDelta
    finish_reason: FinishReason | None
    native_finish_reason: str | None = None
    logprobs: dict[str, Any] | None = None


class CompletionUsage(_Model):
    """Token usage of the whole response, in the final chunk (``choices: []``)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    completion_tokens_details: dict[str, int] | None = None
    prompt_tokens_details: dict[str, int] | None = None
    extra_content: dict[str, Any] | None = None


class ChatCompletionChunk(_Model, kw_only=True):
    """One ``chat.completion.chunk``; ``id``, ``created`` and ``model`` are equal on every chunk."""

    id: str
    # a default_factory (unlike a plain default) is always encoded, as OpenAI always sends it
    object: Literal["chat.completion.chunk"] = msgspec.field(default_factory=_chunk_object)
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: CompletionUsage | None = None


def _completion_object() -> Literal["chat.completion"]:
    return "chat.completion"


class ChatCompletionMessage(_Model):
    """The assistant's message of a whole (non-streamed) completion: the choice's deltas merged."""

    role: Literal["assistant"] = msgspec.field(default_factory=lambda: "assistant")
    content: str | None = None
    refusal: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    images: list[dict[str, Any]] | None = None
    audio: dict[str, Any] | None = None
    annotations: list[dict[str, Any]] | None = None
    extra_content: dict[str, Any] | None = None


class Choice(_Model):
    """A choice of a whole completion."""

    index: int
    message: ChatCompletionMessage
    finish_reason: FinishReason
    logprobs: dict[str, Any] | None = None
    native_finish_reason: str | None = None


class ChatCompletion(_Model, kw_only=True):
    """A whole ``chat.completion``, as OpenAI answers a request without ``stream``."""

    id: str
    object: Literal["chat.completion"] = msgspec.field(default_factory=_completion_object)
    created: int
    model: str
    choices: list[Choice]
    usage: CompletionUsage | None = None
