"""Sans-IO chunk building: pipeline items → OpenAI ``chat.completion.chunk`` objects.

The rules here are the ones the ``openai`` SDK's stream accumulator needs
(``ChatCompletionStreamState``): ``role`` only in a choice's first delta; choices
open in index order; ``id``/``type``/``name`` once per tool call; tool indices dense
per choice; a signature exactly once; one ``finish_reason`` per choice, after its
tool calls; the usage chunk (``choices: []``) last.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Literal, TypeAlias

import msgspec

from ._gemini_models import UsageMetadata
from ._items import (
    Batch,
    End,
    Meta,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    Usage,
)
from ._openai_models import (
    ChatCompletionChunk,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    FinishReason,
)

__all__ = [
    "ChunkBuilder",
    "ReasoningField",
    "map_finish_reason",
    "map_usage",
    "random_id",
]

ReasoningField: TypeAlias = Literal["reasoning_content", "reasoning"] | None

_LENGTH = frozenset({"MAX_TOKENS", "CONTINUATION"})
_CONTENT_FILTER = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
        "PUP_LIMITED_DISABLED",
    }
)
_UNSPECIFIED_BLOCK = frozenset({"BLOCKED_REASON_UNSPECIFIED", "BLOCK_REASON_UNSPECIFIED"})
_ENCODE = msgspec.json.Encoder().encode
_OBJECT: Literal["chat.completion.chunk"] = "chat.completion.chunk"


def random_id() -> str:
    """The default id factory: 24 random hex digits (96 bits from ``os.urandom``)."""
    return os.urandom(12).hex()


def map_finish_reason(
    native: str | None, *, has_calls: bool = False, blocked: bool = False
) -> FinishReason:
    """Gemini ``finishReason`` (or prompt ``blockReason``) → one of OpenAI's values.

    ``MAX_TOKENS``/``CONTINUATION`` → ``length``; the safety family → ``content_filter``;
    anything else (``STOP``, ``OTHER``, unknown values, ``None``) → ``stop``, which
    becomes ``tool_calls`` when the choice made calls. A blocked prompt is
    ``content_filter`` unless its reason is unspecified.
    """
    if blocked:
        return "stop" if native in _UNSPECIFIED_BLOCK else "content_filter"
    if native in _LENGTH:
        return "length"
    if native in _CONTENT_FILTER:
        return "content_filter"
    return "tool_calls" if has_calls else "stop"


def map_usage(usage: UsageMetadata) -> CompletionUsage:
    """Gemini ``usageMetadata`` → OpenAI ``usage``.

    ``prompt_tokens`` = prompt + toolUsePrompt; ``completion_tokens`` = candidates +
    thoughts (OpenAI counts reasoning inside completion tokens); ``total_tokens`` =
    Gemini's total (or the sum when Gemini sent none); reasoning and cached token
    details only when Gemini sent those counts.
    """
    prompt = (usage.prompt_token_count or 0) + (usage.tool_use_prompt_token_count or 0)
    completion = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    total = usage.total_token_count
    return CompletionUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total if total is not None else prompt + completion,
        completion_tokens_details=(
            {"reasoning_tokens": usage.thoughts_token_count}
            if usage.thoughts_token_count is not None
            else None
        ),
        prompt_tokens_details=(
            {"cached_tokens": usage.cached_content_token_count}
            if usage.cached_content_token_count is not None
            else None
        ),
    )


def _signature(signature: str) -> dict[str, dict[str, str]]:
    return {"google": {"thought_signature": signature}}


class ChunkBuilder:
    """Builds OpenAI chunks from batches of pipeline items.

    Args:
        model: the ``model`` of every chunk; default: Gemini's ``modelVersion``
            without a ``models/`` prefix.
        include_usage: emit the final usage chunk (``choices: []``) when Gemini sent
            token counts.
        reasoning_field: the delta field for thought text: ``"reasoning_content"``
            (DeepSeek, vLLM ≤ 0.10, LiteLLM), ``"reasoning"`` (vLLM ≥ 0.11, OpenRouter,
            Ollama), or ``None`` to drop thought text.
        id_factory: makes the random part of ``chatcmpl-…`` (when Gemini sent no
            ``responseId``) and ``call_…`` ids.
        clock: returns the time in seconds for ``created``, read at the first chunk.
    """

    __slots__ = (
        "_calls",
        "_clock",
        "_created",
        "_headers",
        "_id",
        "_id_factory",
        "_include_usage",
        "_meta",
        "_model",
        "_next_choice",
        "_reasoning",
        "_tool_ids",
    )

    def __init__(
        self,
        *,
        model: str | None = None,
        include_usage: bool = True,
        reasoning_field: ReasoningField = "reasoning_content",
        id_factory: Callable[[], str] = random_id,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if reasoning_field not in ("reasoning_content", "reasoning", None):
            raise ValueError(
                "reasoning_field must be 'reasoning_content', 'reasoning' or None,"
                f" not {reasoning_field!r}"
            )
        self._model = model
        self._include_usage = include_usage
        self._reasoning = reasoning_field
        self._id_factory = id_factory
        self._clock = clock
        self._meta = Meta()
        self._id: str | None = None
        self._created = 0
        self._next_choice = 0  # choices 0 .. _next_choice-1 have had their first delta
        self._headers: set[tuple[int, int]] = set()
        self._tool_ids: dict[tuple[int, int], str] = {}
        self._calls: set[int] = set()

    # -- chunk plumbing -------------------------------------------------------------

    def _chunk(
        self, choices: list[ChunkChoice], usage: CompletionUsage | None = None
    ) -> ChatCompletionChunk:
        if self._id is None:
            rid = self._meta.response_id
            self._id = f"chatcmpl-{rid if rid else self._id_factory()}"
            self._created = int(self._clock())
            if self._model is None:
                version = self._meta.model_version or "gemini"
                self._model = version.removeprefix("models/")
        assert self._model is not None
        return ChatCompletionChunk(
            id=self._id,
            object=_OBJECT,  # given, so that its default factory is not called per chunk
            created=self._created,
            model=self._model,
            choices=choices,
            usage=usage,
        )

    def _emit(
        self,
        out: list[ChatCompletionChunk],
        candidate: int,
        delta: ChoiceDelta,
        finish: FinishReason | None = None,
        native: str | None = None,
    ) -> None:
        if candidate >= self._next_choice:
            while self._next_choice < candidate:  # open earlier choices first, in order
                opener = ChunkChoice(
                    index=self._next_choice, delta=ChoiceDelta(role="assistant"), finish_reason=None
                )
                out.append(self._chunk([opener]))
                self._next_choice += 1
            delta.role = "assistant"
            self._next_choice = candidate + 1
        choice = ChunkChoice(
            index=candidate, delta=delta, finish_reason=finish, native_finish_reason=native
        )
        out.append(self._chunk([choice]))

    def _tool_id(self, candidate: int, slot: int, gemini_id: str | None) -> str:
        key = (candidate, slot)
        tool_id = self._tool_ids.get(key)
        if tool_id is None:
            tool_id = self._tool_ids[key] = gemini_id or f"call_{self._id_factory()}"
        return tool_id

    # -- items ----------------------------------------------------------------------

    error = None
    """Always ``None``: bad input raises at once (one unit of input gives one result)."""

    def close(self, error: Exception | None = None) -> list[ChatCompletionChunk]:
        """The end of input: nothing is held back, so nothing to return."""
        return []

    def feed(self, batch: Batch) -> list[ChatCompletionChunk]:
        if len(batch) == 1:
            item = batch[0]
            # the common batch, one text part of an open choice (no role to add): no runs
            if type(item) is Text and item.candidate < self._next_choice:
                delta = self._text_delta(item.text, item.thought)
                if delta is None:
                    return []
                choice = ChunkChoice(index=item.candidate, delta=delta, finish_reason=None)
                return [self._chunk([choice])]
        out: list[ChatCompletionChunk] = []
        run_candidate = -1
        run_thought = False
        run: list[str] = []
        for item in batch:
            if type(item) is Text:
                if item.thought and self._reasoning is None:
                    continue
                if run and (item.candidate != run_candidate or item.thought != run_thought):
                    self._text(out, run_candidate, run_thought, run)
                    run = []
                run_candidate, run_thought = item.candidate, item.thought
                run.append(item.text)
                continue
            if run:
                self._text(out, run_candidate, run_thought, run)
                run = []
            if type(item) is Meta:
                if self._id is None:
                    self._meta = item
            elif type(item) is ToolCallHeader:
                self._header(out, item)
            elif type(item) is ToolCall:
                self._tool_call(out, item)
            elif type(item) is TextSignature:
                self._emit(
                    out, item.candidate, ChoiceDelta(extra_content=_signature(item.signature))
                )
            elif type(item) is End:
                has_calls = item.has_calls or item.candidate in self._calls
                finish = map_finish_reason(item.reason, has_calls=has_calls, blocked=item.blocked)
                self._emit(out, item.candidate, ChoiceDelta(), finish, item.reason)
            elif type(item) is Usage and self._include_usage:
                out.append(self._chunk([], map_usage(item.usage)))
        if run:
            self._text(out, run_candidate, run_thought, run)
        return out

    def _text_delta(self, text: str, thought: bool) -> ChoiceDelta | None:
        """The delta of a text or thought run (``None``: thought text is dropped)."""
        if not thought:
            return ChoiceDelta(content=text)
        if self._reasoning == "reasoning_content":
            return ChoiceDelta(reasoning_content=text)
        if self._reasoning is None:
            return None
        return ChoiceDelta(reasoning=text)

    def _text(
        self, out: list[ChatCompletionChunk], candidate: int, thought: bool, run: list[str]
    ) -> None:
        delta = self._text_delta(run[0] if len(run) == 1 else "".join(run), thought)
        if delta is not None:
            self._emit(out, candidate, delta)

    def _header(self, out: list[ChatCompletionChunk], item: ToolCallHeader) -> None:
        self._headers.add((item.candidate, item.slot))
        self._calls.add(item.candidate)
        call = ChoiceDeltaToolCall(
            index=item.slot,
            id=self._tool_id(item.candidate, item.slot, item.id),
            type="function",
            function=ChoiceDeltaToolCallFunction(name=item.name, arguments=""),
        )
        self._emit(out, item.candidate, ChoiceDelta(tool_calls=[call]))

    def _tool_call(self, out: list[ChatCompletionChunk], item: ToolCall) -> None:
        self._calls.add(item.candidate)
        arguments = _ENCODE(item.args).decode()
        extra = _signature(item.signature) if item.signature else None
        if (item.candidate, item.slot) in self._headers:
            call = ChoiceDeltaToolCall(
                index=item.slot,
                function=ChoiceDeltaToolCallFunction(arguments=arguments),
                extra_content=extra,
            )
        else:
            call = ChoiceDeltaToolCall(
                index=item.slot,
                id=self._tool_id(item.candidate, item.slot, item.id),
                type="function",
                function=ChoiceDeltaToolCallFunction(name=item.name, arguments=arguments),
                extra_content=extra,
            )
        self._emit(out, item.candidate, ChoiceDelta(tool_calls=[call]))
