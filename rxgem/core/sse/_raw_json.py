"""Raw JSON in a Gemini body: ``{...}`` blocks and the JSON array body, read at byte level.

:class:`~rxgem.core.SSEDecoder` hands these readers the bytes that are not SSE lines
(the rules are in ``_decoder``'s docstring); they do no I/O and keep their own
state, so the decoder holds one object per framing it is inside:

* :class:`RawJsonBlock`: a block that starts with ``{`` (Gemini's pretty-printed
  ``{"error": {...}}`` after the events, or one line of a JSON-lines body), read
  line by line until braces and brackets balance at the end of a line, counted
  outside JSON strings (string state is tracked across lines).
* :class:`JsonArrayReader`: the body of ``streamGenerateContent`` *without*
  ``alt=sse``, which Google writes progressively as ``[{...}\\r\\n,\\r\\n{...}\\r\\n]``.
  It takes the bytes after the ``[`` as they come (split anywhere) and returns each
  top-level element's exact bytes as soon as it is complete: an object or array
  element at the byte that balances its brackets (counted outside strings, escapes
  included), any other element (a number, a string) before the ``,`` or ``]`` that
  follows it, trailing whitespace dropped. Commas and whitespace between elements
  are skipped; the ``]`` that closes the array ends it. The output never depends on
  how the bytes were split.
"""

from __future__ import annotations

import re

__all__ = [
    "ARRAY_LINE",
    "BLANKS",
    "JsonArrayReader",
    "RawJsonBlock",
    "may_start_arrays",
    "open_raw_block",
]

_QUOTE = 0x22
_CLOSE_ARRAY = 0x5D  # "]"

# A complete JSON string literal (unrolled loop: no catastrophic backtracking).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
# Outside a string, the bytes that matter for balancing.
_STRUCTURAL = re.compile(rb'["{}\[\]]')
# Inside a string, the bytes that matter.
_STRING_SPECIAL = re.compile(rb'["\\]')
# Inside a JSON array: where the next element starts (or the array ends).
_ELEMENT_START = re.compile(rb"[^ \t\r\n,]")
# Inside an element at depth 0 (a scalar, or before its first bracket): what matters.
_SCALAR_STRUCTURAL = re.compile(rb'["{\[,\]]')
_JSON_SPACE = b" \t\r\n"
_ARRAY_LEADS = b"[ \t"
BLANKS = re.compile(rb"[ \t]*")
"""The blanks that begin a line (the SSE decoder's look at where a line starts)."""
ARRAY_LINE = re.compile(rb"[\r\n][ \t]*\[")
"""A line end, then a line that may start a JSON array: blanks, then ``[``."""


def may_start_arrays(lines: list[bytes]) -> bool:
    """Whether a line after the first of ``lines`` (split) may start a JSON array: blanks,
    then ``[`` (a look at each one's first byte: most chunks of a stream have none)."""
    return any(line and line[0] in _ARRAY_LEADS for line in lines[1:])


def _scan_line(line: bytes, depth: int, in_string: bool) -> tuple[int, bool]:
    """Update the bracket depth and the in-string flag of a raw block with one line.

    A backslash at the very end of a line (inside a string) escapes the ``"\\n"``
    that joins the lines, so it carries nothing over to the next line.
    """
    if not in_string:
        # Fast path: every string opened on this line also closes on it.
        rest = _JSON_STRING.sub(b"", line) if _QUOTE in line else line
        if _QUOTE not in rest:
            return (
                depth + rest.count(b"{") + rest.count(b"[") - rest.count(b"}") - rest.count(b"]"),
                False,
            )
    pos = 0
    end = len(line)
    while pos < end:
        if in_string:
            m = _STRING_SPECIAL.search(line, pos)
            if m is None:
                break
            pos = m.end()
            if line[m.start()] == _QUOTE:
                in_string = False
            else:
                pos += 1  # skip the escaped byte
        else:
            m = _STRUCTURAL.search(line, pos)
            if m is None:
                break
            pos = m.end()
            c = line[m.start()]
            if c == _QUOTE:
                in_string = True
            elif c in b"{[":
                depth += 1
            else:
                depth -= 1
    return depth, in_string


def open_raw_block(line: bytes) -> RawJsonBlock | None:
    """The raw block that ``line`` (its first line) opens, or ``None`` if ``line`` is
    a whole block by itself (the common case: one line of a JSON-lines body)."""
    depth, in_string = _scan_line(line, 0, False)
    if depth <= 0 and not in_string:
        return None
    return RawJsonBlock(line, depth, in_string)


class RawJsonBlock:
    """A raw ``{...}`` block being read, one complete line at a time (line ends removed).

    Made by :func:`open_raw_block` with its first line and the state that line left;
    :meth:`add` says when the block is complete; :meth:`payload` is its lines joined
    by ``"\\n"``.
    """

    __slots__ = ("_depth", "_in_string", "_lines")

    def __init__(self, line: bytes, depth: int, in_string: bool) -> None:
        self._lines = [line]
        self._depth = depth
        self._in_string = in_string

    def add(self, line: bytes) -> bool:
        """Add one line; ``True`` once the brackets balance at its end, outside strings."""
        self._lines.append(line)
        depth, in_string = _scan_line(line, self._depth, self._in_string)
        self._depth = depth
        self._in_string = in_string
        return depth <= 0 and not in_string

    def payload(self) -> bytes:
        """The block's bytes so far (complete, or cut off at the end of input)."""
        lines = self._lines
        return lines[0] if len(lines) == 1 else b"\n".join(lines)


class JsonArrayReader:
    """Splits the bytes of a JSON array, after its ``[``, into its top-level elements.

    Byte level and incremental (see the module docstring for the rules): :meth:`feed`
    takes the bytes as they come and returns each element's exact bytes as soon as
    it is complete; :meth:`close` returns an element cut off by the end of input.
    """

    __slots__ = ("_depth", "_escape", "_in_element", "_in_string", "_parts")

    def __init__(self) -> None:
        self._parts: list[bytes] = []  # the element's bytes from earlier chunks
        self._in_element = False
        self._depth = 0
        self._in_string = False
        self._escape = False  # the last chunk ended with a backslash inside a string

    def feed(self, data: bytes, elements: list[bytes], pos: int = 0) -> int:
        """Append the elements ``data[pos:]`` completes to ``elements``.

        Returns the offset in ``data`` just past the ``]`` that ends the array, or
        ``-1`` if the array goes on after ``data``.
        """
        in_element = self._in_element
        depth = self._depth
        in_string = self._in_string
        start = pos
        end = len(data)
        if self._escape:
            self._escape = False
            pos += 1  # the byte a backslash at the end of the last chunk escaped
        while pos < end:
            if not in_element:
                m = _ELEMENT_START.search(data, pos)
                if m is None:
                    break
                pos = m.start()
                if data[pos] == _CLOSE_ARRAY:  # the end of the array
                    self._in_element = False
                    return pos + 1
                in_element = True
                start = pos
                depth = 0
            if in_string:
                m = _STRING_SPECIAL.search(data, pos)
                if m is None:
                    break
                pos = m.end()
                if data[m.start()] == _QUOTE:
                    in_string = False
                elif pos < end:
                    pos += 1  # skip the escaped byte
                else:
                    self._escape = True
            elif depth:
                m = _STRUCTURAL.search(data, pos)
                if m is None:
                    break
                pos = m.end()
                c = data[m.start()]
                if c == _QUOTE:
                    in_string = True
                elif c == 0x7B or c == 0x5B:  # "{" "["
                    depth += 1
                else:
                    depth -= 1
                    if not depth:  # the element's brackets balance: it is complete
                        elements.append(self._element(data, start, pos))
                        in_element = False
            else:
                m = _SCALAR_STRUCTURAL.search(data, pos)
                if m is None:
                    break
                c = data[m.start()]
                if c == _QUOTE:
                    in_string = True
                    pos = m.end()
                elif c == 0x7B or c == 0x5B:  # "{" "["
                    depth = 1
                    pos = m.end()
                else:  # "," or "]" ends the element; the top of the loop reads it again
                    pos = m.start()
                    elements.append(self._element(data, start, pos).rstrip(_JSON_SPACE))
                    in_element = False
        if in_element:
            self._parts.append(data[start:])
        self._in_element = in_element
        self._depth = depth
        self._in_string = in_string
        return -1

    def _element(self, data: bytes, start: int, end: int) -> bytes:
        parts = self._parts
        if not parts:
            return data[start:end]
        parts.append(data[start:end])
        element = b"".join(parts)
        parts.clear()
        return element

    def close(self) -> bytes | None:
        """The end of input: the element cut off mid-way (without trailing whitespace)."""
        if not self._in_element:
            return None
        self._in_element = False
        element = b"".join(self._parts).rstrip(_JSON_SPACE)
        self._parts.clear()
        return element
