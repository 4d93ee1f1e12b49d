"""Slot policies: does a complete call without an id join an existing slot?

See :class:`~rxgem.core.SlotTable` for the rules every policy shares; a policy
decides only the case of a complete, id-less call:

- :class:`LatestArgsPolicy` (``"latest"``, the default): two parts of one event are
  always different calls; a call in a later event joins a slot of the same
  candidate and name last seen in an earlier event: the most recent one with
  identical args, else the most recent one whose args are ``{}``/absent or grown
  by the new args (same keys or more, strings extended, nested objects and arrays
  extended). Otherwise it opens a new call.
- :class:`PositionalPolicy` (``"positional"``): a later part joins the slot with the
  same ``(part_index, name, thoughtSignature)``. Simple and what several proxies
  do, but it merges parallel same-tool calls that Gemini sends one per event
  (the later call overwrites the earlier one, which is lost).
- :class:`EveryPartPolicy` (``"every_part"``): every part is a new call. Never
  merges distinct calls, but a re-sent call becomes a duplicate call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..gemini import FunctionCall
from ._json_growth import SAME, args_relation
from ._policy_protocol import SlotPolicy, SlotPolicyName

__all__ = [
    "EveryPartPolicy",
    "LatestArgsPolicy",
    "PositionalPolicy",
    "SlotInfo",
    "SlotPolicy",
    "SlotPolicyName",
    "resolve_policy",
]


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
        "probe",
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
        self.args_json: tuple[Any, bytes] | None = None  # cache of the args' encoding
        self.probe: tuple[Any, str | None, Any] | None = None  # cache of _probe(args)
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


class LatestArgsPolicy:
    """The default: identical, grown or placeholder args in a later event join a slot.

    A slot whose call came with an id is joined only by identical args (the same
    call, re-sent without its id).
    """

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
        latest: SlotInfo | None = None  # the most recent slot that qualifies
        probing = len(slots) > 1
        for slot in reversed(slots):
            if slot.last_event == event:
                continue
            if slot.id is not None:  # a call with an id, re-sent without it: identical args only
                if slot.args == args:
                    return slot
                continue
            old = slot.args
            if not old:
                latest = latest or slot
                continue
            # A cheap necessary condition before the walk: the first argument is kept
            # and grown. Parallel calls to one tool differ there, and are told apart in
            # one lookup each, not one walk each (one slot: the walk decides as quickly).
            if probing and not _may_grow(slot, old, args):
                continue
            relation = args_relation(slot, args)
            if relation == SAME:
                return slot  # identical args: this call, re-sent, not a placeholder's
            if relation:
                latest = latest or slot
        return latest


_MISSING = object()


def _may_grow(slot: SlotInfo, old: Any, args: Any) -> bool:
    """Whether ``args`` keep and grow the first argument of ``old`` (the slot's args),
    when that is a scalar: a necessary condition of :func:`grows`, checked in one lookup."""
    probe = slot.probe
    if probe is None or probe[0] is not old:
        probe = slot.probe = _probe(old)
    key = probe[1]
    if key is None:
        return True
    value = probe[2]
    got = args.get(key, _MISSING)
    if type(got) is not type(value):
        return False
    if type(value) is str:
        return bool(got.startswith(value))
    return bool(got == value)


def _probe(args: Any) -> tuple[Any, str | None, Any]:
    """``(args, key, value)``: the first argument when it is a scalar (``key`` is ``None``
    when there is none), for :class:`LatestArgsPolicy`'s quick rejection."""
    if type(args) is dict:
        for key, value in args.items():
            if value is None or type(value) in _SCALARS:
                return (args, key, value)
            break
    return (args, None, None)


_SCALARS = frozenset({str, int, float, bool})


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
                slot.id is None
                and slot.last_event != event
                and slot.part_index == part_index
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
