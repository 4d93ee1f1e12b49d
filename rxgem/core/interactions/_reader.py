"""Sans-IO reading of Interactions events into the pipeline's items.

:class:`StepReader` turns the events of :class:`~rxgem.core.InteractionsParser` into
batches of the items of :mod:`rxgem.items`, ready for either output (``ChunkBuilder``,
``ResponsesBuilder``): no slot table, no finish buffer, because Interactions says each
thing once, in order. Everything is candidate 0 (an interaction has one output).

- ``interaction.created`` → :class:`Meta` (id, model, created).
- ``model_output``: text (at ``step.start`` and in ``text`` deltas) → :class:`Text`;
  media → :class:`DataPart`; ``url_citation`` annotations → :class:`Sources`.
- ``thought``: summaries → ``Text(thought=True)``; its signature is held until the next
  step starts: a ``function_call`` right after it takes it (its :class:`ToolCallHeader`
  and :class:`ToolCall`); any other step (or the end) gets it in its place, first, as a
  :class:`DataPart` of a bare thought part (``Part(thought=True, thought_signature=…)``).
  So every thought step's signature reaches an item, in order among the text and calls;
  from these the request side makes the same ``thought`` steps again.
- ``function_call``: ``step.start`` → :class:`ToolCallHeader` (slots 0, 1, 2… in
  order, Google's id as the call id); each ``arguments_delta`` → :class:`ArgsDelta` at
  once; ``step.stop`` → :class:`ToolCall` with the parsed arguments and the exact
  streamed string.
- built-in tools' steps → one :class:`DataPart` each at ``step.stop``, the Part the
  ``generateContent`` side would give (``_parts``).
- a step or delta type not known here → :class:`UnknownStep` and one warning per type.
- ``interaction.completed`` → the held signature's :class:`DataPart`, :class:`End` (its
  ``reason`` the status: ``completed``, ``requires_action``, ``incomplete``,
  ``budget_exceeded``) and :class:`Usage`; ``failed``/``cancelled`` and ``error``
  events → :class:`~rxgem.GeminiAPIError` (the items before were delivered).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

import msgspec

from .._errors import GeminiAPIError, MalformedStreamError, TruncatedStreamError, snippet
from ..gemini import Part
from ..slots import (
    ArgsDelta,
    Batch,
    DataPart,
    End,
    Meta,
    Sources,
    Text,
    ToolCall,
    ToolCallHeader,
    UnknownStep,
    Usage,
)
from ._models import (
    Delta,
    Done,
    ErrorEvent,
    Interaction,
    InteractionCompleted,
    InteractionCreated,
    InteractionEvent,
    InteractionStatusUpdate,
    InteractionUsage,
    Step,
    StepDelta,
    StepStart,
    StepStop,
    UnknownEvent,
)
from ._parts import (
    BUILT_IN,
    MEDIA,
    built_in_part,
    citation,
    content_part,
    media_part,
    usage_metadata,
)

__all__ = ["FAILED", "StepReader"]

FAILED = frozenset({"failed", "cancelled"})
"""The final statuses that are errors, not finishes."""

_NOT_OUTPUT = frozenset({"user_input", "function_result"})
"""Steps that are input, not the model's output (an object read with its input)."""

_ARGS_DECODER = msgspec.json.Decoder()


class _Open:
    """A step between its ``step.start`` and its ``step.stop``."""

    __slots__ = ("fields", "id", "kind", "name", "pieces", "signature", "slot", "start_args")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.slot = -1
        self.name = ""
        self.id: str | None = None
        self.signature: str | None = None
        self.pieces: list[str] = []  # model_output: its text; function_call: its arguments
        self.start_args: Any = None
        self.fields: dict[str, Any] | None = None  # a built-in tool's step, merged


class StepReader:
    """Turns Interactions events into batches of items (see the module docstring).

    Args:
        allow_truncated: a stream that ends without ``interaction.completed`` ends with
            a finish (``End(0, None)``) instead of a :class:`TruncatedStreamError`.
    """

    __slots__ = (
        "_allow_truncated",
        "_base",
        "_closed",
        "_done",
        "_error",
        "_events",
        "_finished",
        "_has_calls",
        "_interaction_id",
        "_last_event_id",
        "_recording",
        "_signature",
        "_slots",
        "_status",
        "_steps",
        "_warned",
    )

    def __init__(self, *, allow_truncated: bool = False) -> None:
        self._allow_truncated = allow_truncated
        self._events = 0
        self._steps: dict[int, _Open] = {}
        self._slots = 0
        self._has_calls = False
        self._signature: str | None = None  # a thought's, until a call or the end takes it
        self._recording = False  # the outputs were asked to keep the text
        self._base = 0  # UTF-8 bytes of the text of the finished model_output steps...
        # ...but those in `_finished`, counted when an annotation needs it (most streams
        # have none, and counting costs a join and an encode of the whole text)
        self._finished: list[list[str]] = []
        self._interaction_id: str | None = None
        self._status: str | None = None
        self._last_event_id: str | None = None
        self._done = False  # interaction.completed (or a failure) came
        self._closed = False
        self._error: Exception | None = None
        self._warned: set[str] = set()

    @property
    def interaction_id(self) -> str | None:
        """The interaction's id, once an event named it."""
        return self._interaction_id

    @property
    def status(self) -> str | None:
        """The interaction's last status (``in_progress``, ``completed``, ...)."""
        return self._status

    @property
    def last_event_id(self) -> str | None:
        """The ``event_id`` of the last event that had one: where to resume the stream."""
        return self._last_event_id

    @property
    def error(self) -> Exception | None:
        """A truncated stream's error after :meth:`close` returned what it held."""
        return self._error

    def feed(self, event: InteractionEvent) -> Batch:
        self._events += 1
        if type(event) is StepDelta:
            if event.event_id is not None:
                self._last_event_id = event.event_id
            delta = event.delta
            text = delta.text
            if text is not None and delta.type == "text":
                step = self._steps.get(event.index)
                if step is not None and step.kind == "model_output":
                    step.pieces.append(text)
                    return [Text(0, text)]
            return self._delta(event.index, delta, event.raw)
        if type(event) is Done:
            return []
        if type(event) is UnknownEvent:
            if event.event_id is not None:
                self._last_event_id = event.event_id
            return self._unknown(event.event_type, event.value)
        if event.event_id is not None:  # type: ignore[union-attr]  # Done came above
            self._last_event_id = event.event_id  # type: ignore[union-attr]
        if type(event) is StepStart:
            return self._start(event.index, event.step, event.raw)
        if type(event) is StepStop:
            return self._stop(event.index)
        if type(event) is InteractionCreated:
            return self._created(event.interaction)
        if type(event) is InteractionStatusUpdate:
            if event.interaction_id:
                self._interaction_id = event.interaction_id
            if event.status is not None:
                self._status = event.status
            return []
        if type(event) is InteractionCompleted:
            return self._completed(event.interaction)
        if type(event) is ErrorEvent:
            self._done = True
            error = event.error
            code = error.code if error is not None else None
            raise GeminiAPIError(
                (error.message if error is not None else None) or "(no message)",
                code=code if type(code) is int else None,
                status=code if type(code) is str else None,
                event=self._events,
            )
        raise TypeError(f"not an Interactions event: {type(event).__name__}")

    # -- events ------------------------------------------------------------------------

    def _created(self, interaction: Interaction) -> Batch:
        if interaction.id:
            self._interaction_id = interaction.id
        if interaction.status is not None:
            self._status = interaction.status
        model = interaction.model or interaction.agent
        if not (interaction.id or model or interaction.created):
            return []
        return [Meta(interaction.id or None, model, interaction.created)]

    def _start(self, index: int, step: Step, raw: Any = None) -> Batch:
        kind = step.type
        if index in self._steps:
            raise self._malformed(f"a step.start event for step {index}, which is open")
        state = _Open(kind)
        self._steps[index] = state
        out: Batch = []
        if self._signature is not None and kind != "function_call":
            out.append(self._placed())
        if kind == "model_output":
            if not self._recording:
                # annotations come after the text they cite: the outputs keep the text
                # from here on to place them (a marker of no sources, once)
                self._recording = True
                out.append(Sources(0))
            for content in step.content or ():
                self._content(out, state, content)
        elif kind == "thought":
            for content in step.summary or ():
                if content.text:
                    out.append(Text(0, content.text, thought=True))
                else:
                    part = content_part(content, thought=True)
                    if part is not None:
                        out.append(DataPart(0, part))
            if step.signature:
                self._signature = step.signature
        elif kind == "function_call":
            state.slot = self._slots
            self._slots += 1
            self._has_calls = True
            state.name = step.name or ""
            state.id = step.id or None
            state.signature = self._signature or step.signature or None
            self._signature = None
            state.start_args = step.arguments
            out.append(ToolCallHeader(0, state.slot, state.name, state.id, state.signature))
        elif kind in BUILT_IN:
            state.fields = msgspec.to_builtins(step)
        elif kind not in _NOT_OUTPUT:
            return self._unknown(kind, raw if raw is not None else msgspec.to_builtins(step))
        return out

    def _content(self, out: Batch, state: _Open, content: Any) -> None:
        """A content of a ``model_output`` step, at its start or in a delta."""
        if content.type == "text" or content.text is not None:
            if content.text:
                state.pieces.append(content.text)
                out.append(Text(0, content.text))
            if content.annotations:
                self._annotations(out, content.annotations)
            return
        if content.type in MEDIA:
            part = content_part(content)
            if part is not None:
                out.append(DataPart(0, part))
                return
        out.extend(self._unknown(f"content {content.type}", msgspec.to_builtins(content)))

    def _annotations(self, out: Batch, annotations: list[Any]) -> None:
        piece = citation(annotations, self._text_base())
        if piece is not None:
            out.append(Sources(0, citation=piece))

    def _delta(self, index: int, delta: Delta, raw: Any = None) -> Batch:
        state = self._steps.get(index)
        if state is None:
            raise self._malformed(
                f"a step.delta event ({delta.type}) for step {index}, which is not open"
            )
        kind = delta.type
        out: Batch = []
        if kind == "arguments_delta":
            text = delta.arguments
            if state.kind != "function_call" or type(text) is not str:
                raise self._malformed(
                    f"step.delta event: an arguments_delta of {state.kind} step {index}"
                    + ("" if type(text) is str else " that is not a string")
                )
            state.pieces.append(text)
            out.append(ArgsDelta(0, state.slot, text))
        elif kind == "text" and delta.text is not None:
            state.pieces.append(delta.text)
            out.append(Text(0, delta.text, thought=state.kind == "thought"))
        elif kind == "thought_summary":
            content = delta.content
            if content is not None and content.text:
                out.append(Text(0, content.text, thought=True))
            elif content is not None:
                part = content_part(content, thought=True)
                if part is not None:
                    out.append(DataPart(0, part))
        elif kind == "thought_signature":
            if delta.signature:
                if state.kind == "function_call":
                    state.signature = delta.signature
                else:
                    if self._signature is not None:  # a second one: the first keeps its place
                        out.append(self._placed())
                    self._signature = delta.signature
        elif kind == "text_annotation_delta":
            if delta.annotations:
                self._annotations(out, delta.annotations)
        elif kind in MEDIA:
            thought = state.kind == "thought"
            part = media_part(delta.mime_type, delta.data, delta.uri, thought=thought)
            if part is not None:
                out.append(DataPart(0, part))
        elif state.fields is not None and kind in BUILT_IN:
            for key, value in msgspec.to_builtins(delta).items():
                if key != "type" and (value or key not in state.fields):
                    state.fields[key] = value
        elif kind == "function_result":
            pass  # a result shown in the output: the client's own, nothing to show again
        else:
            return self._unknown(kind, raw if raw is not None else msgspec.to_builtins(delta))
        return out

    def _text_base(self) -> int:
        """The UTF-8 bytes of the text of the finished ``model_output`` steps."""
        for pieces in self._finished:
            text = pieces[0] if len(pieces) == 1 else "".join(pieces)
            self._base += len(text) if text.isascii() else len(text.encode())
        self._finished.clear()
        return self._base

    def _stop(self, index: int) -> Batch:
        state = self._steps.pop(index, None)
        if state is None:
            raise self._malformed(f"a step.stop event for step {index}, which is not open")
        kind = state.kind
        if kind == "model_output":
            if state.pieces:
                self._finished.append(state.pieces)
            return []
        if kind == "function_call":
            return [self._call(index, state)]
        if state.fields is not None:
            return [DataPart(0, built_in_part(kind, state.fields))]
        return []

    def _call(self, index: int, state: _Open) -> ToolCall:
        arguments: str | None = None
        if state.pieces:
            arguments = "".join(state.pieces)
            try:
                args = _ARGS_DECODER.decode(arguments)
            except msgspec.DecodeError as exc:
                raise self._malformed(
                    f"step.stop event: the arguments of function_call step {index}"
                    f" ({state.name}) are not valid JSON ({exc})",
                    arguments,
                ) from None
            if type(args) is not dict:
                raise self._malformed(
                    f"step.stop event: the arguments of function_call step {index}"
                    f" ({state.name}) are not a JSON object",
                    arguments,
                )
        else:
            args = state.start_args if type(state.start_args) is dict else {}
        return ToolCall(0, state.slot, state.name, state.id, args, state.signature, arguments)

    def _completed(self, interaction: Interaction) -> Batch:
        if interaction.id:
            self._interaction_id = interaction.id
        status = interaction.status or "completed"
        self._status = status
        self._done = True
        if status in FAILED:
            errors = interaction.errors or ([interaction.error] if interaction.error else [])
            message = "; ".join(e.message for e in errors if e.message)
            what = (
                "the interaction failed" if status == "failed" else f"the interaction was {status}"
            )
            raise GeminiAPIError(
                what + (f": {message}" if message else ""),
                status=status,
                event=self._events,
            )
        out: Batch = []
        for index in sorted(self._steps):  # steps never stopped: what they said is final
            out.extend(self._stop(index))
        if self._signature is not None:
            out.append(self._placed())
        out.append(End(0, status, self._has_calls))
        usage = interaction.usage
        if usage is None and interaction.metadata is not None:
            total = interaction.metadata.get("total_usage")
            if type(total) is dict:
                try:
                    usage = msgspec.convert(total, InteractionUsage)
                except msgspec.ValidationError:
                    usage = None
        if usage is not None:
            out.append(Usage(usage_metadata(usage)))
        return out

    def _placed(self) -> DataPart:
        """The held thought signature, in its place: a bare thought part that carries it
        (chat keeps it among the message's parts, Responses as a reasoning item)."""
        signature, self._signature = self._signature, None
        return DataPart(0, Part(thought=True, thought_signature=signature))

    def _unknown(self, kind: str, value: Any) -> Batch:
        if kind not in self._warned:
            self._warned.add(kind)
            warnings.warn(
                f"rxgem does not know the Interactions type {kind!r}: passed on as an"
                " UnknownStep item, which the outputs ignore",
                stacklevel=3,
            )
        return [UnknownStep(0, kind, value)]

    def _malformed(self, reason: str, data: str = "") -> MalformedStreamError:
        return MalformedStreamError(
            f"Interactions stream: {reason}",
            event=self._events,
            snippet=snippet(data) if data else "",
        )

    # -- the end -----------------------------------------------------------------------

    def close(self, error: Exception | None = None) -> Batch:
        """The end of input.

        After ``interaction.completed``: nothing. Otherwise the calls still open whose
        arguments parse, and the held signature; then, with ``allow_truncated`` (and no
        ``error``), ``End(0, None)``; without it, a :class:`TruncatedStreamError`
        (raised at once when nothing was returned, else kept in :attr:`error`).
        """
        if self._closed:
            if self._error is not None and error is None:
                raise self._error
            return []
        self._closed = True
        if self._done:
            return []
        out: Batch = []
        for index in sorted(self._steps):
            state = self._steps[index]
            if state.kind == "function_call":
                # cut in the middle of its arguments: nothing whole to give
                with contextlib.suppress(MalformedStreamError):
                    out.append(self._call(index, state))
        self._steps.clear()
        if self._signature is not None:
            out.append(self._placed())
        if error is not None:
            return out
        if self._allow_truncated:
            out.append(End(0, None, self._has_calls))
            return out
        truncation = TruncatedStreamError(
            "the Interactions stream ended before interaction.completed"
            if self._events
            else "the Interactions stream ended before any event arrived",
            candidates=(0,) if self._events else (),
        )
        if not out:
            raise truncation
        self._error = truncation
        return out
