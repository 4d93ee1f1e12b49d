"""Sans-IO chunk building: pipeline items → OpenAI ``chat.completion.chunk`` objects.

The rules here are the ones the ``openai`` SDK's stream accumulator needs
(``ChatCompletionStreamState``): ``role`` only in a choice's first delta; choices
open in index order; ``id``/``type``/``name`` once per tool call; tool indices dense
per choice; a signature exactly once; one ``finish_reason`` per choice, after its
tool calls; the usage chunk (``choices: []``) last.

So the finishes and the usage wait for the end of input (``close``): whatever comes
after an :class:`End` or :class:`Usage` item (content an operator of the user's held
until its source completed) still goes out before them, on either upstream.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal, TypeAlias

import msgspec

from .._option_checks import check_reasoning_field
from ..openai import (
    ID_MARK,
    OTHER,
    TEXT,
    THOUGHT,
    AudioStream,
    ContentMap,
    part_entry,
    render_code,
    url_citations,
    without_data,
)
from ..slots import (
    ArgsDelta,
    Batch,
    DataPart,
    End,
    Logprobs,
    Meta,
    Sources,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    Usage,
)
from ._choice import ChoiceState, image_entry, merge, signature_extra
from ._mapping import created_seconds, map_finish_reason, map_logprobs, map_usage, random_id
from ._models import (
    ChatCompletionChunk,
    ChoiceDelta,
    ChoiceDeltaToolCall,
    ChoiceDeltaToolCallFunction,
    ChunkChoice,
    CompletionUsage,
    FinishReason,
)

__all__ = ["ChunkBuilder", "ReasoningField"]

ReasoningField: TypeAlias = Literal["reasoning_content", "reasoning"] | None

_ENCODE = msgspec.json.Encoder().encode
_OBJECT: Literal["chat.completion.chunk"] = "chat.completion.chunk"


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
        render_code: also show code execution (``executableCode``,
            ``codeExecutionResult``) as Markdown fenced blocks in the content (or in
            the reasoning field, for thought parts); the parts themselves are always
            in ``extra_content.google.parts``.
        signature_in_id: also carry a call's thought signature in its id, as
            ``<id>__thought__<signature>`` (LiteLLM's convention), for clients that
            drop unknown fields; such ids are as long as the signature (hundreds to
            thousands of characters), which some other providers refuse.
        id_factory: makes the random part of ``chatcmpl-…`` (when Gemini sent no
            ``responseId``), ``call_…`` and ``audio_…`` ids.
        clock: returns the time in seconds for ``created``, read at the first chunk
            (Vertex's ``createTime`` is used instead when the stream has one).
    """

    __slots__ = (
        "_calls",
        "_choices",
        "_clock",
        "_contents",
        "_created",
        "_headers",
        "_held",
        "_id",
        "_id_factory",
        "_include_usage",
        "_meta",
        "_model",
        "_model_status",
        "_next_choice",
        "_reasoning",
        "_render_code",
        "_signature_in_id",
        "_streamed",
        "_tool_ids",
    )

    def __init__(
        self,
        *,
        model: str | None = None,
        include_usage: bool = True,
        reasoning_field: ReasoningField = "reasoning_content",
        render_code: bool = True,
        signature_in_id: bool = False,
        id_factory: Callable[[], str] = random_id,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_reasoning_field(reasoning_field)
        self._model = model
        self._include_usage = include_usage
        self._reasoning = reasoning_field
        self._render_code = render_code
        self._signature_in_id = signature_in_id
        self._id_factory = id_factory
        self._clock = clock
        self._meta = Meta()
        self._model_status: Any = None
        self._id: str | None = None
        self._created = 0
        self._next_choice = 0  # choices 0 .. _next_choice-1 have had their first delta
        self._choices: list[ChoiceState] = []  # the state of each choice, by index
        self._contents: list[ContentMap] = []  # each choice's content map (the fast path's)
        self._headers: set[tuple[int, int]] = set()
        self._streamed: set[tuple[int, int]] = set()  # calls whose arguments came as ArgsDelta
        self._tool_ids: dict[tuple[int, int], str] = {}
        self._calls: set[int] = set()
        self._held: list[End | Usage] = []  # finishes and usage, written at close

    # -- chunk plumbing -------------------------------------------------------------

    def _chunk(
        self, choices: list[ChunkChoice], usage: CompletionUsage | None = None
    ) -> ChatCompletionChunk:
        if self._id is None:
            rid = self._meta.response_id
            self._id = f"chatcmpl-{rid if rid else self._id_factory()}"
            created = created_seconds(self._meta.create_time)
            self._created = created if created is not None else int(self._clock())
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

    def _state(self, candidate: int) -> ChoiceState:
        choices = self._choices
        while len(choices) <= candidate:
            state = ChoiceState()
            choices.append(state)
            self._contents.append(state.content)
        return choices[candidate]

    def _emit(
        self,
        out: list[ChatCompletionChunk],
        candidate: int,
        delta: ChoiceDelta,
        finish: FinishReason | None = None,
        native: str | None = None,
        logprobs: dict[str, Any] | None = None,
    ) -> None:
        if candidate >= self._next_choice:
            # open earlier choices first, in order; and a choice whose first delta has
            # logprobs too: the SDK would count the logprobs of an opening chunk twice
            last = candidate + 1 if logprobs is not None else candidate
            while self._next_choice < last:
                opener = ChunkChoice(
                    index=self._next_choice, delta=ChoiceDelta(role="assistant"), finish_reason=None
                )
                out.append(self._chunk([opener]))
                self._next_choice += 1
            if self._next_choice == candidate:
                delta.role = "assistant"
                self._next_choice = candidate + 1
            self._state(candidate)  # an open choice has its state
        choice = ChunkChoice(
            index=candidate,
            delta=delta,
            finish_reason=finish,
            native_finish_reason=native,
            logprobs=logprobs,
        )
        out.append(self._chunk([choice]))

    def _tool_id(
        self, candidate: int, slot: int, gemini_id: str | None, signature: str | None
    ) -> str:
        key = (candidate, slot)
        tool_id = self._tool_ids.get(key)
        if tool_id is None:
            tool_id = gemini_id or f"call_{self._id_factory()}"
            if self._signature_in_id and signature:
                tool_id = f"{tool_id}{ID_MARK}{signature}"  # for clients that drop extra fields
            self._tool_ids[key] = tool_id
        return tool_id

    # -- items ----------------------------------------------------------------------

    error = None
    """Always ``None``: bad input raises at once (one unit of input gives one result)."""

    def close(self, error: Exception | None = None) -> list[ChatCompletionChunk]:
        """The end of input: each choice's finish (its last bytes of audio and its sources
        first), the last bytes of audio of a choice that never ended, then the usage.

        With ``error`` too: the finishes and usage that came before it are valid output.
        """
        out: list[ChatCompletionChunk] = []
        held, self._held = self._held, []
        for item in held:
            if type(item) is End:
                self._end(out, item)
        for candidate, state in enumerate(self._choices):
            if state.audio is not None:
                rest = state.audio.close()
                if rest:
                    self._emit(out, candidate, ChoiceDelta(audio={"data": rest}))
        if self._include_usage:
            for item in held:
                if type(item) is Usage:
                    out.append(self._chunk([], map_usage(item.usage)))
        return out

    def feed(self, batch: Batch) -> list[ChatCompletionChunk]:
        if len(batch) == 1:
            item = batch[0]
            # the common batch, one text part of an open choice (no role to add): no runs
            if type(item) is Text and item.candidate < self._next_choice:
                text = item.text
                content = self._contents[item.candidate]
                if item.thought:
                    content.add(text, THOUGHT)
                    delta = self._text_delta(text, True)
                    if delta is None:
                        return []
                else:
                    if content.plain:  # ContentMap.add inlined for the most common case
                        pending = content.pending
                        pending.append(text)
                        if len(pending) >= 64:
                            content.size()
                    else:
                        content.add(text, TEXT)
                    delta = ChoiceDelta(content=text)
                choice = ChunkChoice(index=item.candidate, delta=delta, finish_reason=None)
                # an open choice means a chunk was made: id, created and model are set
                return [
                    ChatCompletionChunk(
                        id=self._id,  # type: ignore[arg-type]
                        object=_OBJECT,
                        created=self._created,
                        model=self._model,  # type: ignore[arg-type]
                        choices=[choice],
                    )
                ]
        out: list[ChatCompletionChunk] = []
        run_candidate = -1
        run_thought = False
        run: list[str] = []
        for item in batch:
            if type(item) is Text:
                if run and (item.candidate != run_candidate or item.thought != run_thought):
                    self._text(out, run_candidate, run_thought, run)
                    run = []
                run_candidate, run_thought = item.candidate, item.thought
                run.append(item.text)
                continue
            if type(item) is Logprobs:
                logprobs = map_logprobs(item.result)
                if run and run_candidate == item.candidate and not run_thought:
                    self._text(out, run_candidate, run_thought, run, logprobs)
                    run = []
                else:
                    if run:
                        self._text(out, run_candidate, run_thought, run)
                        run = []
                    self._emit(out, item.candidate, ChoiceDelta(), logprobs=logprobs)
                continue
            if run:
                self._text(out, run_candidate, run_thought, run)
                run = []
            if type(item) is Meta:
                if self._id is None:
                    self._meta = item
                if item.model_status is not None:
                    self._model_status = item.model_status
            elif type(item) is DataPart:
                self._data_part(out, item)
            elif type(item) is Sources:
                self._sources(item)
            elif type(item) is ToolCallHeader:
                self._header(out, item)
            elif type(item) is ArgsDelta:
                self._streamed.add((item.candidate, item.slot))
                function = ChoiceDeltaToolCallFunction(arguments=item.text)
                call = ChoiceDeltaToolCall(index=item.slot, function=function)
                self._emit(out, item.candidate, ChoiceDelta(tool_calls=[call]))
            elif type(item) is ToolCall:
                self._tool_call(out, item)
            elif type(item) is TextSignature:
                self._emit(
                    out, item.candidate, ChoiceDelta(extra_content=signature_extra(item.signature))
                )
            elif type(item) is End or type(item) is Usage:
                self._held.append(item)  # written at close: content may still come
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
        self,
        out: list[ChatCompletionChunk],
        candidate: int,
        thought: bool,
        run: list[str],
        logprobs: dict[str, Any] | None = None,
    ) -> None:
        text = run[0] if len(run) == 1 else "".join(run)
        self._state(candidate).content.add(text, THOUGHT if thought else TEXT)
        delta = self._text_delta(text, thought)
        if delta is not None:
            self._emit(out, candidate, delta, logprobs=logprobs)
        elif logprobs is not None:
            self._emit(out, candidate, ChoiceDelta(), logprobs=logprobs)

    def _data_part(self, out: list[ChatCompletionChunk], item: DataPart) -> None:
        """A code, media or built-in tool part: shown where OpenAI has a field for it,
        and always as one ``extra_content.google.parts`` entry, signature included."""
        part = item.part
        state = self._state(item.candidate)
        thought = part.thought is True
        # where it stood among the text (a thought part too: the order is what matters)
        where: dict[str, Any] = {"content_index": state.content.length}
        delta = ChoiceDelta()
        # a fence opens on a line of its own
        first = not thought and state.content.newline
        rendered = render_code(part, first=first) if self._render_code else None
        if rendered is not None:
            if thought:
                delta = self._text_delta(rendered, True) or delta
                state.content.add("", OTHER)
            else:
                delta.content = rendered
                state.content.add(rendered, OTHER)
        else:
            state.content.add("", OTHER)
            inline, file = part.inline_data, part.file_data
            if inline is not None and not thought:
                mime, data = inline.get("mimeType"), inline.get("data")
                if type(mime) is str and type(data) is str:
                    if mime.startswith("image/"):
                        where["image_index"] = state.images
                        delta.images = [image_entry(state.images, f"data:{mime};base64,{data}")]
                        state.images += 1
                        part = without_data(part)
                    elif mime.startswith("audio/"):
                        delta.audio = self._audio(state, data)
                        where["audio_bytes"] = state.audio.size if state.audio else 0
                        part = without_data(part)
            elif file is not None and not thought:
                mime, uri = file.get("mimeType"), file.get("fileUri")
                if type(uri) is str and (mime is None or str(mime).startswith("image/")):
                    where["image_index"] = state.images
                    delta.images = [image_entry(state.images, uri)]
                    state.images += 1
        delta.extra_content = {"google": {"parts": [part_entry(part, state.entries, **where)]}}
        state.entries += 1
        self._emit(out, item.candidate, delta)

    def _audio(self, state: ChoiceState, data: str) -> dict[str, Any]:
        if state.audio is None:
            state.audio = AudioStream()
            state.audio_id = f"audio_{self._id_factory()}"
            return {"id": state.audio_id, "data": state.audio.feed(data)}
        return {"data": state.audio.feed(data)}

    def _sources(self, item: Sources) -> None:
        state = self._state(item.candidate)
        state.content.record()  # annotations will need the text
        if item.grounding is not None:
            state.grounding = merge(state.grounding, item.grounding)
        if item.citation is not None:
            state.citation = merge(state.citation, item.citation)
        if item.url_context is not None:
            state.urls = merge(state.urls, item.url_context)

    def _end(self, out: list[ChatCompletionChunk], item: End) -> None:
        """The end of a choice: the audio's last piece, its sources, then its finish."""
        candidate = item.candidate
        state = self._choices[candidate] if candidate < len(self._choices) else None
        if state is not None and state.audio is not None:
            rest = state.audio.close()
            if rest:
                self._emit(out, candidate, ChoiceDelta(audio={"data": rest}))
        if state is not None and (state.grounding or state.citation or state.urls):
            google: dict[str, Any] = {}
            if state.grounding is not None:
                google["grounding_metadata"] = state.grounding.value
            if state.citation is not None:
                google["citation_metadata"] = state.citation.value
            if state.urls is not None:
                google["url_context_metadata"] = state.urls.value
            annotations = url_citations(
                state.content,
                state.grounding.value if state.grounding is not None else None,
                state.citation.value if state.citation is not None else None,
            )
            delta = ChoiceDelta(annotations=annotations or None, extra_content={"google": google})
            self._emit(out, candidate, delta)
        has_calls = item.has_calls or candidate in self._calls
        finish = map_finish_reason(item.reason, has_calls=has_calls, blocked=item.blocked)
        delta = ChoiceDelta()
        details = dict(item.details) if item.details else {}
        if candidate == 0 and self._model_status is not None:
            details["model_status"] = self._model_status
        if details:
            delta.extra_content = {"google": details}
        if item.message and (item.blocked or finish == "content_filter"):
            delta.refusal = item.message  # why it was blocked, where a chat UI shows it
        self._emit(out, candidate, delta, finish, item.reason)

    def _header(self, out: list[ChatCompletionChunk], item: ToolCallHeader) -> None:
        self._headers.add((item.candidate, item.slot))
        self._calls.add(item.candidate)
        call = ChoiceDeltaToolCall(
            index=item.slot,
            id=self._tool_id(item.candidate, item.slot, item.id, item.signature),
            type="function",
            function=ChoiceDeltaToolCallFunction(name=item.name, arguments=""),
        )
        self._emit(out, item.candidate, ChoiceDelta(tool_calls=[call]))

    def _tool_call(self, out: list[ChatCompletionChunk], item: ToolCall) -> None:
        self._calls.add(item.candidate)
        extra = signature_extra(item.signature) if item.signature else None
        if (item.candidate, item.slot) in self._streamed:
            # the arguments went out as they arrived: only the signature is left to say
            if extra is not None:
                function = ChoiceDeltaToolCallFunction(arguments="")  # the SDK wants one
                call = ChoiceDeltaToolCall(index=item.slot, function=function, extra_content=extra)
                self._emit(out, item.candidate, ChoiceDelta(tool_calls=[call]))
            return
        arguments = item.arguments if item.arguments is not None else _ENCODE(item.args).decode()
        if (item.candidate, item.slot) in self._headers:
            call = ChoiceDeltaToolCall(
                index=item.slot,
                function=ChoiceDeltaToolCallFunction(arguments=arguments),
                extra_content=extra,
            )
        else:
            call = ChoiceDeltaToolCall(
                index=item.slot,
                id=self._tool_id(item.candidate, item.slot, item.id, item.signature),
                type="function",
                function=ChoiceDeltaToolCallFunction(name=item.name, arguments=arguments),
                extra_content=extra,
            )
        self._emit(out, item.candidate, ChoiceDelta(tool_calls=[call]))
