"""Sans-IO accumulation of OpenAI chunks into the final message, as OpenAI clients do it.

:class:`ChunkAccumulator` applies the merge rules of the ``openai`` SDK's stream
accumulator (strings concatenate, ``index``/``type`` overwrite, lists of objects
merge by their ``index``) to each choice's deltas, so code without the ``openai``
package (the CLI, the demo, notebooks) can show the assembled message. The
project's tests check that it agrees with ``openai.lib.streaming.chat``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .._errors import TruncatedStreamError
from ._models import (
    ChatCompletion,
    ChatCompletionChunk,
    ChatCompletionMessage,
    Choice,
    CompletionUsage,
)

__all__ = ["ChunkAccumulator", "assemble", "completion"]


def _merge(acc: dict[str, Any], delta: dict[str, Any]) -> None:
    for key, value in delta.items():
        if value is None:
            continue
        current = acc.get(key)
        if current is None or key in ("index", "type"):
            acc[key] = _copy(value)
        elif isinstance(current, str) and isinstance(value, str):
            acc[key] = current + value
        elif isinstance(current, dict) and isinstance(value, dict):
            _merge(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            for entry in value:
                if isinstance(entry, dict) and "index" in entry:
                    for existing in current:
                        if isinstance(existing, dict) and existing.get("index") == entry["index"]:
                            _merge(existing, entry)
                            break
                    else:
                        current.append(_copy(entry))
                else:
                    current.append(entry)
        else:
            acc[key] = _copy(value)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


class ChunkAccumulator:
    """Feed chunks; ``result()`` gives ``{"id", "model", "choices": [...], "usage"}``.

    Each choice is ``{"index", "message": {...merged deltas...}, "finish_reason",
    "native_finish_reason"}``; tool calls are in ``message["tool_calls"]`` with
    their concatenated ``function.arguments`` strings.
    """

    __slots__ = ("_choices", "_created", "_id", "_model", "_usage")

    def __init__(self) -> None:
        self._choices: dict[int, dict[str, Any]] = {}
        self._id: str | None = None
        self._model: str | None = None
        self._created = 0
        self._usage: dict[str, Any] | None = None

    def feed(self, chunk: ChatCompletionChunk) -> None:
        self._id = chunk.id
        self._model = chunk.model
        self._created = chunk.created
        if chunk.usage is not None:
            self._usage = chunk.usage.to_dict()
        for choice in chunk.choices:
            state = self._choices.get(choice.index)
            if state is None:
                state = self._choices[choice.index] = {
                    "index": choice.index,
                    "message": {},
                    "finish_reason": None,
                }
            _merge(state["message"], choice.delta.to_dict())
            if choice.finish_reason is not None:
                state["finish_reason"] = choice.finish_reason
            if choice.native_finish_reason is not None:
                state["native_finish_reason"] = choice.native_finish_reason
            if choice.logprobs is not None:
                tokens = state.setdefault("logprobs", {"content": [], "refusal": None})
                tokens["content"].extend(choice.logprobs.get("content") or ())

    def result(self) -> dict[str, Any]:
        return {
            "id": self._id,
            "model": self._model,
            "choices": [self._choices[i] for i in sorted(self._choices)],
            "usage": self._usage,
        }

    def completion(self) -> ChatCompletion:
        """The whole ``chat.completion`` (what OpenAI answers a request without ``stream``).

        Raises:
            TruncatedStreamError: a choice has no finish (the stream did not end).
        """
        choices = []
        for state in self.result()["choices"]:
            if state["finish_reason"] is None:
                raise TruncatedStreamError(
                    f"choice {state['index']} has no finish: the stream did not end",
                    candidates=(state["index"],),
                )
            message = dict(state["message"])
            message.pop("role", None)
            for call in message.get("tool_calls") or ():
                call.pop("index", None)  # a whole message lists its calls; no index
            choices.append(
                Choice(
                    index=state["index"],
                    message=msgspec.convert(message, ChatCompletionMessage),
                    finish_reason=state["finish_reason"],
                    logprobs=state.get("logprobs"),
                    native_finish_reason=state.get("native_finish_reason"),
                )
            )
        usage = msgspec.convert(self._usage, CompletionUsage) if self._usage else None
        return ChatCompletion(
            id=self._id or "",
            created=self._created,
            model=self._model or "",
            choices=choices,
            usage=usage,
        )


def completion(chunks: list[ChatCompletionChunk]) -> ChatCompletion:
    """The whole ``chat.completion`` of a finished stream's chunks."""
    accumulator = ChunkAccumulator()
    for chunk in chunks:
        accumulator.feed(chunk)
    return accumulator.completion()


def assemble(chunks: list[ChatCompletionChunk]) -> dict[str, Any]:
    """The assembled completion of a list of chunks (see :class:`ChunkAccumulator`)."""
    accumulator = ChunkAccumulator()
    for chunk in chunks:
        accumulator.feed(chunk)
    return accumulator.result()
