"""JSON paths of Vertex streamed arguments (``partialArgs[].jsonPath``).

:func:`parse_json_path` splits an RFC 9535 normalized path into keys;
:func:`assign_path` writes one value at such a path into a copy of an
arguments object (copying only the containers along the path, so objects that
were already handed out never change).
"""

from __future__ import annotations

import re
from typing import Any

from .._errors import MalformedStreamError

__all__ = ["MAX_ARRAY_GAP", "MAX_PATH_DEPTH", "PathKey", "assign_path", "parse_json_path"]

MAX_PATH_DEPTH = 100
"""Deeper ``partialArgs`` paths are malformed (real arguments are a few levels deep)."""
MAX_ARRAY_GAP = 1000
"""A ``partialArgs`` array index may skip at most this many elements ahead."""

PathKey = str | int

_SEGMENT = re.compile(
    r"""\.(?P<name>[^.\[\]]+)"""
    r"""|\[(?P<index>\d+)\]"""
    r"""|\[(?P<q>['"])(?P<quoted>(?:\\.|(?!(?P=q)).)*)(?P=q)\]""",
    re.DOTALL,
)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}(?:\\u[0-9a-fA-F]{4})?|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape(match: re.Match[str]) -> str:
    """One RFC 9535 escape in a quoted name: ``\\n``, ``\\'``, ``\\u00e9``, surrogate pairs."""
    escape = match.group(1)
    if escape[0] == "u" and len(escape) > 1:
        units = [int(unit, 16) for unit in escape[1:].split("\\u")]
        if len(units) == 2 and 0xD800 <= units[0] < 0xDC00 and 0xDC00 <= units[1] < 0xE000:
            return chr(0x10000 + ((units[0] - 0xD800) << 10) + (units[1] - 0xDC00))
        return "".join(chr(unit) for unit in units)
    return _SIMPLE_ESCAPES.get(escape, escape)


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
            keys.append(_ESCAPE.sub(_unescape, match.group("quoted")))
        pos = match.end()
    return tuple(keys)


def assign_path(container: Any, keys: tuple[PathKey, ...], is_string: bool, value: Any) -> Any:
    """A copy of ``container`` with ``value`` set (or string-appended) at ``keys``."""
    if not keys:
        if is_string and isinstance(container, str):
            return container + value
        return value
    key, rest = keys[0], keys[1:]
    if isinstance(key, int):
        items: list[Any] = list(container) if isinstance(container, list) else []
        if len(items) <= key:
            if key - len(items) > MAX_ARRAY_GAP:
                raise MalformedStreamError(
                    f"partialArgs index {key} is far beyond the {len(items)} elements so far"
                )
            items.extend([None] * (key + 1 - len(items)))
        items[key] = assign_path(items[key], rest, is_string, value)
        return items
    fields: dict[str, Any] = dict(container) if isinstance(container, dict) else {}
    fields[key] = assign_path(fields.get(key), rest, is_string, value)
    return fields
