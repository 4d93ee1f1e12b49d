"""Sans-IO per-slot argument tracking: latest args win, streamed args are assembled.

:class:`ArgsTable` keeps, for every tool-call slot, its name, Gemini id, latest
arguments and latest non-empty ``thoughtSignature``. A complete ``functionCall``
replaces the arguments; a Vertex ``partialArgs`` piece sets one JSON path (string
fragments of one path concatenate; numbers, booleans and nulls arrive whole). A
part that changes nothing (an identical replay) produces nothing.

Updates never mutate arguments that were already handed out: assembling a path
copies only the containers along that path, so every :class:`SlotUpdate` is a
stable snapshot.
"""

from __future__ import annotations

from typing import Any

from .._errors import MalformedStreamError, snippet
from ..gemini import PartialArg
from ._items import Batch, CallPart, SlotUpdate
from ._json_growth import same_args
from ._json_path import MAX_PATH_DEPTH, PathKey, assign_path, parse_json_path

__all__ = ["ArgsTable"]


def _value_of(piece: PartialArg) -> tuple[bool, Any]:
    """``(is_string, value)`` of a partial argument."""
    if piece.string_value is not None:
        return True, piece.string_value
    if piece.number_value is not None:
        return False, piece.number_value
    if piece.bool_value is not None:
        return False, piece.bool_value
    return False, None  # nullValue, or no value at all


class _Slot:
    __slots__ = ("args", "args_json", "fragments", "id", "name", "pending", "signature")

    def __init__(self, name: str, id: str | None) -> None:
        self.name = name
        self.id = id
        self.args: dict[str, Any] = {}
        self.args_json: tuple[Any, bytes] | None = None  # cache of the args' encoding
        self.signature: str | None = None
        # The string fragments of the path being streamed now, joined only when that
        # string is complete: appending each fragment to a snapshot would copy the
        # string once per fragment (quadratic in its length).
        self.pending: str | None = None
        self.fragments: list[str] = []


class ArgsTable:
    """Keeps the latest state of every slot; ``feed(batch)`` swaps ``CallPart`` for ``SlotUpdate``.

    Other items pass through unchanged and in order. The string fragments of a
    streamed argument (``partialArgs`` with ``willContinue``) are collected and
    joined when that string is complete (its last fragment, another path, the end
    of the call), so a slot changes, and a :class:`SlotUpdate` is emitted, once per
    complete value rather than once per fragment. :meth:`close` joins whatever is
    still open when the stream ends.
    """

    __slots__ = ("_error", "_paths", "_slots")

    def __init__(self) -> None:
        self._error: MalformedStreamError | None = None
        self._slots: dict[tuple[int, int], _Slot] = {}
        self._paths: dict[str, tuple[PathKey, ...]] = {}

    def feed(self, batch: Batch) -> Batch:
        for item in batch:
            if type(item) is CallPart:
                break
        else:
            return batch  # nothing to change: the batch passes as it is
        out: Batch = []
        for item in batch:
            if type(item) is CallPart:
                update = self._update(item)
                if update is not None:
                    out.append(update)
            else:
                out.append(item)
        return out

    @property
    def error(self) -> MalformedStreamError | None:
        """A string that could not be written at the end, after the others were returned."""
        return self._error

    def close(self, error: Exception | None = None) -> Batch:
        """The end of the stream, or an error: updates for the strings still open.

        A string that cannot be written (an array index far beyond the array) is
        :class:`MalformedStreamError`, kept in :attr:`error` when other updates are
        returned; with ``error`` given it is left out, and nothing is raised.
        """
        if self._error is not None:
            if error is None:
                raise self._error
            return []
        out: Batch = []
        failure: MalformedStreamError | None = None
        for (candidate, number), slot in self._slots.items():
            if slot.pending is None:
                continue
            try:
                joined = self._join(slot)
            except MalformedStreamError as exc:
                failure = failure or exc
                continue
            if joined:
                out.append(
                    SlotUpdate(candidate, number, slot.name, slot.id, slot.args, slot.signature)
                )
        if failure is not None and error is None:
            if not out:
                raise failure
            self._error = failure
        return out

    def _update(self, part: CallPart) -> SlotUpdate | None:
        call = part.call
        key = (part.candidate, part.slot)
        slot = self._slots.get(key)
        changed = slot is None
        if slot is None:
            slot = self._slots[key] = _Slot(call.name or "", call.id)
        if call.name and not slot.name:
            slot.name, changed = call.name, True
        if call.id is not None and slot.id is None:
            slot.id, changed = call.id, True
        if call.partial_args:
            for piece in call.partial_args:
                changed = self._piece(slot, piece) or changed
        elif call.args is not None:
            if slot.pending is not None:
                self._join(slot)
            try:
                same = part.replay or same_args(slot, call.args)
            except RecursionError:
                raise MalformedStreamError(
                    "functionCall args nested too deeply to compare"
                ) from None
            if not same:
                slot.args, changed = call.args, True
        elif slot.pending is not None and not call.will_continue:
            changed = self._join(slot) or changed  # the end of a streamed call
        if part.signature and part.signature != slot.signature:
            slot.signature, changed = part.signature, True
        if not changed:
            return None
        return SlotUpdate(part.candidate, part.slot, slot.name, slot.id, slot.args, slot.signature)

    def _piece(self, slot: _Slot, piece: PartialArg) -> bool:
        """Apply one partial argument; whether the arguments changed."""
        path = piece.json_path
        changed = False
        if slot.pending is not None and slot.pending != path:
            changed = self._join(slot)
        is_string, value = _value_of(piece)
        if is_string:
            if slot.pending is None:
                self._path(path)  # a bad path is reported with its own event, not at the join
                slot.pending = path
            slot.fragments.append(value)
            if piece.will_continue:
                return changed
            return self._join(slot) or changed
        slot.args = assign_path(slot.args, self._path(path), False, value)
        return True

    def _join(self, slot: _Slot) -> bool:
        """Write the collected fragments of the open string; whether anything changed."""
        path = slot.pending
        assert path is not None
        text = "".join(slot.fragments)
        slot.pending = None
        slot.fragments = []
        if not text and self._has_string(slot.args, path):
            return False  # an empty closing fragment of a string that is already there
        slot.args = assign_path(slot.args, self._path(path), True, text)
        return True

    def _path(self, path: str) -> tuple[PathKey, ...]:
        keys = self._paths.get(path)
        if keys is None:
            try:
                keys = parse_json_path(path)
            except ValueError as exc:
                raise MalformedStreamError(str(exc), snippet=repr(path)) from None
            if not keys:
                raise MalformedStreamError(
                    "partialArgs must address a field inside the arguments object",
                    snippet=repr(path),
                )
            if len(keys) > MAX_PATH_DEPTH:
                raise MalformedStreamError(
                    f"partialArgs JSON path deeper than {MAX_PATH_DEPTH} levels",
                    snippet=snippet(path),
                )
            self._paths[path] = keys
        return keys

    def _has_string(self, args: dict[str, Any], path: str) -> bool:
        node: Any = args
        for key in self._path(path):
            if isinstance(key, int):
                if not isinstance(node, list) or key >= len(node):
                    return False
            elif not isinstance(node, dict) or key not in node:
                return False
            node = node[key]
        return isinstance(node, str)
