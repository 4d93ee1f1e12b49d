"""Sans-IO end-of-stream buffering: text now, tool calls and finishes at the end.

A Gemini ``finishReason`` can arrive mid-stream and more than once (code execution,
2024 Vertex streams put ``STOP`` on every event), so nothing is decided at the first
one. :class:`FinishBuffer` passes text on as it arrives and keeps, per candidate,
the latest state of each tool-call slot, the last finish reason, the latest
text-part signature and the latest :class:`Details`, plus the last usage
snapshot and prompt feedback (which goes to choice 0's finish). When the stream ends it
flushes, per candidate in index order, every slot (:class:`ToolCall`), the text
signature (:class:`TextSignature`) and one :class:`End`; then the :class:`Usage`.

A candidate that showed up (output, or only details such as safety ratings) but
never got a ``finishReason`` (and no prompt block came: a ``promptFeedback``
without ``blockReason`` is no block) makes the stream *truncated*: its calls are
still flushed, it gets no ``End``, and :meth:`FinishBuffer.close` returns them with a
:class:`TruncatedStreamError` in :attr:`FinishBuffer.error` (raised by the next
call; raised at once when there is nothing to flush), unless ``allow_truncated``
is set, in which case it ends with ``End(reason=None)``.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from .._errors import TruncatedStreamError
from .._option_checks import check_announce
from ._items import (
    Batch,
    Blocked,
    CallPart,
    DataPart,
    Details,
    End,
    Feedback,
    Finish,
    SlotUpdate,
    Text,
    TextSignature,
    ToolCall,
    ToolCallHeader,
    Usage,
)

__all__ = ["Announce", "FinishBuffer"]

Announce: TypeAlias = Literal["first", "none"]


class _Candidate:
    __slots__ = (
        "announced",
        "details",
        "finished",
        "message",
        "output",
        "reason",
        "signature",
        "slots",
    )

    def __init__(self) -> None:
        self.slots: dict[int, SlotUpdate] = {}
        self.details: dict[str, Any] | None = None
        self.reason: str | None = None
        self.message: str | None = None
        self.finished = False
        self.output = False  # it showed up: text, a call, data or details (safety ratings)
        self.signature: str | None = None
        self.announced: int | None = None  # the slot announced early, if any


class FinishBuffer:
    """Holds tool calls, finishes and usage until the end of the stream.

    Args:
        announce: ``"first"`` emits a :class:`ToolCallHeader` for each candidate's
            first slot as soon as it opens (so an OpenAI client learns early that a
            call is coming); ``"none"`` emits every call only at the end.
        allow_truncated: end a truncated candidate with ``End(reason=None)``
            instead of reporting :class:`TruncatedStreamError`.
    """

    __slots__ = (
        "_allow_truncated",
        "_announce",
        "_blocked",
        "_candidates",
        "_closed",
        "_error",
        "_feedback",
        "_seen",
        "_usage",
    )

    def __init__(self, *, announce: Announce = "first", allow_truncated: bool = False) -> None:
        check_announce(announce)
        self._announce = announce == "first"
        self._allow_truncated = allow_truncated
        self._candidates: dict[int, _Candidate] = {}
        self._usage: Usage | None = None
        self._blocked: Blocked | None = None
        self._feedback: dict[str, Any] | None = None
        self._seen = False
        self._closed = False
        self._error: TruncatedStreamError | None = None

    @property
    def error(self) -> TruncatedStreamError | None:
        """The truncation found by :meth:`close` after it flushed what was valid."""
        return self._error

    def _candidate(self, index: int) -> _Candidate:
        state = self._candidates.get(index)
        if state is None:
            state = self._candidates[index] = _Candidate()
        return state

    def feed(self, batch: Batch) -> Batch:
        if self._error is not None:
            raise self._error
        out: Batch = []
        self._seen = True
        candidates = self._candidates
        for item in batch:
            if type(item) is Text:  # exact types (narrowed by mypy), most frequent first
                state = candidates.get(item.candidate) or self._candidate(item.candidate)
                state.output = True
                if item.signature:
                    state.signature = item.signature
                if item.text:
                    out.append(item)
            elif type(item) is Usage:
                self._usage = item
            elif type(item) is SlotUpdate:
                state = self._candidate(item.candidate)
                state.output = True
                state.slots[item.slot] = item
                # the first slot, once it has a name (an id'd call may come nameless first)
                if self._announce and state.announced is None and item.slot == 0 and item.name:
                    state.announced = item.slot
                    out.append(
                        ToolCallHeader(
                            item.candidate, item.slot, item.name, item.id, item.signature
                        )
                    )
            elif type(item) is Finish:
                state = self._candidate(item.candidate)
                state.finished = True
                state.reason = item.reason
                state.message = item.message
            elif type(item) is DataPart:
                self._candidate(item.candidate).output = True
                out.append(item)
            elif type(item) is Details:
                state = self._candidate(item.candidate)
                state.output = True  # it showed up: without a finishReason it was cut off
                if state.details is None:
                    state.details = {}
                state.details.update(item.details)
            elif type(item) is Feedback:
                self._feedback = item.feedback
            elif type(item) is Blocked:
                self._blocked = item
            elif type(item) is CallPart:
                raise TypeError(
                    "flush_on_finish() got a CallPart: put latest_args() before it in the pipe"
                )
            else:
                out.append(item)
        return out

    def _flush_calls(self, index: int, state: _Candidate, out: Batch) -> None:
        for slot in sorted(state.slots):
            update = state.slots[slot]
            out.append(
                ToolCall(
                    index,
                    update.slot,
                    update.name,
                    update.id,
                    update.args,
                    update.signature,
                )
            )
        if state.signature:
            out.append(TextSignature(index, state.signature))

    def close(self, error: Exception | None = None) -> Batch:
        """The end of the stream: every slot, one finish per candidate, then usage.

        With ``error`` (the stream failed upstream): only the pending tool calls.
        A truncated stream returns what it flushed and keeps the error in
        :attr:`error` (raised at once when nothing was flushed).
        """
        if self._closed:
            if self._error is not None and error is None:
                raise self._error
            return []
        self._closed = True
        if error is not None:
            out: Batch = []
            for index in sorted(self._candidates):
                self._flush_calls(index, self._candidates[index], out)
            return out
        out, truncation = self._end()
        if truncation is not None:
            if not out:
                raise truncation
            self._error = truncation
        return out

    def _end(self) -> tuple[Batch, TruncatedStreamError | None]:
        """The final items of a stream that ended, and its truncation error if any."""
        out: Batch = []
        truncated: list[int] = []
        blocked = self._blocked
        if not self._candidates and blocked is None and self._allow_truncated:
            self._candidate(0)  # end with a finish, as promised, even with nothing to show
        last = max(self._candidates, default=-1)
        for index in range(last + 1):  # every choice up to the last one opens, so every one ends
            state = self._candidate(index)
            self._flush_calls(index, state, out)
            details = state.details
            if index == 0 and self._feedback is not None:
                details = {**(details or {}), "prompt_feedback": self._feedback}
            if state.finished:
                out.append(
                    End(index, state.reason, bool(state.slots), False, state.message, details)
                )
                if index == 0:
                    blocked = None  # a candidate came after all: its own finish is choice 0's
            elif blocked is not None and index == 0:
                out.append(
                    End(0, blocked.reason, bool(state.slots), True, blocked.message, details)
                )
                blocked = None
            elif state.output and not self._allow_truncated:
                truncated.append(index)
            else:
                out.append(End(index, None, bool(state.slots), details=details))
        if blocked is not None:
            details = {"prompt_feedback": self._feedback} if self._feedback is not None else None
            out.append(End(0, blocked.reason, False, True, blocked.message, details))
        if truncated:
            listed = ", ".join(str(i) for i in truncated)
            return out, TruncatedStreamError(
                f"the Gemini stream ended before candidate {listed} finished (no finishReason)",
                candidates=tuple(truncated),
            )
        if not self._candidates and self._blocked is None and not self._allow_truncated:
            return out, TruncatedStreamError(
                "the Gemini stream ended without any candidate output, finish or prompt block"
                if self._seen
                else "the Gemini stream ended before any response arrived"
            )
        if self._usage is not None:
            out.append(self._usage)
        return out, None
