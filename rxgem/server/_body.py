"""A request body's bounds, sans-IO: nesting and value count checked before decoding.

Decoding JSON costs memory per value, not per byte: ``[{},{},…]`` is 3 bytes per
value in the body and about 70 in Python (31 MB of it took 800 MB), and an array
nested 100,000 deep exhausts the recursion of whatever walks it. So the body is
measured first, in passes linear in its size (a count of the structural bytes when
that already proves it small, else its strings blanked and its brackets peeled one
level per pass, at most ``max_depth`` passes, all by ``bytes`` methods in C), and
decoded only within the limits.
"""

from __future__ import annotations

import re
from typing import Any, Final

import msgspec

__all__ = ["BodyError", "check_json_limits", "decode_json_object"]

_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_WHITESPACE: Final = b" \t\r\n"
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")


class BodyError(ValueError):
    """A request body refused before it was used: ``status`` and what was wrong.

    Attributes:
        status: the HTTP status to answer with (400, 413).
        reason: what is wrong, naming the limit and its setting.
    """

    def __init__(self, reason: str, status: int = 400) -> None:
        self.reason = reason
        self.status = status
        super().__init__(reason)


def check_json_limits(data: bytes, *, max_depth: int, max_values: int) -> None:
    """Raise :class:`BodyError` if ``data`` nests deeper than ``max_depth`` arrays and
    objects or holds more than ``max_values`` values (object keys count as values).

    Linear in ``len(data)``; for malformed JSON the counts are an upper bound (the
    decoder then refuses it anyway).
    """
    opens = data.count(b"{") + data.count(b"[")
    if opens <= max_depth and opens + data.count(b",") + data.count(b":") + 1 <= max_values:
        return  # every value is a first element or follows a comma or colon
    # All in C-speed passes: strings (which may hold any byte) become "", blanks go.
    compact = _STRING.sub(b'""', data).translate(None, _WHITESPACE)
    opens = compact.count(b"{") + compact.count(b"[")
    empty = compact.count(b"{}") + compact.count(b"[]")
    values = compact.count(b",") + compact.count(b":") + opens - empty + 1
    if values > max_values:
        raise BodyError(
            f"the request body holds more than {max_values} JSON values"
            " (the server's max_json_values)"
        )
    # Each pass removes the innermost pairs, one level: empty after k passes is depth <= k.
    brackets = compact.translate(None, _NOT_BRACKETS)
    for _ in range(max_depth):
        if not brackets:
            return
        brackets = brackets.replace(b"[]", b"").replace(b"{}", b"")
    if brackets:
        raise BodyError(
            f"the request body nests arrays and objects more than {max_depth} deep"
            " (the server's max_json_depth)"
        )


def decode_json_object(data: bytes, *, max_depth: int, max_values: int) -> dict[str, Any]:
    """The body as a JSON object, within the limits of :func:`check_json_limits`.

    Raises:
        BodyError: over a limit, not JSON, or not an object.
    """
    check_json_limits(data, max_depth=max_depth, max_values=max_values)
    try:
        body = msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise BodyError("the request body is not valid JSON") from None
    except RecursionError:  # a max_json_depth set above what the decoder can nest
        raise BodyError(
            "the request body nests arrays and objects too deep to decode"
            " (lower the server's max_json_depth)"
        ) from None
    if not isinstance(body, dict):
        raise BodyError("the request body must be a JSON object")
    return body
