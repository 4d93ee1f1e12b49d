"""A request body's bounds and decoding, sans-IO: each byte looked at a bounded number of times.

Decoding JSON costs memory per value, not per byte: ``[{},{},…]`` is 3 bytes per
value in the body and about 70 in Python, and an array nested 100,000 deep exhausts
the recursion of whatever walks it. So the body is measured first and decoded only
within the limits. Both are generators of bounded steps (a slice of the body each,
:data:`SLICE_BYTES`), so the server can let other requests run between them: a
single C call over 32 MB would hold the event loop (and the GIL) for tens of ms.

The measure never backtracks: escape pairs go first (a run of backslashes pairs from
its left, as the decoder reads it), then escaped quotes, after which every quote opens
or closes a string, so the strings can be blanked by splitting at quotes. What stays
is counted (values) and walked once (depth). The decoding goes down the body's
structure with ``msgspec.Raw`` until what is left fits a slice; a long string is
decoded in pieces cut between whole escapes and characters.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator
from itertools import accumulate
from typing import Any, Final

import msgspec

__all__ = [
    "SLICE_BYTES",
    "BodyError",
    "check_json_limits",
    "decode_json_object",
    "json_object_steps",
]

SLICE_BYTES: Final = 1 << 18
"""The most body bytes one step looks at."""

_WHITESPACE: Final = b" \t\r\n"
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes
_SPACE: Final = re.compile(rb"[ \t\r\n]*")
_BLANKS: Final = (b" ", b"\t", b"\r", b"\n")
_ANY: Final = msgspec.json.Decoder()
_MEMBERS: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ELEMENTS: Final = msgspec.json.Decoder(list[msgspec.Raw])
_HIGH: Final = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW: Final = re.compile(rb"\\u[dD][c-fC-F]")
_SEARCH: Final = 64  # a valid string has a cut within 13 bytes (an escaped surrogate pair)

_Buffer = bytes | bytearray | msgspec.Raw


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


def check_json_limits(
    data: bytes | bytearray, *, max_depth: int, max_values: int, slice_bytes: int = SLICE_BYTES
) -> None:
    """Raise :class:`BodyError` if ``data`` nests deeper than ``max_depth`` arrays and
    objects or holds more than ``max_values`` values (object keys count as values).

    Exact for JSON; for malformed JSON the result is of no consequence (the decoder
    refuses it anyway).
    """
    for _ in _limit_steps(data, max_depth, max_values, slice_bytes):
        pass


def decode_json_object(
    data: bytes | bytearray, *, max_depth: int, max_values: int, slice_bytes: int = SLICE_BYTES
) -> dict[str, Any]:
    """The body as a JSON object, within the limits of :func:`check_json_limits`.

    Raises:
        BodyError: over a limit, not JSON, or not an object.
    """
    steps = json_object_steps(
        data, max_depth=max_depth, max_values=max_values, slice_bytes=slice_bytes
    )
    while True:
        try:
            next(steps)
        except StopIteration as done:
            body: dict[str, Any] = done.value
            return body


def json_object_steps(
    data: bytes | bytearray, *, max_depth: int, max_values: int, slice_bytes: int = SLICE_BYTES
) -> Generator[None, None, dict[str, Any]]:
    """:func:`decode_json_object` in steps of at most ``slice_bytes`` bytes each: the
    caller may run other work at each ``yield``; the object is the generator's value."""
    yield from _limit_steps(data, max_depth, max_values, slice_bytes)
    try:
        body = yield from _object_steps(data, slice_bytes)
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


# --------------------------------------------------------------------------- the limits


def _limit_steps(
    data: bytes | bytearray, max_depth: int, max_values: int, size: int
) -> Iterator[None]:
    if len(data) <= 4 * size:
        opens = data.count(b"{") + data.count(b"[")
        if opens <= max_depth and opens + data.count(b",") + data.count(b":") + 1 <= max_values:
            return  # every value is a first element or follows a comma or colon
    measure = _Measure(max_depth, max_values)
    start = 0
    while start < len(data):
        end = _escape_boundary(data, start, size)
        measure.feed(data[start:end])
        start = end
        yield


def _escape_boundary(data: bytes | bytearray, start: int, size: int) -> int:
    """An end for the slice from ``start`` that splits no escape pair (``\\\\``, ``\\"``)."""
    end = start + size
    if end >= len(data):
        return len(data)
    piece = data[start:end]
    # ``start`` begins a pair if it is a backslash, so a trailing run pairs up from its
    # first backslash in the slice: odd, its last one escapes the next byte.
    return end + (len(piece) - len(piece.rstrip(b"\\"))) % 2


class _Measure:
    """Values and depth of a body fed in slices cut by :func:`_escape_boundary`."""

    def __init__(self, max_depth: int, max_values: int) -> None:
        self.max_depth = max_depth
        self.max_values = max_values
        self.in_string = False
        self.last = b""  # the last structural byte so far (an empty ``[]`` may straddle)
        self.values = 1  # the top value; then each first element, each comma and colon
        self.depth = 0

    def feed(self, piece: bytes | bytearray) -> None:
        plain = piece.replace(b"\\\\", b"").replace(b'\\"', b"")
        if self.in_string:
            close = plain.find(b'"')
            if close < 0:
                return
            plain = plain[close + 1 :]
            self.in_string = False
        parts = plain.split(b'"')
        blanked = b'""'.join(parts[::2])
        if len(parts) % 2 == 0:  # an odd number of quotes: a string goes on
            self.in_string = True
            blanked += b'"'
        compact = blanked.translate(None, _WHITESPACE)
        if not compact:
            return
        opens = compact.count(b"{") + compact.count(b"[")
        empty = compact.count(b"{}") + compact.count(b"[]")
        if self.last + compact[:1] in (b"{}", b"[]"):
            empty += 1
        self.values += compact.count(b",") + compact.count(b":") + opens - empty
        self.last = compact[-1:]
        pending = 1 if self.last in (b"{", b"[") else 0  # its first element may not come
        if self.values - pending > self.max_values:
            raise BodyError(
                f"the request body holds more than {self.max_values} JSON values"
                " (the server's max_json_values)"
            )
        if self.depth + opens > self.max_depth:
            brackets = compact.translate(None, _NOT_BRACKETS).translate(_STEPS)
            steps = memoryview(brackets).cast("b")
            if max(accumulate(steps, initial=self.depth)) > self.max_depth:
                raise BodyError(
                    f"the request body nests arrays and objects more than {self.max_depth}"
                    " deep (the server's max_json_depth)"
                )
        self.depth += opens - compact.count(b"}") - compact.count(b"]")


# --------------------------------------------------------------------------- the decoding


def _object_steps(data: bytes | bytearray, size: int) -> Generator[None, None, Any]:
    if len(data) <= size:
        return _ANY.decode(data)
    blank = _SPACE.match(data)
    start = blank.end() if blank else 0
    if data[start : start + 1] != b"{":
        raise BodyError("the request body must be a JSON object")
    if data[-1:] in _BLANKS:
        data = data.strip(_WHITESPACE)
    elif start:
        data = data[start:]
    return (yield from _value_steps(data, size))


def _value_steps(data: _Buffer, size: int) -> Generator[None, None, Any]:
    """One JSON value (without surrounding blanks) decoded, in steps of about ``size``."""
    if len(data) <= size:
        return _ANY.decode(data)
    first = bytes(memoryview(data)[:1])
    if first == b"{":
        members = _MEMBERS.decode(data)
        yield
        return (yield from _members_steps(members, size))
    if first == b"[":
        elements = _ELEMENTS.decode(data)
        yield
        return (yield from _elements_steps(elements, size))
    if first == b'"':
        return (yield from _string_steps(memoryview(data)[1:-1], size))
    return _ANY.decode(data)


def _members_steps(
    members: dict[str, msgspec.Raw], size: int
) -> Generator[None, None, dict[str, Any]]:
    """The members' values decoded, a step every ``size`` bytes of small ones."""
    value: dict[str, Any] = {}
    held = 0
    for key, raw in members.items():
        if len(raw) > size:
            value[key] = yield from _value_steps(raw, size)
            held = size
        else:
            value[key] = _ANY.decode(raw)
            held += len(raw) + len(key) + 4
        if held >= size:
            held = 0
            yield
    return value


def _elements_steps(elements: list[msgspec.Raw], size: int) -> Generator[None, None, list[Any]]:
    """The elements decoded, the small ones a batch of about ``size`` bytes at a time."""
    value: list[Any] = []
    batch: list[msgspec.Raw] = []
    held = 0
    for raw in elements:
        if len(raw) > size:
            value.extend(_ANY.decode(b"[" + b",".join(batch) + b"]"))
            batch, held = [], 0
            value.append((yield from _value_steps(raw, size)))
            yield
            continue
        batch.append(raw)
        held += len(raw) + 1
        if held >= size:
            value.extend(_ANY.decode(b"[" + b",".join(batch) + b"]"))
            batch, held = [], 0
            yield
    value.extend(_ANY.decode(b"[" + b",".join(batch) + b"]"))
    return value


def _string_steps(content: memoryview, size: int) -> Generator[None, None, str]:
    """A string's content (between its quotes) decoded in pieces of about ``size``."""
    pieces: list[str] = []
    start = 0
    while len(content) - start > size:
        end = _cut(content, start, start + size)
        if end is None:  # no cut where a valid string has one: decode the rest at once
            break
        pieces.append(_ANY.decode(b'"' + content[start:end] + b'"'))
        start = end
        yield
    pieces.append(_ANY.decode(b'"' + content[start:] + b'"'))
    return "".join(pieces)


def _cut(content: memoryview, start: int, at: int) -> int | None:
    """A place at or after ``at`` between two whole characters or escapes (never inside
    an escaped surrogate pair) of a string whose ``start`` is one; ``None`` if none is
    near (the string is then malformed)."""
    before = bytes(content[start:at])
    backslashes = len(before) - len(before.rstrip(b"\\"))
    for end in range(at, min(at + _SEARCH, len(content))):
        byte = content[end]
        if byte == 0x5C:  # a backslash begins an escape after a whole number of pairs
            if backslashes % 2 == 0 and not _inside_pair(content, end):
                return end
            backslashes += 1
            continue
        if 0x80 <= byte < 0xC0:  # inside a UTF-8 sequence
            backslashes = 0
            continue
        if 0x5C not in content[max(start, end - 6) : end]:  # no escape reaches here
            return end
        backslashes = 0
    return None


def _inside_pair(content: memoryview, at: int) -> bool:
    """Whether the escape at ``at`` is the low half of an escaped surrogate pair."""
    return bool(
        at >= 6
        and _LOW.match(bytes(content[at : at + 4]))
        and _HIGH.fullmatch(bytes(content[at - 6 : at]))
    )
