"""Sans-IO slot assignment: which tool call does each ``functionCall`` part belong to?

Gemini has no tool-call index. Parallel calls to one tool arrive one per event, each
at part index 0, with the ``thoughtSignature`` only on the first; one call may be
re-sent with identical, placeholder (``{}``) or grown arguments; Vertex streams a
call's arguments in pieces. :class:`SlotTable` turns each response into a batch of
items and gives every ``functionCall`` part a *slot*: a tool call, numbered 0, 1,
2… per candidate in first-sighting order (the slot number is the OpenAI
``tool_calls[].index``).

Rules common to every policy:

- A part with a ``functionCall.id`` belongs to the slot of that id (a changed
  replay updates it, never opens a second call). An id seen for the first time
  first looks for the same call sent earlier without an id (an id-less slot the
  slot policy matches, as it would match an id-less re-send) and takes it over.
- Vertex streamed arguments: ``{name, willContinue: true}`` opens a new call;
  following ``partialArgs`` parts and bare ``{willContinue: true}`` parts belong to
  the call currently streaming; it is complete at the terminal empty
  ``functionCall: {}``, at a piece without ``willContinue``, at the next named call,
  or at the end of the stream. A streamed call is never joined by later parts.

The rule for a complete call without an id is the *slot policy*
(``_policies``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .._errors import MalformedStreamError
from ..gemini import Candidate, FunctionCall, GenerateContentResponse
from ._items import (
    Batch,
    Blocked,
    CallPart,
    DataPart,
    Details,
    Feedback,
    Finish,
    Logprobs,
    Meta,
    Sources,
    Text,
    Usage,
)
from ._policies import SlotInfo, SlotPolicy, SlotPolicyName, resolve_policy

__all__ = ["MAX_CANDIDATES", "SlotTable"]

MAX_CANDIDATES = 1024
"""Candidate indexes must be below this (Gemini allows at most 8 candidates)."""


# the candidate fields its finish chunk carries: (extension key, attribute)
_DETAILS = (
    ("safety_ratings", "safety_ratings"),
    ("avg_logprobs", "avg_logprobs"),
    ("token_count", "token_count"),
    ("continuation_token", "continuation_token"),
    ("finish_message", "finish_message"),
    ("grounding_attributions", "grounding_attributions"),
)


def _details(candidate: Candidate) -> dict[str, Any]:
    """The values of a candidate that its finish chunk carries (empty: none in this event)."""
    details = {
        key: value for key, name in _DETAILS if (value := getattr(candidate, name)) is not None
    }
    logprobs = candidate.logprobs_result
    if logprobs is not None and "logProbabilitySum" in logprobs:
        details["log_probability_sum"] = logprobs["logProbabilitySum"]
    return details


class _Candidate:
    __slots__ = ("by_id", "idless", "named", "slots", "streaming")

    def __init__(self) -> None:
        self.slots: list[SlotInfo] = []
        self.by_id: dict[str, SlotInfo] = {}
        # the slots a complete call may join, by name (not streamed), and those of them
        # without an id: a call looks at its own tool's slots only
        self.named: dict[str | None, list[SlotInfo]] = {}
        self.idless: dict[str | None, list[SlotInfo]] = {}
        self.streaming: SlotInfo | None = None


class SlotTable:
    """Turns Gemini responses into batches of items, assigning function calls to slots.

    ``feed(response)`` returns the batch for one response: a :class:`Meta` when the
    response id or model changes, then per candidate its :class:`Text` and
    :class:`CallPart` items in part order and a :class:`Finish` if it carries a
    ``finishReason``, then :class:`Blocked` for a prompt block and :class:`Usage`
    for a usage snapshot with token counts. Parts that are neither text nor
    function calls (code execution, inline data) are not turned into items.
    """

    __slots__ = ("_candidates", "_events", "_policy", "_replay", "_rid", "_version")

    def __init__(self, policy: SlotPolicy | SlotPolicyName = "latest") -> None:
        self._policy = resolve_policy(policy)
        self._candidates: dict[int, _Candidate] = {}
        self._events = 0
        self._replay = False  # whether the call just assigned re-sends its slot's args
        # the response id and model version of the last Meta emitted
        self._rid: str | None = None
        self._version: str | None = None

    @property
    def policy(self) -> SlotPolicy:
        return self._policy

    def slots(self, candidate: int = 0) -> list[SlotInfo]:
        """The slots of one candidate, in opening order (for inspection and tests)."""
        state = self._candidates.get(candidate)
        return list(state.slots) if state is not None else []

    error = None
    """Always ``None``: bad input raises at once (one unit of input gives one result)."""

    def close(self, error: Exception | None = None) -> Batch:
        """The end of input: nothing is held back, so nothing to return."""
        return []

    def feed(self, response: GenerateContentResponse) -> Batch:
        self._events += 1
        out: Batch = []
        rid, version = response.response_id, response.model_version
        if (rid != self._rid or version != self._version) and (rid or version):
            self._rid, self._version = rid, version
            out.append(Meta(rid, version, response.create_time, response.model_status))
        candidates = response.candidates
        if candidates:
            for candidate in candidates:
                index = candidate.index or 0
                if index and not 0 < index < MAX_CANDIDATES:
                    raise MalformedStreamError(
                        f"candidate index {index} is outside 0..{MAX_CANDIDATES - 1}",
                        event=self._events,
                    )
                if (
                    candidate.grounding_metadata is not None
                    or candidate.citation_metadata is not None
                    or candidate.url_context_metadata is not None
                ):  # first, so that the text it points at is kept from this event on
                    out.append(
                        Sources(
                            index,
                            candidate.grounding_metadata,
                            candidate.citation_metadata,
                            candidate.url_context_metadata,
                        )
                    )
                content = candidate.content
                parts = content.parts if content is not None else None
                if parts:
                    for part_index, part in enumerate(parts):
                        call = part.function_call
                        signature = part.thought_signature
                        if call is not None:
                            slot = self._assign(index, call, part_index, signature, self._events)
                            if slot is not None:
                                out.append(CallPart(index, slot, call, signature, self._replay))
                                self._replay = False
                            continue
                        text = part.text
                        if text is None and part.is_data:
                            out.append(DataPart(index, part))  # its signature stays on it
                        elif text or signature:
                            out.append(Text(index, text or "", part.thought is True, signature))
                if (
                    candidate.logprobs_result is not None
                    or candidate.safety_ratings is not None
                    or candidate.avg_logprobs is not None
                    or candidate.token_count is not None
                    or candidate.continuation_token is not None
                    or candidate.finish_message is not None
                    or candidate.grounding_attributions is not None
                ):
                    if candidate.logprobs_result is not None:
                        out.append(Logprobs(index, candidate.logprobs_result))
                    details = _details(candidate)
                    if details:
                        out.append(Details(index, details))
                if candidate.finish_reason is not None:
                    out.append(Finish(index, candidate.finish_reason, candidate.finish_message))
        feedback = response.prompt_feedback
        if feedback is not None:
            out.append(Feedback(msgspec.to_builtins(feedback)))
            if not candidates and feedback.block_reason is not None:
                out.append(Blocked(feedback.block_reason, feedback.block_reason_message))
        usage = response.usage_metadata
        if usage is not None and (usage.total_token_count is not None or usage.has_counts):
            out.append(Usage(usage))
        return out

    def _assign(
        self, index: int, call: FunctionCall, part_index: int, signature: str | None, event: int
    ) -> int | None:
        state = self._candidates.get(index)
        if state is None:
            state = self._candidates[index] = _Candidate()
        if call.id is not None:
            slot = state.by_id.get(call.id)
            if (
                call.name is not None
                and state.streaming is not None
                and state.streaming is not slot
            ):
                self._end_streaming(state)  # a named call ends the call streaming now
            if slot is None:
                slot = self._adopt(state, call, part_index, signature, event)
                if slot is None:
                    slot = self._open(state, call, part_index, signature, event, streamed=False)
                state.by_id[call.id] = slot
            elif call.args is not None:
                slot.args = call.args
            if call.name is not None and call.will_continue:
                self._end_streaming(state)
                if not slot.streamed:
                    slot.streamed = True
                    named = state.named.get(slot.name)
                    if named is not None and slot in named:
                        named.remove(slot)  # a streamed call is never joined
                state.streaming = slot
            elif state.streaming is slot and not call.will_continue:
                self._end_streaming(state)
            slot.last_event = event
            return slot.index
        if call.name is None:
            current = state.streaming
            if current is None:
                if call.partial_args or call.will_continue or call.args is not None:
                    raise MalformedStreamError(
                        "a functionCall piece without a name arrived while no streamed call"
                        " was open",
                        event=event,
                        snippet=repr(call),
                    )
                return None  # a stray terminal `functionCall: {}`
            current.last_event = event
            if not call.will_continue:
                self._end_streaming(state)
            return current.index
        self._end_streaming(state)
        if call.will_continue:
            slot = self._open(state, call, part_index, signature, event, streamed=True)
            state.streaming = slot
            return slot.index
        named = state.named.get(call.name)
        found = self._match(named, call, part_index, signature, event) if named else None
        if found is None:
            return self._open(state, call, part_index, signature, event, streamed=False).index
        if call.args is not None:
            # the policy found them the same when it kept their encoding (args_relation)
            cache = found.args_json
            if cache is not None and cache[0] is call.args:
                # keep the slot's own copy (the stages after hold it too): one copy of
                # a re-sent big object stays alive, not two for the collector to walk
                self._replay = True
                found.args_json = (found.args, cache[1])
            else:
                found.args = call.args
        found.last_event = event
        return found.index

    def _adopt(
        self,
        state: _Candidate,
        call: FunctionCall,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None:
        """The id-less call that a call showing its id for the first time re-sends, if any.

        The same call can come without its id first and with it later: the id-less
        slots are matched by the slot policy, as an id-less re-send would be.
        """
        if call.name is None or call.will_continue:
            return None
        idless = state.idless.get(call.name)
        if not idless:
            return None
        found = self._match(idless, call, part_index, signature, event)
        if found is not None:
            found.id = call.id
            idless.remove(found)
            if call.args is not None:
                found.args = call.args
        return found

    def _match(
        self,
        slots: list[SlotInfo],
        call: FunctionCall,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None:
        """The slot the policy picks for a complete call, if any."""
        try:
            return self._policy.match(
                slots, call, part_index=part_index, signature=signature, event=event
            )
        except RecursionError:
            raise MalformedStreamError(
                "functionCall args nested too deeply to compare", event=event
            ) from None

    @staticmethod
    def _open(
        state: _Candidate,
        call: FunctionCall,
        part_index: int,
        signature: str | None,
        event: int,
        *,
        streamed: bool,
    ) -> SlotInfo:
        slot = SlotInfo(
            len(state.slots),
            name=call.name,
            id=call.id,
            args=call.args,
            signature=signature,
            part_index=part_index,
            event=event,
            streamed=streamed,
        )
        state.slots.append(slot)
        if not streamed:
            state.named.setdefault(call.name, []).append(slot)
            if call.id is None:
                state.idless.setdefault(call.name, []).append(slot)
        return slot

    @staticmethod
    def _end_streaming(state: _Candidate) -> None:
        if state.streaming is not None:
            state.streaming.complete = True
            state.streaming = None
