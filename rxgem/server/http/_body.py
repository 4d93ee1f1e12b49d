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
is counted (values) and walked once (depth). The decoding finds a container's
members a slice at a time, from the same view with strings dropped: each slice is
cut after its last whole member and decoded by msgspec at once, and a member longer
than a slice is decoded on its own; a long string is decoded in pieces cut between
whole escapes and characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Generator
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

SLICE_BYTES: Final = 1 << 16
"""The most body bytes one step looks at."""

_WHITESPACE: Final = b" \t\r\n"
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")  # +1 and -1 as signed bytes
_SPACE: Final = re.compile(rb"[ \t\r\n]*")
_BLANKS: Final = (b" ", b"\t", b"\r", b"\n")
_ANY: Final = msgspec.json.Decoder()
_SCALAR: Final = re.compile(rb"[^,\]} \t\r\n]*")
_NOT_TOKENS: Final = bytes(b for b in range(256) if b not in b"[]{},")
_TOKEN_STEPS: Final = bytes.maketrans(b"[{]},", b"\x01\x01\xff\xff\x00")
_ONE_CLOSER: Final = bytes.maketrans(b"}", b"]")
_HIGH: Final = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
_LOW: Final = re.compile(rb"\\u[dD][c-fC-F]")
_LONGEST_NUMBER: Final = 4096
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
    data: bytes | bytearray,
    *,
    max_depth: int,
    max_values: int,
    slice_bytes: int = SLICE_BYTES,
    on_measured: Callable[[int], None] | None = None,
) -> Generator[int, None, dict[str, Any]]:
    """:func:`decode_json_object` in steps: the caller may run other work at each
    ``yield``, whose value is how many bytes of the body the step looked at (at most
    ``slice_bytes``, and a few more where a cut must not split an escape or a
    character); the object is the generator's value. ``on_measured`` gets how many
    values the body holds (at most; exact for JSON) once it is measured, before it is
    decoded (what it raises ends the decoding)."""
    values = yield from _limit_steps(data, max_depth, max_values, slice_bytes)
    if on_measured is not None:
        on_measured(values)
    meter = _Meter()
    try:
        body = yield from _object_steps(data, slice_bytes, meter)
        if meter.looked:
            yield meter.take()
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
) -> Generator[int, None, int]:
    """The measure in steps; its value: how many values the body holds (at most)."""
    if len(data) <= size:
        opens = data.count(b"{") + data.count(b"[")
        values = opens + data.count(b",") + data.count(b":") + 1
        if opens <= max_depth and values <= max_values:
            yield len(data)
            return values  # every value is a first element or follows a comma or colon
    measure = _Measure(max_depth, max_values)
    start = 0
    while start < len(data):
        end = _escape_boundary(data, start, size)
        measure.feed(data[start:end])
        yield end - start
        start = end
    return measure.values


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


class _Meter:
    """The body bytes looked at since the last step: every scan adds what it covered,
    and a step ends (``yield meter.take()``) before any scan that would add to a step
    already begun, so no step covers more than one scan's bounded slice."""

    def __init__(self) -> None:
        self.looked = 0

    def take(self) -> int:
        looked, self.looked = self.looked, 0
        return looked


_Steps = Generator[int, None, Any]


def _object_steps(data: bytes | bytearray, size: int, meter: _Meter) -> _Steps:
    if len(data) <= size:
        meter.looked += len(data)
        return _ANY.decode(data)
    start = yield from _blanks(data, 0, size, meter)
    if data[start : start + 1] != b"{":
        raise BodyError("the request body must be a JSON object")
    value, end = yield from _value_steps(data, start, size, meter)
    if (yield from _blanks(data, end, size, meter)) != len(data):
        raise msgspec.DecodeError("trailing data")
    return value


def _blanks(data: _Buffer, at: int, size: int, meter: _Meter) -> Generator[int, None, int]:
    """Where the blanks from ``at`` end, at most ``size`` of them a step."""
    while True:
        limit = min(at + size, len(data))
        blank = _SPACE.match(data, at, limit)
        if blank is None or blank.end() == at:
            return at
        if meter.looked:
            yield meter.take()
        meter.looked += blank.end() - at
        at = blank.end()
        if at < limit or limit == len(data):
            return at


def _value_steps(data: _Buffer, start: int, size: int, meter: _Meter) -> _Steps:
    """The JSON value at ``start`` (not a blank), and where it ends, decoded in steps;
    msgspec checks every piece, so the value is exactly what it reads there (and
    malformed JSON raises its DecodeError)."""
    first = data[start : start + 1]
    if first in (b"{", b"["):
        return (yield from _container_steps(data, start, size, meter))
    if first == b'"':
        return (yield from _string_at(data, start, size, meter))
    if meter.looked:
        yield meter.take()
    # a number or a literal: up to the next separator or blank
    token = _SCALAR.match(data, start, start + _LONGEST_NUMBER + 1)
    end = token.end() if token else start
    meter.looked += end - start + 1
    if end - start > _LONGEST_NUMBER:  # decoding one would be a single unbounded step
        raise BodyError(f"the request body holds a number longer than {_LONGEST_NUMBER} characters")
    return _ANY.decode(memoryview(data)[start:end]), end


def _container_steps(data: _Buffer, start: int, size: int, meter: _Meter) -> _Steps:
    """The array or object at ``start``, and where it ends: its members a slice at a
    time, each slice cut after its last whole member (:func:`_members_cut`) and decoded
    at once; a member longer than what is left of a slice is decoded on its own."""
    is_object = data[start] == 0x7B
    opener, closer = (b"{", b"}") if is_object else (b"[", b"]")
    value: Any = {} if is_object else []
    members = 0
    at = start + 1
    while True:
        at = yield from _blanks(data, at, size, meter)
        if meter.looked:
            yield meter.take()
        piece = bytes(memoryview(data)[at : at + size])
        meter.looked += max(len(piece), 1)
        found = _members_cut(piece)
        if found is not None:
            cut, closes = found
            part = _ANY.decode(opener + piece[:cut] + closer)
            if not part and (members or not closes):  # an empty member: [1,] [,1] [1,,2]
                raise msgspec.DecodeError("a missing member")
            members += len(part)
            if is_object:
                value.update(part)
            else:
                value.extend(part)
            at += cut
        else:  # a member longer than what is left of the slice
            if is_object:
                if data[at : at + 1] != b'"':
                    raise msgspec.DecodeError("a key that is not a string")
                key, at = yield from _string_at(data, at, size, meter)
                at = yield from _blanks(data, at, size, meter)
                if data[at : at + 1] != b":":
                    raise msgspec.DecodeError("a key without a colon")
                at = yield from _blanks(data, at + 1, size, meter)
                value[key], at = yield from _value_steps(data, at, size, meter)
            else:
                member, at = yield from _value_steps(data, at, size, meter)
                value.append(member)
            members += 1
            at = yield from _blanks(data, at, size, meter)
        separator = data[at : at + 1]
        if separator == closer:
            return value, at + 1
        if separator != b",":
            raise msgspec.DecodeError("a member not followed by a comma or the end")
        at += 1


def _members_cut(piece: bytes) -> tuple[int, bool] | None:
    """Where to end a run of whole members in ``piece`` (which begins a member, outside
    any string): at the container's end (``True``) or at the last comma between members
    (``False``); ``None`` if neither is in ``piece``. Exact for JSON; for anything else
    the pieces cut do not all decode.

    Escape pairs are blanked in place and strings dropped (split at quotes), so what
    remains are the structural bytes; their depths are one C-level accumulation, and a
    position found among them is mapped back through the quotes and commas before it.
    """
    parts = piece.replace(b"\\\\", b"__").replace(b'\\"', b"__").split(b'"')
    outside = b'""'.join(parts[::2])  # the last part is inside a string if len is even
    tokens = outside.translate(None, _NOT_TOKENS)
    depths = list(accumulate(memoryview(tokens.translate(_TOKEN_STEPS)).cast("b")))
    if -1 in depths:  # the container's closing bracket
        end = depths.index(-1)
        closing = tokens.count(b"]", 0, end) + tokens.count(b"}", 0, end)
        same = outside.translate(_ONE_CLOSER)
        at = len(same) - len(same.split(b"]", closing + 1)[-1]) - 1
        return _raw_position(parts, outside, at), True
    # Between members (depth 0) there is a comma or the end of a nested member; before
    # that member's opening bracket, depth 0 again, its comma.
    last = _last_zero(depths, len(depths))
    if last is not None and tokens[last] != 0x2C:
        last = _last_zero(depths, last)
    if last is None or tokens[last] != 0x2C:
        return None
    after = tokens.count(b",", last + 1)
    at = len(outside.rsplit(b",", after + 1)[0])
    return _raw_position(parts, outside, at), False


def _last_zero(depths: list[int], stop: int) -> int | None:
    """The last index before ``stop`` at depth 0."""
    if stop <= 0:
        return None
    try:
        return stop - 1 - depths[stop - 1 :: -1].index(0)
    except ValueError:
        return None


def _raw_position(parts: list[bytes], outside: bytes, at: int) -> int:
    """``at`` in ``outside`` (``parts[::2]`` joined by ``""``) as a position in the
    piece the parts were split from (joined by ``"``)."""
    quotes = outside.count(b'"', 0, at)
    if not quotes:
        return at
    begin = outside.rfind(b'"', 0, at) + 1
    return len(b'"'.join(parts[:quotes])) + 1 + at - begin


def _string_at(data: _Buffer, start: int, size: int, meter: _Meter) -> _Steps:
    """The string whose opening quote is at ``start``, and where it ends: its closing
    quote found a slice at a time (cut between escape pairs), then decoded in steps."""
    at = start + 1
    while True:
        if at >= len(data):
            raise msgspec.DecodeError("a string that never closes")
        if meter.looked:
            yield meter.take()
        end = _escape_boundary(data, at, size)
        piece = bytes(memoryview(data)[at:end])
        meter.looked += end - at
        close = piece.replace(b"\\\\", b"__").replace(b'\\"', b"__").find(b'"')
        if close >= 0:
            close += at
            break
        at = end
    text = yield from _string_steps(memoryview(data)[start + 1 : close], size, meter)
    return text, close + 1


def _string_steps(content: memoryview, size: int, meter: _Meter) -> _Steps:
    """A string's content (between its quotes) decoded in pieces of about ``size``."""
    pieces: list[str] = []
    start = 0
    while True:
        if meter.looked:
            yield meter.take()
        end = _cut(content, start, start + size) if len(content) - start > size else None
        if end is None:  # the rest, or no cut where a valid string has one
            meter.looked += len(content) - start
            pieces.append(_ANY.decode(b'"' + content[start:] + b'"'))
            return "".join(pieces)
        meter.looked += end - start
        pieces.append(_ANY.decode(b'"' + content[start:end] + b'"'))
        start = end


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
