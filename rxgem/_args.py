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

import re
from typing import Any

from ._errors import MalformedStreamError
from ._items import Batch, CallPart, SlotUpdate
from ._slots import grows
from ._wire import PartialArg

__all__ = ["ArgsTable", "parse_json_path"]

PathKey = str | int

_SEGMENT = re.compile(
    r"""\.(?P<name>[^.\[\]]+)"""
    r"""|\[(?P<index>\d+)\]"""
    r"""|\[(?P<q>['"])(?P<quoted>(?:\\.|(?!(?P=q)).)*)(?P=q)\]""",
    re.DOTALL,
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def parse_json_path(path: str) -> tuple[PathKey, ...]:
    """Split an RFC 9535 normalized path such as ``$.a.b[0]['c.d']`` into keys.

    Raises ``ValueError`` for anything else (wildcards, filters, a missing ``$``).
    """
    if not path.startswith("$"):
        raise ValueError(f"JSON path must start with '$': {path!r}")
    keys: list[PathKey] = []
    pos = 1
    end = len(path)
    while pos < end:
        match = _SEGMENT.match(path, pos)
        if match is None:
            raise ValueError(f"unsupported JSON path {path!r} at offset {pos}")
        if match.group("name") is not None:
            keys.append(match.group("name"))
        elif match.group("index") is not None:
            keys.append(int(match.group("index")))
        else:
            keys.append(_ESCAPE.sub(r"\1", match.group("quoted")))
        pos = match.end()
    return tuple(keys)


def _value_of(piece: PartialArg) -> tuple[bool, Any]:
    """``(is_string, value)`` of a partial argument."""
    if piece.string_value is not None:
        return True, piece.string_value
    if piece.number_value is not None:
        return False, piece.number_value
    if piece.bool_value is not None:
        return False, piece.bool_value
    return False, None  # nullValue, or no value at all


def _assign(container: Any, keys: tuple[PathKey, ...], is_string: bool, value: Any) -> Any:
    """A copy of ``container`` with ``value`` set (or string-appended) at ``keys``."""
    if not keys:
        if is_string and isinstance(container, str):
            return container + value
        return value
    key, rest = keys[0], keys[1:]
    if isinstance(key, int):
        items: list[Any] = list(container) if isinstance(container, list) else []
        if len(items) <= key:
            items.extend([None] * (key + 1 - len(items)))
        items[key] = _assign(items[key], rest, is_string, value)
        return items
    fields: dict[str, Any] = dict(container) if isinstance(container, dict) else {}
    fields[key] = _assign(fields.get(key), rest, is_string, value)
    return fields


class _Slot:
    __slots__ = ("args", "id", "name", "signature")

    def __init__(self, name: str, id: str | None) -> None:
        self.name = name
        self.id = id
        self.args: dict[str, Any] = {}
        self.signature: str | None = None


class ArgsTable:
    """Keeps the latest state of every slot; ``feed(batch)`` swaps ``CallPart`` for ``SlotUpdate``.

    Other items pass through unchanged and in order.
    """

    __slots__ = ("_paths", "_slots")

    def __init__(self) -> None:
        self._slots: dict[tuple[int, int], _Slot] = {}
        self._paths: dict[str, tuple[PathKey, ...]] = {}

    def feed(self, batch: Batch) -> Batch:
        out: Batch = []
        for item in batch:
            if type(item) is CallPart:
                update = self._update(item)
                if update is not None:
                    out.append(update)
            else:
                out.append(item)
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
                is_string, value = _value_of(piece)
                if is_string and not value and self._has_string(slot.args, piece.json_path):
                    continue  # an empty closing fragment of a string that is already there
                slot.args = _assign(slot.args, self._path(piece.json_path), is_string, value)
                changed = True
        elif call.args is not None and not (call.args == slot.args and grows(slot.args, call.args)):
            slot.args, changed = call.args, True
        if part.signature and part.signature != slot.signature:
            slot.signature, changed = part.signature, True
        if not changed:
            return None
        return SlotUpdate(part.candidate, part.slot, slot.name, slot.id, slot.args, slot.signature)

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
