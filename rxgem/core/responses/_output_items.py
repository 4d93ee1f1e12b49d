"""The output items of a Responses stream: each one's events from ``added`` to ``done``.

:class:`OutputItems` opens and closes the items of one response for the
``ResponsesBuilder`` that holds it, through its public methods and attributes: the
``message`` (``output_text`` and ``refusal`` parts), the ``reasoning`` item (its
summary), ``function_call``, ``code_interpreter_call`` (``executableCode`` with its
result) and ``image_generation_call`` items. Each finished item is kept by output index
for the response's ``output``. Data parts with no Responses item (audio, files, a
built-in tool's call, thought parts) are entries of the message's
``extra_content.google.parts``, as in Chat Completions.

The output reads in the stream's order: a run of text is one message and a run of
thoughts one reasoning item, and a new item ends them (:meth:`OutputItems.open_index`),
so that text after code (or after an image, a call, thoughts) is a new message after
it, each item done before the next begins. Only the reasoning item that carries the
signatures (``include_encrypted_reasoning``) stays open to the end, to carry them all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ..gemini import Part
from ..openai import OTHER, TEXT, THOUGHT, ContentMap, part_entry, without_data
from ..slots import ToolCall
from ._mapping import flat_citations
from ._models import (
    CodeInterpreterCall,
    ContentPart,
    ContentPartAdded,
    ContentPartDone,
    FunctionCallArgumentsDelta,
    FunctionCallArgumentsDone,
    FunctionCallItem,
    ImageGenerationCall,
    OutputItem,
    OutputItemAdded,
    OutputItemDone,
    OutputMessage,
    OutputRefusal,
    OutputText,
    OutputTextAnnotationAdded,
    OutputTextDelta,
    OutputTextDone,
    ReasoningItem,
    ReasoningSummaryPartAdded,
    ReasoningSummaryPartDone,
    ReasoningSummaryTextDelta,
    ReasoningSummaryTextDone,
    RefusalDelta,
    RefusalDone,
    ResponsesEvent,
    SummaryText,
)
from ._open_items import Call, Code, Message, Reasoning

__all__ = ["Call", "Code", "Message", "OutputItems", "Reasoning"]

_ENCODE = msgspec.json.Encoder().encode
_CONTAINER = "gemini"
"""The ``container_id`` of a code execution (Gemini runs it in a sandbox with no id)."""


class OutputItems:
    """Opens and closes the output items of one response, numbering its events."""

    __slots__ = (
        "_done",
        "_id_factory",
        "_namespaced",
        "_next_index",
        "_seq",
        "carrier",
        "citations",
        "code",
        "content",
        "message",
        "reasoning",
    )

    def __init__(
        self,
        id_factory: Callable[[], str],
        namespaced: Mapping[str, tuple[str, str]] | None = None,
        citations: Callable[[], list[dict[str, Any]]] = list,
    ) -> None:
        self._id_factory = id_factory
        self.citations = citations  # the annotations known so far, as chat's
        self._namespaced = namespaced or {}
        self._seq = 0
        self._next_index = 0
        self._done: dict[int, OutputItem] = {}  # finished items by output index
        self.message: Message | None = None
        self.reasoning: Reasoning | None = None  # the open run of thoughts
        self.carrier: Reasoning | None = None  # the signatures' item, closed at the end
        self.code: Code | None = None
        self.content = ContentMap()  # candidate 0's content, for annotations' offsets

    def next_number(self) -> int:
        seq = self._seq
        self._seq = seq + 1
        return seq

    def mint(self, prefix: str) -> str:
        return f"{prefix}_{self._id_factory()}"

    def more_text(self, text: str) -> OutputTextDelta | None:
        """More text of the open message, as its delta; ``None`` if no text part is open
        (the common event, kept short: :meth:`text` does the rest)."""
        message = self.message
        if message is None or message.text_index is None:
            return None
        content = self.content
        if content.plain:  # ContentMap.add inlined for the most common case
            pending = content.pending
            pending.append(text)
            if len(pending) >= 64:
                content.size()
        else:
            content.add(text, TEXT)
        message.pieces.append(text)
        seq = self._seq
        self._seq = seq + 1
        return OutputTextDelta(
            sequence_number=seq,
            item_id=message.id,
            output_index=message.index,
            content_index=message.text_index,
            delta=text,
            logprobs=[],
        )

    def detach(self) -> list[Reasoning | Message | Code]:
        """The open items (the carrier, a reasoning run, the message, the code execution),
        to close in output order; no longer open (but the code, closed with its result)."""
        run = self.reasoning if self.reasoning is not self.carrier else None
        items = [self.carrier, run, self.message, self.code]
        self.reasoning = self.message = None
        return [item for item in items if item is not None]

    def output(self) -> list[OutputItem]:
        """The finished items, in output order: the response's ``output``."""
        return [self._done[index] for index in sorted(self._done)]

    def open_index(self, out: list[ResponsesEvent]) -> int:
        """The index of a new item, which ends the runs of text and of thoughts."""
        message, reasoning = self.message, self.reasoning
        if message is not None:
            self.message = None
            self.close_message(out, message, "completed", None, self.citations())
        if reasoning is not None:
            self.reasoning = None
            if reasoning is not self.carrier:
                self.close_reasoning(out, reasoning, None)
        index = self._next_index
        self._next_index = index + 1
        return index

    def open_message(self, out: list[ResponsesEvent]) -> Message:
        index = self.open_index(out)
        message = self.message = Message(self.mint("msg"), index, self.content.length)
        item = OutputMessage(id=message.id, status="in_progress", content=[])
        out.append(
            OutputItemAdded(
                sequence_number=self.next_number(), output_index=message.index, item=item
            )
        )
        return message

    def text(self, out: list[ResponsesEvent], text: str) -> None:
        message = self.message or self.open_message(out)
        if message.text_index is None:
            message.text_index = 0
            out.append(
                ContentPartAdded(
                    sequence_number=self.next_number(),
                    item_id=message.id,
                    output_index=message.index,
                    content_index=0,
                    part=OutputText(text="", annotations=[], logprobs=[]),
                )
            )
        self.content.add(text, TEXT)
        message.pieces.append(text)
        out.append(
            OutputTextDelta(
                sequence_number=self.next_number(),
                item_id=message.id,
                output_index=message.index,
                content_index=0,
                delta=text,
                logprobs=[],
            )
        )

    def thought(self, out: list[ResponsesEvent], text: str) -> None:
        reasoning = self.reasoning or self.open_reasoning(out)
        if reasoning.pieces is None:
            reasoning.pieces = []
            out.append(
                ReasoningSummaryPartAdded(
                    sequence_number=self.next_number(),
                    item_id=reasoning.id,
                    output_index=reasoning.index,
                    summary_index=0,
                    part=SummaryText(text=""),
                )
            )
        self.content.add(text, THOUGHT)
        reasoning.pieces.append(text)
        out.append(
            ReasoningSummaryTextDelta(
                sequence_number=self.next_number(),
                item_id=reasoning.id,
                output_index=reasoning.index,
                summary_index=0,
                delta=text,
            )
        )

    def open_reasoning(self, out: list[ResponsesEvent], *, carrier: bool = False) -> Reasoning:
        reasoning = self.reasoning = Reasoning(self.mint("rs"), self.open_index(out))
        if carrier:
            self.carrier = reasoning
        item = ReasoningItem(id=reasoning.id, summary=[])
        out.append(
            OutputItemAdded(
                sequence_number=self.next_number(), output_index=reasoning.index, item=item
            )
        )
        return reasoning

    def data_part(self, out: list[ResponsesEvent], part: Part) -> None:
        """Code → a ``code_interpreter_call``, an image → an ``image_generation_call``,
        anything else → an entry of the message's ``extra_content.google.parts``."""
        self.content.add("", OTHER)
        thought = part.thought is True
        if part.executable_code is not None and not thought:
            self.close_code(out, None)
            code = part.executable_code.get("code")
            self.code = Code(
                self.mint("ci"),
                self.open_index(out),
                code if type(code) is str else None,
                part_entry(part, 0),
            )
            out.append(
                OutputItemAdded(
                    sequence_number=self.next_number(),
                    output_index=self.code.index,
                    item=self._code_item("in_progress"),
                )
            )
            return
        if part.code_execution_result is not None and not thought:
            if self.code is None:  # a result without its code
                index = self.open_index(out)
                self.code = Code(self.mint("ci"), index, None, part_entry(part, 0))
                out.append(
                    OutputItemAdded(
                        sequence_number=self.next_number(),
                        output_index=self.code.index,
                        item=self._code_item("in_progress"),
                    )
                )
            else:
                self.code.parts.append(part_entry(part, len(self.code.parts)))
            self.close_code(out, part.code_execution_result)
            return
        inline = part.inline_data
        if inline is not None and not thought:
            mime, data = inline.get("mimeType"), inline.get("data")
            if type(mime) is str and type(data) is str and mime.startswith("image/"):
                self._image(out, data, part)
                return
        message = self.message or self.open_message(out)
        message.parts.append(part_entry(part, len(message.parts)))

    def _code_item(
        self, status: Any, outputs: list[dict[str, Any]] | None = None
    ) -> CodeInterpreterCall:
        code = self.code
        assert code is not None
        return CodeInterpreterCall(
            id=code.id,
            status=status,
            container_id=_CONTAINER,
            code=code.code,
            outputs=outputs,
            extra_content={"google": {"parts": code.parts}} if outputs is not None else None,
        )

    def close_code(self, out: list[ResponsesEvent], result: dict[str, Any] | None) -> None:
        """Finish the open code execution with its ``result`` (``None``: it got none)."""
        code = self.code
        if code is None:
            return
        outputs: list[dict[str, Any]] = []
        status = "completed"
        if result is not None:
            logs = result.get("output")
            outputs.append({"type": "logs", "logs": logs if type(logs) is str else ""})
            if result.get("outcome") not in (None, "OUTCOME_OK", "OUTCOME_UNSPECIFIED"):
                status = "failed"
        item = self._code_item(status, outputs)
        self.code = None
        self._item_done(out, code.index, item)

    def _image(self, out: list[ResponsesEvent], data: str, part: Part) -> None:
        index = self.open_index(out)
        item_id = self.mint("ig")
        added = ImageGenerationCall(id=item_id, status="generating")
        out.append(
            OutputItemAdded(sequence_number=self.next_number(), output_index=index, item=added)
        )
        entry = part_entry(without_data(part), 0)
        done = ImageGenerationCall(
            id=item_id,
            status="completed",
            result=data,
            extra_content={"google": {"parts": [entry]}},
        )
        self._item_done(out, index, done)

    def _item_done(self, out: list[ResponsesEvent], index: int, item: OutputItem) -> None:
        self._done[index] = item
        out.append(
            OutputItemDone(sequence_number=self.next_number(), output_index=index, item=item)
        )

    def function_call(self, call: Call, name: str, arguments: str, status: Any) -> FunctionCallItem:
        """The ``function_call`` item of ``call``: a namespaced function (Gemini's
        ``namespace.name``) named as the request named it."""
        namespaced = self._namespaced.get(name)
        if namespaced is not None:
            namespace, name = namespaced
            return FunctionCallItem(
                id=call.id,
                call_id=call.call_id,
                name=name,
                arguments=arguments,
                status=status,
                namespace=namespace,
            )
        return FunctionCallItem(
            id=call.id, call_id=call.call_id, name=name, arguments=arguments, status=status
        )

    def close_call(
        self,
        out: list[ResponsesEvent],
        call: Call,
        tool_call: ToolCall | None,
        streamed: str | None = None,
    ) -> None:
        """Close a call: its arguments' delta (unless they were ``streamed``, as this
        string), their ``done`` and the item; the ``done`` string is the deltas' whole."""
        if tool_call is not None and tool_call.arguments is not None:
            arguments = tool_call.arguments
        elif streamed is not None:
            arguments = streamed
        else:
            arguments = _ENCODE(tool_call.args).decode() if tool_call is not None else "{}"
        name = tool_call.name if tool_call is not None and tool_call.name else call.name
        seq = self.next_number
        if streamed is None:
            out.append(
                FunctionCallArgumentsDelta(
                    sequence_number=seq(), item_id=call.id, output_index=call.index, delta=arguments
                )
            )
        out.append(
            FunctionCallArgumentsDone(
                sequence_number=seq(), item_id=call.id, output_index=call.index, arguments=arguments
            )
        )
        item = self.function_call(call, name, arguments, "completed")
        self._item_done(out, call.index, item)

    def close_reasoning(
        self, out: list[ResponsesEvent], reasoning: Reasoning, encrypted: str | None
    ) -> None:
        summary: list[SummaryText] = []
        if reasoning.pieces is not None:
            text = "".join(reasoning.pieces)
            part = SummaryText(text=text)
            common: dict[str, Any] = {
                "item_id": reasoning.id,
                "output_index": reasoning.index,
                "summary_index": 0,
            }
            out.append(
                ReasoningSummaryTextDone(sequence_number=self.next_number(), text=text, **common)
            )
            out.append(
                ReasoningSummaryPartDone(sequence_number=self.next_number(), part=part, **common)
            )
            summary.append(part)
        item = ReasoningItem(id=reasoning.id, summary=summary, encrypted_content=encrypted)
        self._item_done(out, reasoning.index, item)

    def close_message(
        self,
        out: list[ResponsesEvent],
        message: Message,
        status: Any,
        refusal: str | None,
        citations: list[dict[str, Any]],
    ) -> None:
        """Close the message: its text's annotations (chat's ``citations``, made flat)
        and ``done`` events, its refusal part, then the item."""
        content: list[ContentPart] = []
        common: dict[str, Any] = {"item_id": message.id, "output_index": message.index}
        if message.text_index is not None:
            text = "".join(message.pieces)
            annotations = flat_citations(citations, message.start, message.start + len(text))
            for number, annotation in enumerate(annotations):
                out.append(
                    OutputTextAnnotationAdded(
                        sequence_number=self.next_number(),
                        content_index=0,
                        annotation_index=number,
                        annotation=annotation,
                        **common,
                    )
                )
            logprobs = message.logprobs
            out.append(
                OutputTextDone(
                    sequence_number=self.next_number(),
                    content_index=0,
                    text=text,
                    logprobs=logprobs,
                    **common,
                )
            )
            part = OutputText(text=text, annotations=annotations, logprobs=logprobs)
            out.append(
                ContentPartDone(
                    sequence_number=self.next_number(), content_index=0, part=part, **common
                )
            )
            content.append(part)
        if refusal is not None:
            index = len(content)
            out.append(
                ContentPartAdded(
                    sequence_number=self.next_number(),
                    content_index=index,
                    part=OutputRefusal(refusal=""),
                    **common,
                )
            )
            out.append(
                RefusalDelta(
                    sequence_number=self.next_number(), content_index=index, delta=refusal, **common
                )
            )
            out.append(
                RefusalDone(
                    sequence_number=self.next_number(),
                    content_index=index,
                    refusal=refusal,
                    **common,
                )
            )
            done = OutputRefusal(refusal=refusal)
            out.append(
                ContentPartDone(
                    sequence_number=self.next_number(), content_index=index, part=done, **common
                )
            )
            content.append(done)
        item = OutputMessage(
            id=message.id,
            status=status,
            content=content,
            extra_content={"google": {"parts": message.parts}} if message.parts else None,
        )
        self._item_done(out, message.index, item)
