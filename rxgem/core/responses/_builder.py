"""Sans-IO Responses output: pipeline items → OpenAI Responses streaming events.

The sibling of :class:`~rxgem.core.ChunkBuilder`, fed the same batches
(what ``flush_on_finish`` emits). The sequence is the one every Responses client
accepts (``response.created`` first; each output item ``added`` before its deltas and
``done`` with the whole item; ``response.completed`` with the full ``output`` and
``usage``), with ``sequence_number`` 0, 1, 2… on every event and one response id:

- a run of text → a ``message`` item (its ``output_text`` part's deltas, its annotations);
- a run of thoughts → a ``reasoning`` item (its summary text's deltas);
- Gemini's thought signatures → the first reasoning item's ``encrypted_content``
  (``encode_signatures``, in ``_reasoning_carrier``) when
  ``include_encrypted_reasoning`` is set, and always in :attr:`ResponsesBuilder.signatures`
  for a server to store; a signature with a place of its own (``_placed``) → a reasoning
  item there, kept in :attr:`ResponsesBuilder.placed`;
- tool calls → ``function_call`` items (the first announced early, as for chat);
- code execution → ``code_interpreter_call`` items, images → ``image_generation_call``
  items, other data parts → the message's ``extra_content.google.parts``.

Items are in the stream's order: a new item ends the open message and reasoning item,
so text after code is a new message after it. Calls, and a code execution still
awaiting its result, close at candidate 0's finish, in output order. With
``include_encrypted_reasoning`` a reasoning item comes first, before any other output
(as OpenAI's reasoning models send it), and closes last, carrying every signature, so
that a client sends it back before the message and calls it signs.

Only candidate 0 is shown: a Responses response has one output. The response's status
comes at :meth:`ResponsesBuilder.close`: ``response.completed``, ``response.incomplete``
(``max_output_tokens``, ``content_filter``) or ``response.failed`` (a blocked prompt;
``close(error)``: the stream failed, after every open item was closed with what it had).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ..chat import created_seconds, map_logprobs, random_id
from ..gemini import UsageMetadata
from ..openai import MetadataMerger, Scrub, unscrubbed, url_citations
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
from ._mapping import (
    blocked_error,
    check_namespaced,
    check_request,
    check_response_id,
    echo,
    error_of,
    google_extra,
    response_usage,
    status_of,
)
from ._models import (
    FunctionCallArgumentsDelta,
    OutputItemAdded,
    OutputTextDelta,
    Response,
    ResponseCompleted,
    ResponseCreated,
    ResponseFailed,
    ResponseIncomplete,
    ResponseInProgress,
    ResponsesEvent,
    ResponseStatus,
)
from ._output_items import Call, Code, Message, OutputItems, Reasoning
from ._placed import is_bare, place, placed_signature
from ._reasoning_carrier import CarriedSignature, SignedKind, encode_signatures

__all__ = ["ResponsesBuilder"]

_OUTPUT = frozenset({Text, Logprobs, DataPart, ToolCallHeader})
"""The items that start output items (the reasoning item, when shown, comes before)."""


class ResponsesBuilder:
    """Builds OpenAI Responses streaming events from batches of pipeline items.

    Args:
        model: the response's ``model``; default: Gemini's ``modelVersion`` (no ``models/``).
        request: the Responses request (or just the fields a response repeats:
            ``tools``, ``tool_choice``, ``parallel_tool_calls``, ``instructions``,
            ``metadata``, ``max_output_tokens``, ``temperature``, ``top_p``,
            ``previous_response_id``, ``text``, ``reasoning``, ``store``,
            ``truncation``); ``None``: OpenAI's defaults (no tools, ``"auto"``, true).
        include_encrypted_reasoning: put Gemini's thought signatures in a reasoning
            item's ``encrypted_content`` (what ``include:
            ["reasoning.encrypted_content"]`` asks for).
        namespaced: the Gemini name of each function of a ``namespace`` tool →
            ``(namespace, name)`` (``ResponsesRequest.namespaced``): its
            ``function_call`` items are named as the request named it.
        response_id: the response's ``id`` on every event; default: ``resp_`` and
            Gemini's ``responseId``, or a minted one.
        id_factory: makes the random part of ``resp_`` (when Gemini sent no
            ``responseId``), ``msg_``, ``rs_``, ``fc_``, ``call_``, ``ci_`` and ``ig_`` ids.
        clock: returns the time in seconds for ``created_at`` (a Vertex ``createTime`` wins).
        scrub: what Gemini said goes through it before a failed response says it.
    """

    __slots__ = (
        "_calls",
        "_citation",
        "_clock",
        "_created",
        "_echo",
        "_end",
        "_grounding",
        "_headers",
        "_id",
        "_id_factory",
        "_include",
        "_items",
        "_meta",
        "_model",
        "_model_status",
        "_pending",
        "_placed",
        "_response",
        "_response_id",
        "_scrub",
        "_signatures",
        "_signed",
        "_streamed",
        "_urls",
        "_usage",
    )

    def __init__(
        self,
        *,
        model: str | None = None,
        request: Mapping[str, Any] | None = None,
        include_encrypted_reasoning: bool = False,
        namespaced: Mapping[str, tuple[str, str]] | None = None,
        response_id: str | None = None,
        id_factory: Callable[[], str] = random_id,
        clock: Callable[[], float] = time.time,
        scrub: Scrub = unscrubbed,
    ) -> None:
        check_request(request)
        check_namespaced(namespaced)
        check_response_id(response_id)
        self._items = OutputItems(id_factory, namespaced, self._citations)
        self._id_factory = id_factory
        self._response_id = response_id
        self._model = model
        self._echo = echo(request)
        self._include = include_encrypted_reasoning
        self._clock = clock
        self._scrub = scrub
        self._meta = Meta()
        self._model_status: Any = None
        self._id: str | None = None
        self._created = 0
        self._headers: dict[int, Call] = {}  # calls announced early, by slot
        self._calls: list[ToolCall] = []  # candidate 0's calls, held for its finish
        self._streamed: dict[str, list[str]] = {}  # arguments sent as they came, by item id
        self._signatures: list[CarriedSignature] = []
        self._signed: set[tuple[str, str | None, str]] = set()
        self._placed: dict[str, list[CarriedSignature]] = {}
        self._grounding: MetadataMerger | None = None
        self._citation: MetadataMerger | None = None
        self._urls: MetadataMerger | None = None
        self._usage: UsageMetadata | None = None
        self._end: End | None = None
        self._pending: End | None = None  # candidate 0's finish, closed at the end of input
        self._response: Response | None = None

    # -- what the server keeps -----------------------------------------------------------

    error = None
    """Always ``None``: bad input raises at once (one unit of input gives one result)."""

    @property
    def signatures(self) -> list[CarriedSignature]:
        """Gemini's thought signatures so far, each with the part it came with.

        Kept whether or not ``include_encrypted_reasoning`` shows them, so that a
        server can store them with the response (``encode_signatures`` makes the
        ``encrypted_content`` of them).
        """
        return list(self._signatures)

    @property
    def placed(self) -> dict[str, list[CarriedSignature]]:
        """The signatures in their place, by the reasoning item that carries them."""
        return dict(self._placed)

    @property
    def response(self) -> Response | None:
        """The final ``response`` (the terminal event's), once :meth:`close` gave it."""
        return self._response

    # -- plumbing ------------------------------------------------------------------------

    def _snapshot(self, status: ResponseStatus, *, final: bool = False, **fields: Any) -> Response:
        """The response now (``final``: with the finished output items, in order)."""
        assert self._id is not None
        assert self._model is not None
        output = self._items.output() if final else []
        return Response(
            id=self._id,
            created_at=self._created,
            model=self._model,
            status=status,
            output=output,
            **self._echo,
            **fields,
        )

    def _start(self, out: list[ResponsesEvent]) -> None:
        meta = self._meta
        rid = meta.response_id
        self._id = self._response_id or f"resp_{rid if rid else self._id_factory()}"
        created = created_seconds(meta.create_time)
        self._created = created if created is not None else int(self._clock())
        if self._model is None:
            self._model = (meta.model_version or "gemini").removeprefix("models/")
        response = self._snapshot("in_progress")
        out.append(ResponseCreated(sequence_number=self._items.next_number(), response=response))
        out.append(ResponseInProgress(sequence_number=self._items.next_number(), response=response))

    def _sign(self, kind: SignedKind, call_id: str | None, signature: str) -> None:
        key = (kind, call_id, signature)
        if key not in self._signed:
            self._signed.add(key)
            self._signatures.append(CarriedSignature(kind, call_id, signature))

    # -- items ---------------------------------------------------------------------------

    def feed(self, batch: Batch) -> list[ResponsesEvent]:
        if len(batch) == 1:
            item = batch[0]
            # the common batch: more text of the open message
            if (
                type(item) is Text
                and item.candidate == 0
                and not item.thought
                and item.signature is None
            ):
                delta = self._items.more_text(item.text)
                if delta is not None:
                    return [delta]
        out: list[ResponsesEvent] = []
        for item in batch:
            if type(item) is Meta:
                if self._id is None:
                    self._meta = item
                if item.model_status is not None:
                    self._model_status = item.model_status
                continue
            if type(item) is Usage:
                self._usage = item.usage
                continue
            if item.candidate != 0:  # type: ignore[union-attr]  # the others have one
                continue  # a response has one output: candidate 0's
            if self._id is None:
                self._start(out)
            if self._include and self._items.carrier is None and type(item) in _OUTPUT:
                # first, as OpenAI's: it carries the signatures
                self._items.open_reasoning(out, carrier=True)
            if type(item) is Text:
                if item.thought:
                    self._items.thought(out, item.text)
                else:
                    self._items.text(out, item.text)
                if item.signature:
                    self._sign("thought" if item.thought else "text", None, item.signature)
            elif type(item) is Logprobs:
                self._logprobs(out, item.result)
            elif type(item) is DataPart:
                signature = placed_signature(item.part)
                if signature is not None:
                    key, carried = place(self._items, out, signature, include=self._include)
                    self._placed[key] = carried
                if signature is None or not is_bare(item.part):
                    self._items.data_part(out, item.part)
            elif type(item) is Sources:
                self._sources(item)
            elif type(item) is ToolCallHeader:
                self._header(out, item)
            elif type(item) is ArgsDelta and item.slot in self._headers:
                call = self._headers[item.slot]  # (never announced: its ToolCall says it all)
                self._streamed.setdefault(call.id, []).append(item.text)
                seq = self._items.next_number()
                out.append(
                    FunctionCallArgumentsDelta(
                        sequence_number=seq,
                        item_id=call.id,
                        output_index=call.index,
                        delta=item.text,
                    )
                )
            elif type(item) is ToolCall:
                self._calls.append(item)
            elif type(item) is TextSignature:
                self._sign("text", None, item.signature)
            elif type(item) is End and self._pending is None:
                # closed in close(): text an operator held past the finish still gets in
                self._pending = item
        return out

    def _logprobs(self, out: list[ResponsesEvent], result: dict[str, Any]) -> None:
        """The tokens of the text just sent: on its delta, else on an empty delta."""
        tokens: list[dict[str, Any]] = map_logprobs(result)["content"]
        message = self._items.message
        last = out[-1] if out else None
        if (
            type(last) is OutputTextDelta
            and message is not None
            and last.item_id == message.id
            and not last.logprobs
        ):
            last.logprobs = tokens
        else:
            self._items.text(out, "")
            delta = out[-1]
            assert type(delta) is OutputTextDelta
            delta.logprobs = tokens
        assert self._items.message is not None
        self._items.message.logprobs += tokens

    def _sources(self, item: Sources) -> None:
        self._items.content.record()  # annotations will need the text
        if item.grounding is not None:
            self._grounding = self._grounding or MetadataMerger()
            self._grounding.add(item.grounding)
        if item.citation is not None:
            self._citation = self._citation or MetadataMerger()
            self._citation.add(item.citation)
        if item.url_context is not None:
            self._urls = self._urls or MetadataMerger()
            self._urls.add(item.url_context)

    def _header(self, out: list[ResponsesEvent], item: ToolCallHeader) -> None:
        call = Call(
            self._items.mint("fc"),
            self._items.open_index(out),
            item.id or self._items.mint("call"),
            item.name,
        )
        self._headers[item.slot] = call
        added = self._items.function_call(call, call.name, "", "in_progress")
        out.append(
            OutputItemAdded(
                sequence_number=self._items.next_number(), output_index=call.index, item=added
            )
        )

    # -- the end -------------------------------------------------------------------------

    def _finish(self, out: list[ResponsesEvent], end: End) -> None:
        """Candidate 0's finish: every open item closes, in output order."""
        if self._end is not None:
            return
        self._end = end
        status, details = status_of(end.reason, blocked=end.blocked)
        filtered = details is not None and details["reason"] == "content_filter"
        refusal = end.message if filtered and end.message else None  # why, where a UI shows it
        self._close_items(out, "incomplete" if status == "incomplete" else "completed", refusal)

    def _close_items(
        self, out: list[ResponsesEvent], status: Any, refusal: str | None = None
    ) -> None:
        """Close every open item in output order, then the calls never announced.

        The calls' signatures are collected first: the reasoning item that carries
        them (opened here if none is open) closes with all of them.
        """
        announced = self._headers
        calls: list[tuple[Call, ToolCall | None]] = []
        fresh: list[tuple[Call, ToolCall]] = []
        for tool_call in self._calls:
            call = announced.pop(tool_call.slot, None)
            if call is not None:
                calls.append((call, tool_call))
            else:
                call = Call(
                    self._items.mint("fc"),
                    -1,
                    tool_call.id or self._items.mint("call"),
                    tool_call.name,
                )
                fresh.append((call, tool_call))
            if tool_call.signature:
                self._sign("call", call.call_id, tool_call.signature)
        calls += [(call, None) for call in announced.values()]
        self._calls, self._headers = [], {}
        if self._include and (self._signatures or fresh) and self._items.carrier is None:
            self._items.open_reasoning(out, carrier=True)
        if refusal is not None and self._items.message is None:
            self._items.open_message(out)
        open_items: list[tuple[int, Any]] = [
            (call.index, pair) for pair in calls for call in pair[:1]
        ]
        open_items += [(item.index, item) for item in self._items.detach()]
        for _, item in sorted(open_items, key=lambda pair: pair[0]):
            if type(item) is Reasoning:
                encrypted = (
                    encode_signatures(self._signatures)
                    if item is self._items.carrier and self._signatures
                    else None
                )
                self._items.close_reasoning(out, item, encrypted)
            elif type(item) is Message:
                self._items.close_message(out, item, status, refusal, self._citations())
            elif type(item) is Code:  # the code execution still waiting for its result
                self._items.close_code(out, None)
            else:
                call, tool_call = item
                pieces = self._streamed.pop(call.id, None)
                self._items.close_call(out, call, tool_call, "".join(pieces) if pieces else None)
        for call, tool_call in fresh:
            call.index = self._items.open_index(out)
            added = self._items.function_call(call, call.name, "", "in_progress")
            out.append(
                OutputItemAdded(
                    sequence_number=self._items.next_number(), output_index=call.index, item=added
                )
            )
            self._items.close_call(out, call, tool_call)

    def _citations(self) -> list[dict[str, Any]]:
        if self._grounding is None and self._citation is None:
            return []
        return url_citations(
            self._items.content,
            self._grounding.value if self._grounding is not None else None,
            self._citation.value if self._citation is not None else None,
        )

    def _google(self) -> dict[str, Any] | None:
        return google_extra(
            self._end, self._model_status, self._grounding, self._citation, self._urls
        )

    def close(self, error: Exception | None = None) -> list[ResponsesEvent]:
        """The end of input: the response's terminal event.

        ``response.completed``, or ``response.incomplete`` (output limit, a safety
        finish), or ``response.failed`` (a blocked prompt). With ``error`` (the stream
        failed): every open item closed with what it had, then ``response.failed``
        with the error and the output so far; ``[]`` if no response was started.
        """
        if self._response is not None or (error is not None and self._id is None):
            return []
        out: list[ResponsesEvent] = []
        if self._id is None:
            self._start(out)
        usage = response_usage(self._usage) if self._usage is not None else None
        if error is not None:
            if self._pending is not None:
                self._finish(out, self._pending)
            elif self._end is None:
                self._close_items(out, "incomplete")
            response = self._snapshot(
                "failed",
                final=True,
                usage=usage,
                error=error_of(error, self._scrub),
                extra_content=self._google(),
            )
            self._response = response
            out.append(ResponseFailed(sequence_number=self._items.next_number(), response=response))
            return out
        end = self._end
        if end is None:
            self._finish(out, self._pending or End(0, None))
            end = self._end
        assert end is not None
        status, details = status_of(end.reason, blocked=end.blocked)
        fields: dict[str, Any] = {"usage": usage, "extra_content": self._google()}
        if end.blocked:
            fields["error"] = blocked_error(end.reason, end.message, self._scrub)
        if details is not None:
            fields["incomplete_details"] = details
        response = self._response = self._snapshot(status, final=True, **fields)
        seq = self._items.next_number()
        if status == "completed":
            out.append(ResponseCompleted(sequence_number=seq, response=response))
        elif status == "incomplete":
            out.append(ResponseIncomplete(sequence_number=seq, response=response))
        else:
            out.append(ResponseFailed(sequence_number=seq, response=response))
        return out
