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
  replay updates it, never opens a second call).
- Vertex streamed arguments: ``{name, willContinue: true}`` opens a new call;
  following ``partialArgs`` parts and bare ``{willContinue: true}`` parts belong to
  the call currently streaming; it is complete at the terminal empty
  ``functionCall: {}``, at a piece without ``willContinue``, at the next named call,
  or at the end of the stream. A streamed call is never joined by later parts.

The rule for a complete call without an id is the *slot policy*:

- :class:`LatestArgsPolicy` (``"latest"``, the default): two parts of one event are
  always different calls; a call in a later event joins the most recently opened
  slot of the same candidate and name whose args are identical, ``{}``/absent, or
  grown by the new args (same keys or more, strings extended, nested objects and
  arrays extended). Otherwise it opens a new call.
- :class:`PositionalPolicy` (``"positional"``): a later part joins the slot with the
  same ``(part_index, name, thoughtSignature)``. Simple and what several proxies
  do, but it merges parallel same-tool calls that Gemini sends one per event
  (the later call overwrites the earlier one, which is lost).
- :class:`EveryPartPolicy` (``"every_part"``): every part is a new call. Never
  merges distinct calls, but a re-sent call becomes a duplicate call.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from ._errors import MalformedStreamError
from ._items import Batch, Blocked, CallPart, Finish, Meta, Text, Usage
from ._wire import FunctionCall, GenerateContentResponse

__all__ = [
    "EveryPartPolicy",
    "LatestArgsPolicy",
    "PositionalPolicy",
    "SlotInfo",
    "SlotPolicy",
    "SlotPolicyName",
    "SlotTable",
    "grows",
    "resolve_policy",
]

SlotPolicyName: TypeAlias = Literal["latest", "positional", "every_part"]

_ENCODE = msgspec.json.Encoder().encode

MAX_CANDIDATES = 1024
"""Candidate indexes must be below this (Gemini allows at most 8 candidates)."""


def grows(old: Any, new: Any) -> bool:
    """Whether ``new`` is ``old`` or a growth of it.

    Objects keep all their keys (and may add some), arrays keep their length (and
    may get longer), strings may be extended at the end, and every kept value grows
    recursively. Scalars must be equal and of the same type (``1`` is not ``True``).
    """
    if type(old) is not type(new):
        return False
    if old == new and (
        not isinstance(old, dict | list) or _ENCODE(old) == _ENCODE(new)
    ):  # equal, and of equal types all the way down: decided in C, without a walk
        return True
    return _grows_walk(old, new)


def _grows_walk(old: Any, new: Any) -> bool:
    """:func:`grows` for two values of the same type, by walking them."""
    pairs: Iterator[tuple[Any, Any]]
    if isinstance(old, dict):
        if not old.keys() <= new.keys():
            return False
        pairs = zip(old.values(), map(new.__getitem__, old), strict=True)
    elif isinstance(old, list):
        if len(new) < len(old):
            return False
        pairs = zip(old, new, strict=False)
    elif isinstance(old, str):
        return bool(new.startswith(old))
    else:
        return bool(old == new)
    # Each kept value: the common JSON scalars are decided inline (no call, and no
    # extra stack frame per nesting level).
    for value, after in pairs:
        if value is after:
            continue
        kind = type(value)
        if kind is not type(after):
            return False
        if kind is str:
            if not after.startswith(value):
                return False
        elif kind is int or kind is float or kind is bool or value is None:
            if value != after:
                return False
        elif isinstance(value, dict | list):
            # what grows() does, inlined: one stack frame per nesting level
            if not (value == after and _ENCODE(value) == _ENCODE(after)) and not _grows_walk(
                value, after
            ):
                return False
        elif value != after:
            return False
    return True


class _HasArgs(Protocol):
    args: Any
    args_json: tuple[Any, bytes] | None


def _encoded_args(holder: _HasArgs) -> bytes:
    """The holder's args as JSON, encoded once per args object (a re-sent 1 MB object is
    compared with the one before it on every event)."""
    old = holder.args
    cache = holder.args_json
    if cache is None or cache[0] is not old:
        cache = holder.args_json = (old, _ENCODE(old))
    return cache[1]


def same_args(holder: _HasArgs, new: Any) -> bool:
    """Whether ``new`` is exactly the holder's args: equal, with equal types all the way
    down (what :func:`grows` decides for two equal values), mostly in C."""
    old = holder.args
    if old != new:
        return False
    return _encoded_args(holder) == _ENCODE(new) or grows(old, new)


def grows_from(holder: _HasArgs, new: Any) -> bool:
    """``grows(holder.args, new)``, with the holder's args encoded at most once.

    When ``new`` is a replay, its encoding is kept too: the slot's args are replaced
    by ``new`` next (see ``SlotTable``), and the next replay is compared with it.
    """
    old = holder.args
    if old != new:  # (then grows() would compare them again before its walk)
        return type(old) is type(new) and _grows_walk(old, new)
    encoded = _ENCODE(new)
    if _encoded_args(holder) == encoded:
        holder.args_json = (new, encoded)
        return True
    return grows(old, new)


class SlotInfo:
    """What the table knows about one slot; policies read it, the table writes it."""

    __slots__ = (
        "args",
        "args_json",
        "complete",
        "id",
        "index",
        "last_event",
        "name",
        "part_index",
        "signature",
        "streamed",
    )

    def __init__(
        self,
        index: int,
        *,
        name: str | None,
        id: str | None,
        args: dict[str, Any] | None,
        signature: str | None,
        part_index: int,
        event: int,
        streamed: bool,
    ) -> None:
        self.index = index
        self.name = name
        self.id = id
        self.args = args
        self.args_json: tuple[Any, bytes] | None = None  # cache of _encoded_args()
        self.signature = signature  # the signature seen when the slot opened
        self.part_index = part_index
        self.last_event = event
        self.streamed = streamed
        self.complete = False

    def __repr__(self) -> str:
        return (
            f"SlotInfo({self.index}, name={self.name!r}, id={self.id!r}, args={self.args!r}, "
            f"streamed={self.streamed}, complete={self.complete})"
        )


class SlotPolicy(Protocol):
    """Decides whether a complete, id-less call joins an existing slot.

    ``match`` gets the candidate's slots in opening order and returns the slot the
    call joins, or ``None`` to open a new one. Policies hold no state of their own.
    """

    name: str

    def match(
        self,
        slots: Sequence[SlotInfo],
        call: FunctionCall,
        *,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None: ...


class LatestArgsPolicy:
    """The default: identical, placeholder or grown args in a later event join a slot."""

    name = "latest"

    def match(
        self,
        slots: Sequence[SlotInfo],
        call: FunctionCall,
        *,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None:
        args = call.args if call.args is not None else {}
        for slot in reversed(slots):
            if (
                slot.streamed
                or slot.id is not None
                or slot.name != call.name
                or slot.last_event == event
            ):
                continue
            if not slot.args or grows_from(slot, args):
                return slot
        return None


class PositionalPolicy:
    """A later part joins the slot with the same ``(part_index, name, thoughtSignature)``."""

    name = "positional"

    def match(
        self,
        slots: Sequence[SlotInfo],
        call: FunctionCall,
        *,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None:
        for slot in reversed(slots):
            if (
                not slot.streamed
                and slot.id is None
                and slot.last_event != event
                and slot.part_index == part_index
                and slot.name == call.name
                and slot.signature == signature
            ):
                return slot
        return None


class EveryPartPolicy:
    """Every ``functionCall`` part without an id is a new call."""

    name = "every_part"

    def match(
        self,
        slots: Sequence[SlotInfo],
        call: FunctionCall,
        *,
        part_index: int,
        signature: str | None,
        event: int,
    ) -> SlotInfo | None:
        return None


def resolve_policy(policy: SlotPolicy | SlotPolicyName) -> SlotPolicy:
    """Accept a policy object or one of the names ``latest``, ``positional``, ``every_part``."""
    if isinstance(policy, str):
        if policy == "latest":
            return LatestArgsPolicy()
        if policy == "positional":
            return PositionalPolicy()
        if policy == "every_part":
            return EveryPartPolicy()
        raise ValueError(
            f"unknown slot policy {policy!r}; expected 'latest', 'positional' or 'every_part'"
        )
    return policy


class _Candidate:
    __slots__ = ("by_id", "slots", "streaming")

    def __init__(self) -> None:
        self.slots: list[SlotInfo] = []
        self.by_id: dict[str, SlotInfo] = {}
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

    __slots__ = ("_candidates", "_events", "_policy", "_rid", "_version")

    def __init__(self, policy: SlotPolicy | SlotPolicyName = "latest") -> None:
        self._policy = resolve_policy(policy)
        self._candidates: dict[int, _Candidate] = {}
        self._events = 0
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

    def feed(self, response: GenerateContentResponse) -> Batch:
        self._events += 1
        out: Batch = []
        rid, version = response.response_id, response.model_version
        if (rid != self._rid or version != self._version) and (rid or version):
            self._rid, self._version = rid, version
            out.append(Meta(response_id=rid, model_version=version))
        candidates = response.candidates
        if candidates:
            for candidate in candidates:
                index = candidate.index or 0
                if not 0 <= index < MAX_CANDIDATES:
                    raise MalformedStreamError(
                        f"candidate index {index} is outside 0..{MAX_CANDIDATES - 1}",
                        event=self._events,
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
                                out.append(CallPart(index, slot, call, signature))
                            continue
                        text = part.text
                        if text or signature:
                            out.append(Text(index, text or "", part.thought is True, signature))
                if candidate.finish_reason is not None:
                    out.append(Finish(index, candidate.finish_reason, candidate.finish_message))
        else:
            feedback = response.prompt_feedback
            if feedback is not None and feedback.block_reason is not None:
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
                slot = self._open(state, call, part_index, signature, event, streamed=False)
                state.by_id[call.id] = slot
            elif call.args is not None:
                slot.args = call.args
            if call.name is not None and call.will_continue:
                self._end_streaming(state)
                slot.streamed = True
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
        found = self._policy.match(
            state.slots, call, part_index=part_index, signature=signature, event=event
        )
        if found is None:
            return self._open(state, call, part_index, signature, event, streamed=False).index
        if call.args is not None:
            found.args = call.args
        found.last_event = event
        return found.index

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
        return slot

    @staticmethod
    def _end_streaming(state: _Candidate) -> None:
        if state.streaming is not None:
            state.streaming.complete = True
            state.streaming = None
