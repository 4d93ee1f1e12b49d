"""JSON values from a request, walked without recursion: depth checks, copies, comparisons.

A request's JSON (tool-call arguments, tool results, the parts kept in ``extra_content``,
``default`` values in a schema) nests as deep as its sender likes, while ``copy.deepcopy``,
``==``, ``json.loads`` and ``json.dumps`` recurse and end in a bare ``RecursionError`` past
about a thousand levels. These helpers keep their own stack; what nests deeper than
:data:`MAX_JSON_DEPTH` levels is refused with an :class:`~rxgem.InvalidRequestError` whose
``where`` is the path of the first container too deep.

Only ``dict`` and ``list`` are containers here (what ``json.loads`` makes); any other value
is a leaf.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Final, TypeAlias

from ..core import InvalidRequestError

__all__ = [
    "MAX_JSON_DEPTH",
    "JSONObject",
    "at",
    "check_depth",
    "copy_json",
    "fingerprint",
    "json_equal",
    "json_size",
    "loads",
    "quoted",
]

JSONObject: TypeAlias = dict[str, Any]
"""A JSON object as ``json.loads`` makes it: what a request and its parts are."""

MAX_JSON_DEPTH: Final = 128
"""Deepest nesting of objects and arrays a value in a request may have (``{}`` is 1 level)."""

_PLAIN_KEY: Final = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")
_SHOWN_KEY: Final = 48
"""A longer key is cut in a ``where`` path, so a path costs at most this much per step."""

# The parent trail of a node, as a linked list: (key, parent trail) or None at the root.
_Trail = tuple[Any, Any] | None


def at(where: str, key: str | int) -> str:
    """``where`` + one step: ``.key`` for plain keys, ``["odd key"]`` or ``[3]`` otherwise.

    A key longer than 48 characters is cut (``["abc…"]``): a ``where`` only has to point a
    reader at the spot, and a long key repeated on every path below it would cost the product
    of the two.
    """
    if isinstance(key, int):
        return f"{where}[{key}]"
    if len(key) > _SHOWN_KEY:
        return f"{where}[{json.dumps(key[:_SHOWN_KEY] + '…', ensure_ascii=False)}]"
    if _PLAIN_KEY.fullmatch(key):
        return f"{where}.{key}" if where else key
    return f"{where}[{json.dumps(key, ensure_ascii=False)}]"


def quoted(value: object) -> str:
    """A client's value as a message quotes it: ``repr`` of its text, cut at 48 characters.

    Bounded, so an error costs the same whatever the request sent, and the same for
    every value: the client's own text comes back as it was, never compared with
    anything (an answer that differed for a value equal to a secret would confirm it).
    """
    text = value if isinstance(value, str) else str(value)
    return repr(text if len(text) <= _SHOWN_KEY else text[:_SHOWN_KEY] + "…")


def _path(where: str, trail: _Trail) -> str:
    keys: list[Any] = []
    while trail is not None:
        keys.append(trail[0])
        trail = trail[1]
    for key in reversed(keys):
        where = at(where, key if type(key) is int else str(key))
    return where


def _too_deep(where: str, trail: _Trail, limit: int) -> InvalidRequestError:
    return InvalidRequestError(
        f"nested deeper than {limit} levels of objects and arrays", where=_path(where, trail)
    )


def check_depth(value: Any, where: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Refuse ``value`` if it nests deeper than ``limit`` levels (iteratively, in one pass)."""
    stack: list[tuple[Any, int, _Trail]] = [(value, 0, None)]
    while stack:
        node, depth, trail = stack.pop()
        kind = type(node)
        if kind is not dict and kind is not list:
            continue
        if depth >= limit:
            raise _too_deep(where, trail, limit)
        for key, child in node.items() if kind is dict else enumerate(node):
            if type(child) is dict or type(child) is list:
                stack.append((child, depth + 1, (key, trail)))


def loads(text: str, where: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(text)``, refusing a value nested deeper than ``limit`` levels.

    Raises:
        json.JSONDecodeError: ``text`` is not JSON.
        InvalidRequestError: it is, but too deep (even too deep for ``json.loads``).
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise InvalidRequestError(
            f"nested deeper than {limit} levels of objects and arrays", where=where
        ) from None
    check_depth(value, where, limit)
    return value


_IMMUTABLE: Final = frozenset({str, int, float, bool, type(None)})


def copy_json(value: Any, where: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """A deep copy of a JSON value (``copy.deepcopy`` for other leaves), depth-checked."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return value if kind in _IMMUTABLE else copy.deepcopy(value)
    root: Any = {} if kind is dict else []
    stack: list[tuple[Any, Any, int, _Trail]] = [(value, root, 0, None)]
    while stack:
        source, target, depth, trail = stack.pop()
        if depth >= limit:
            raise _too_deep(where, trail, limit)
        is_dict = type(source) is dict
        for key, child in source.items() if is_dict else enumerate(source):
            child_kind = type(child)
            if child_kind is dict or child_kind is list:
                copied: Any = {} if child_kind is dict else []
                stack.append((child, copied, depth + 1, (key, trail)))
            else:
                copied = child if child_kind in _IMMUTABLE else copy.deepcopy(child)
            if is_dict:
                target[key] = copied
            else:
                target.append(copied)
    return root


def json_equal(a: Any, b: Any) -> bool:
    """``a == b`` for JSON values, without recursion (the same answer as ``==``)."""
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        kind = type(x)
        if kind is dict:
            if type(y) is not dict or len(x) != len(y):
                return False
            for key, value in x.items():
                if key not in y:
                    return False
                stack.append((value, y[key]))
        elif kind is list:
            if type(y) is not list or len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif type(y) is dict or type(y) is list or x != y:
            return False
    return True


def fingerprint(value: Any) -> tuple[Any, ...]:
    """A flat, hashable stand-in for a JSON value: two fingerprints are equal exactly when
    the values are ``==`` (objects in any key order); hashing it does not recurse."""
    out: list[Any] = []
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            keys = sorted(node, key=str)
            out.append(("{", len(keys)))  # a tuple: never equal to a JSON leaf
            for key in reversed(keys):
                stack.append(node[key])
                stack.append(key)
        elif kind is list:
            out.append(("[", len(node)))
            stack.extend(reversed(node))
        else:
            out.append(node)
    return tuple(out)


def json_size(value: Any) -> int:
    """About how many characters ``value`` takes as JSON: one per value, key and container,
    plus the length of every string (iteratively, in one pass)."""
    size = 0
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        size += 1
        kind = type(node)
        if kind is str:
            size += len(node)
        elif kind is dict:
            for key, child in node.items():
                size += 1 + len(key) if type(key) is str else 1
                stack.append(child)
        elif kind is list:
            stack.extend(node)
    return size
