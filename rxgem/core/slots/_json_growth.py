"""How one tool call's arguments relate to the next sighting: equal, or grown.

Gemini re-sends a call with identical, placeholder (``{}``) or grown arguments;
the slot table (to match a re-sent call to its slot) and the args table (to
swallow a replay) both ask these questions. The answers are decided in C where
possible: a re-sent 1 MB object is compared with the one before it on every
event, so each holder keeps its args' JSON encoding once (``args_json``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

import msgspec

__all__ = ["GROWN", "SAME", "HasArgs", "args_relation", "grows", "grows_from", "same_args"]

_ENCODE = msgspec.json.Encoder().encode

# Above this many bytes of JSON, re-sent args are compared by encoding first: on a
# 1 MB object msgspec's encode is about 1.5 times quicker than ``==`` on the dicts,
# and when the bytes are equal the values are the same, types and all.
_BIG = 4096

SAME = 2
""":func:`args_relation`: the same args, with equal types all the way down."""
GROWN = 1
""":func:`args_relation`: grown args (see :func:`grows`), not the same."""


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


class HasArgs(Protocol):
    """Anything that holds a call's args and a cache of their encoding."""

    args: Any
    args_json: tuple[Any, bytes] | None


def _encoded_args(holder: HasArgs) -> bytes:
    """The holder's args as JSON, encoded once per args object (a re-sent 1 MB object is
    compared with the one before it on every event)."""
    old = holder.args
    cache = holder.args_json
    if cache is None or cache[0] is not old:
        cache = holder.args_json = (old, _ENCODE(old))
    return cache[1]


def _same_bytes(holder: HasArgs, cache: tuple[Any, bytes], new: Any) -> bool:
    """Whether ``new`` encodes exactly as the holder's big args do (then it is kept as
    the holder's encoding: the holder's args become ``new`` next, or stay equal)."""
    if cache[0] is not holder.args:
        return False
    encoded = _ENCODE(new)
    if encoded != cache[1]:
        return False
    holder.args_json = (new, encoded)
    return True


def args_relation(holder: HasArgs, new: Any) -> int:
    """How ``new`` relates to ``holder.args``: :data:`SAME`, :data:`GROWN` or ``0``
    (neither), with the holder's args encoded at most once and each value compared once."""
    cache = holder.args_json
    if cache is not None and len(cache[1]) > _BIG and _same_bytes(holder, cache, new):
        return SAME
    old = holder.args
    if old != new:  # (then grows() would compare them again before its walk)
        return GROWN if type(old) is type(new) and _grows_walk(old, new) else 0
    encoded = _ENCODE(new)
    if _encoded_args(holder) == encoded:
        holder.args_json = (new, encoded)
        return SAME
    return SAME if grows(old, new) else 0  # equal, in another key order (or 1 vs 1.0)


def same_args(holder: HasArgs, new: Any) -> bool:
    """Whether ``new`` is exactly the holder's args: equal, with equal types all the way
    down (what :func:`grows` decides for two equal values), mostly in C."""
    cache = holder.args_json
    if cache is not None and len(cache[1]) > _BIG and _same_bytes(holder, cache, new):
        return True
    old = holder.args
    if old != new:
        return False
    return _encoded_args(holder) == _ENCODE(new) or grows(old, new)


def grows_from(holder: HasArgs, new: Any) -> bool:
    """``grows(holder.args, new)``, with the holder's args encoded at most once.

    When ``new`` is a replay, its encoding is kept too: the slot's args are replaced
    by ``new`` next (see ``SlotTable``), and the next replay is compared with it.
    """
    return args_relation(holder, new) != 0
