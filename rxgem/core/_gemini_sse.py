"""Incremental, sans-IO decoder for Server-Sent Events (``text/event-stream``).

:class:`SSEDecoder` turns the bytes of a Gemini ``streamGenerateContent?alt=sse``
response body into :class:`SSEEvent` objects (and the JSON array body Gemini sends
without ``alt=sse`` into one event per response: see raw JSON blocks below). It
does no I/O: feed it byte chunks as they arrive (:meth:`SSEDecoder.feed`) and call
:meth:`SSEDecoder.close` at the end of the body (the core protocol of
:mod:`rxgem.core._protocol`). The output never depends on how the bytes were split
into chunks.

It implements the event-stream interpretation of the WHATWG HTML standard
(section 9.2.6, "Interpreting an event stream"):

* lines end at CR, LF or CRLF, recognised at byte level (a CRLF split across two
  chunks is still one line end). ``str.splitlines()`` is never used: it also
  breaks at U+0085, U+2028 and U+2029, which may appear unescaped inside JSON
  strings;
* a UTF-8 byte order mark at the very start of the stream is dropped;
* lines starting with ``:`` are comments;
* ``field:value`` lines: one space after the colon is removed; a line without a
  colon is a field with an empty value;
* ``data`` lines accumulate (joined by ``"\\n"``), ``event`` sets the type of the
  next event (``"message"`` by default), ``id`` sets the last event id (unless it
  contains U+0000; it persists across events), ``retry`` (ASCII digits only) is
  reported on the event being built; other fields are ignored;
* an empty line dispatches the event if any ``data`` line was seen, and resets
  the event type (and retry) either way.

Field values are decoded as UTF-8 with ``"replace"`` once their line is
complete, so multi-byte characters split across chunks decode correctly.

Deviations from WHATWG, for Gemini's benefit:

* **Raw JSON blocks.** Outside a raw block, a line whose first character other
  than space or tab is ``{`` or ``[`` starts a *raw block*. A ``data`` event still
  waiting for its empty line is dispatched before the block starts, so the two
  keep their order.

  A block that starts with ``{``: the following lines (blank ones included) join
  it, separated by ``"\\n"``, until braces and brackets balance at the end of a
  line, counting only outside JSON strings (string state is tracked across
  lines). The block is then dispatched at once as ``SSEEvent(data=block,
  event="raw")``, without waiting for an empty line. Gemini appends a
  pretty-printed ``{"error": {...}}`` object after the events this way; the rule
  also decodes a JSON-lines body (one object per line) into one raw event per line.

  A block that starts with ``[`` is a JSON array, read element by element: the
  body of ``streamGenerateContent`` *without* ``alt=sse``, which Google writes
  progressively as ``[{...}\\r\\n,\\r\\n{...}\\r\\n]`` (pretty-printed
  elements). Each top-level element is dispatched as ``SSEEvent(data=element,
  event="raw")`` as soon as it is complete, not at the end of its line: an object
  or array element at the byte that balances its brackets (counted outside
  strings, escapes included), any other element (a number, a string) before the
  ``,`` or ``]`` that follows it, trailing whitespace dropped. The payload is the
  element's bytes exactly as sent (line ends included), so a JSON parser decodes
  it directly. Commas and whitespace between elements are skipped, and the ``]``
  that closes the array ends the block: SSE lines may follow.
* **``[DONE]``.** A ``data`` line whose value is ``[DONE]`` (surrounding ASCII
  whitespace ignored) that starts an event is the OpenAI end-of-stream sentinel:
  it is not dispatched, :attr:`SSEDecoder.done` becomes true and every byte after
  it (in the same chunk and later) is ignored. A ``[DONE]`` line that follows
  other ``data`` lines of the same event is ordinary data.
* **Dispatch at end of input.** :meth:`SSEDecoder.close` treats an unterminated
  last line as a line, then dispatches a pending raw block or array element (even
  unbalanced, so the JSON parser downstream reports it as malformed) and a pending
  ``data`` event that never got its empty line (WHATWG would discard it). An array
  whose ``]`` never came is no error here if no element was cut off: whether the
  stream was complete is for the finish rules downstream to judge.
"""

from __future__ import annotations

import re

from ._errors import MalformedStreamError, snippet

__all__ = ["DONE", "SSEDecoder", "SSEEvent"]

DONE: str = "[DONE]"

_DONE_BYTES = DONE.encode("ascii")
_BOM = b"\xef\xbb\xbf"
_MAX_RETRY_DIGITS = 18
_LF = 0x0A
_CR = 0x0D
_QUOTE = 0x22
_SPACE = 0x20
_DONE_MAX = 64  # a payload this long or longer is not `[DONE]` with some spaces around

# A complete JSON string literal (unrolled loop: no catastrophic backtracking).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
# Outside a string, the bytes that matter for balancing.
_STRUCTURAL = re.compile(rb'["{}\[\]]')
# Inside a string, the bytes that matter.
_STRING_SPECIAL = re.compile(rb'["\\]')


class SSEEvent:
    """One dispatched Server-Sent Event (or one raw JSON block).

    Attributes:
        data: the event's ``data`` lines joined by ``"\\n"`` (without a final
            ``"\\n"``); for a raw block, the block's text (for a JSON array, one
            element's). Invalid UTF-8 is replaced with U+FFFD, as WHATWG decodes
            event streams.
        payload: the same data as it arrived: UTF-8 ``bytes`` for events made by
            :class:`SSEDecoder` (a JSON parser can take them without a round trip
            through ``str``), or the ``str`` an event was built with.
        event: the event type: ``"message"`` unless an ``event`` field set it;
            ``"raw"`` for a raw JSON block.
        id: the last event id at dispatch time, ``None`` if no ``id`` field was
            ever seen (always ``None`` for a raw block).
        retry: the value of a valid ``retry`` field of this event, else ``None``.

    Events compare equal when ``data``, ``event``, ``id`` and ``retry`` are equal.
    """

    __slots__ = ("_text", "event", "id", "payload", "retry")
    __match_args__ = ("data", "event", "id", "retry")

    def __init__(
        self,
        data: str | bytes,
        event: str = "message",
        id: str | None = None,
        retry: int | None = None,
    ) -> None:
        self.payload: str | bytes = data
        self._text: str | None = data if isinstance(data, str) else None
        self.event = event
        self.id = id
        self.retry = retry

    @property
    def data(self) -> str:
        text = self._text
        if text is None:
            payload = self.payload
            assert isinstance(payload, bytes)
            text = self._text = payload.decode("utf-8", "replace")
        return text

    def _key(self) -> tuple[str, str, str | None, int | None]:
        return (self.data, self.event, self.id, self.retry)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SSEEvent):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"SSEEvent(data={self.data!r}, event={self.event!r}, id={self.id!r},"
            f" retry={self.retry!r})"
        )


def _scan_raw(line: bytes, depth: int, in_string: bool) -> tuple[int, bool]:
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


# Inside a JSON array: where the next element starts (or the array ends).
_ELEMENT_START = re.compile(rb"[^ \t\r\n,]")
# Inside an element at depth 0 (a scalar, or before its first bracket): what matters.
_SCALAR_STRUCTURAL = re.compile(rb'["{\[,\]]')
_JSON_SPACE = b" \t\r\n"
# The first byte of an incomplete line that may start a JSON array ("[", or blanks first).
_ARRAY_LEAD = b"[ \t"


class _ArrayReader:
    """Splits the bytes of a JSON array, after its ``[``, into its top-level elements.

    Byte level and incremental: :meth:`feed` takes the bytes as they come (split
    anywhere) and returns each element's exact bytes as soon as it is complete.
    A container element (``{...}`` or ``[...]``) is complete at the byte that
    balances its brackets (counted outside JSON strings, with ``\\`` escapes, as
    for raw blocks); any other element (a number, a string, stray text) ends
    before the next ``,`` or ``]`` outside strings, trailing whitespace dropped.
    Commas and whitespace between elements are skipped; a ``]`` between elements
    ends the array. The output never depends on how the bytes were split.
    """

    __slots__ = ("_depth", "_escape", "_in_element", "_in_string", "_parts")

    def __init__(self) -> None:
        self._parts: list[bytes] = []  # the element's bytes from earlier chunks
        self._in_element = False
        self._depth = 0
        self._in_string = False
        self._escape = False  # the last chunk ended with a backslash inside a string

    def feed(self, data: bytes, elements: list[bytes]) -> int:
        """Append the elements ``data`` completes to ``elements``.

        Returns the offset just past the ``]`` that ends the array, or ``-1`` if
        the array goes on after ``data``.
        """
        in_element = self._in_element
        depth = self._depth
        in_string = self._in_string
        start = 0
        pos = 0
        end = len(data)
        if self._escape:
            self._escape = False
            pos = 1  # the byte a backslash at the end of the last chunk escaped
        while pos < end:
            if not in_element:
                m = _ELEMENT_START.search(data, pos)
                if m is None:
                    break
                pos = m.start()
                if data[pos] == 0x5D:  # "]": the end of the array
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
                elif c == 0x7B or c == 0x5B:
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


class SSEDecoder:
    """Incremental WHATWG-style SSE decoder: feed bytes, get events. No I/O.

    Usage::

        decoder = SSEDecoder()
        for chunk in body:
            for event in decoder.feed(chunk):
                ...
        for event in decoder.close():
            ...

    See the module docstring for the rules, including the deviations from
    WHATWG (raw JSON blocks, ``[DONE]``, dispatch at end of input). The events
    returned never depend on how the input was split into chunks.
    """

    __slots__ = (
        "_after",
        "_array",
        "_data",
        "_depth",
        "_done",
        "_event_type",
        "_events",
        "_head",
        "_idle",
        "_ignored",
        "_in_string",
        "_last_id",
        "_look_first",
        "_pending",
        "_raw",
        "_reading",
        "_rest",
        "_retry",
        "_skip_lf",
    )

    def __init__(self) -> None:
        # Byte-level state.
        # _look_first: the next chunk needs a look before it is split into lines: a
        # JSON array is being read (_array), or _head holds bytes to read in front of
        # it (the first bytes of the stream while they may still be a BOM, or the
        # blanks that begin a line while it may still start a JSON array).
        self._look_first = True
        self._head = b""
        self._pending: list[bytes] = []  # pieces of the incomplete last line
        self._skip_lf = False  # the last chunk ended with CR: drop a leading LF
        # Event being built.
        self._data: list[bytes] = []
        self._event_type: str | None = None
        self._retry: int | None = None
        self._last_id: str | None = None
        # Raw JSON block being built (None when not inside one).
        self._raw: list[bytes] | None = None
        self._depth = 0
        self._in_string = False
        # JSON array being split into elements (None when not inside one).
        self._array: _ArrayReader | None = None
        self._after = 0  # lines of the chunk after the one whose `[` started an array
        self._rest = b""  # the bytes of the next array, for the loop in _read_array
        self._reading = False  # inside that loop
        # Results.
        self._done = False
        self._events = 0
        self._ignored: bytes | None = None  # the first line that was no SSE at all
        # Between events with nothing pending: a chunk that is exactly one event
        # can take the fast path (recomputed by the general path).
        self._idle = False

    @property
    def done(self) -> bool:
        """True once a ``data: [DONE]`` event was seen; later input is ignored."""
        return self._done

    @property
    def events(self) -> int:
        """The number of events dispatched so far (raw blocks included)."""
        return self._events

    @property
    def ignored_line(self) -> str | None:
        """The first line that was not SSE (an unknown field name), or ``None``.

        WHATWG ignores such lines; a body that has them and no event at all is
        most likely not an event stream (an HTML error page, say).
        """
        if self._ignored is None:
            return None
        return self._ignored[:200].decode("utf-8", "replace")

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Decode one chunk; return the events it completed, in order."""
        if self._idle and data[-1:] == b"\n" and data.startswith(b"data:"):
            # Fast path for the common chunk on the wire, exactly one `data:` line and
            # a blank line (LF LF or CR LF CR LF): byte searches in C and one copy.
            # The general path below gives the same result.
            end = data.find(_LF)
            size = len(data)
            if end == size - 2:
                one = _CR not in data
            else:
                one = end == size - 3 and data[-2] == _CR and data.find(_CR) == end - 1
                end -= 1
            if one:
                value = data[6:end] if data[5] == _SPACE else data[5:end]
                if len(value) < _DONE_MAX and value.strip() == _DONE_BYTES:
                    self._finish()
                    return []
                self._events += 1
                return [SSEEvent(value, "message", self._last_id)]
        if self._done or not data:
            return []
        events = self._feed(data)
        self._idle = not (
            self._pending
            or self._data
            or self._raw is not None
            or self._skip_lf
            or self._look_first
            or self._event_type is not None
            or self._retry is not None
            or self._done
        )
        return events

    def _feed(self, data: bytes) -> list[SSEEvent]:
        """The general path of :meth:`feed`: split ``data`` into lines and process them,
        or hand its bytes to the JSON array being read (:meth:`_read_array`)."""
        if self._look_first:
            if self._array is not None:
                return self._read_array(data, [])
            data = self._head + data
            if len(data) < len(_BOM) and _BOM.startswith(data):
                self._head = data
                return []
            self._look_first = False
            self._head = b""
            if data.startswith(_BOM):
                data = data[len(_BOM) :]
                if not data:
                    return []
        if self._skip_lf:
            self._skip_lf = False
            if data[0] == _LF:
                data = data[1:]
                if not data:
                    return []
        last = data[-1]
        complete = last in b"\r\n"
        lines = data.splitlines()
        pending = self._pending
        if complete:
            self._skip_lf = last == _CR
            if pending:
                pending.append(lines[0])
                lines[0] = b"".join(pending)
                pending.clear()
            events = self._lines(lines)
            if self._array is None:
                return events
        else:
            tail = lines.pop()
            if not lines:
                if pending:
                    pending.append(tail)
                    return []
                pending.append(tail)  # a line starts: it may start a JSON array
                if tail[0] in _ARRAY_LEAD and self._raw is None:
                    return self._pending_array([])
                return []
            if pending:
                pending.append(lines[0])
                lines[0] = b"".join(pending)
                pending.clear()
            pending.append(tail)  # a line starts: it may start a JSON array
            events = self._lines(lines)
            if self._array is None:
                if tail[0] in _ARRAY_LEAD and pending and self._raw is None:
                    return self._pending_array(events)
                return events
        # A complete line started a JSON array: it reads the bytes after its `[` as
        # they are, line ends included.
        i = len(lines) - 1 - self._after
        ends = data.splitlines(True)  # `data` split as `lines` (but for the pending part)
        offset = sum(map(len, ends[:i])) + len(ends[i].rstrip(b"\r\n"))
        line = lines[i]
        pending.clear()
        self._skip_lf = False
        return self._read_array(line[line.index(b"[") + 1 :] + data[offset:], events)

    def _pending_array(self, events: list[SSEEvent]) -> list[SSEEvent]:
        """Start a JSON array if the incomplete line just begun starts one (its elements
        are due before its line ends); ``events``: the events already due.

        A line of only blanks so far is held back in ``_head`` and read again in front
        of the next chunk, so the check runs where a line begins, not on every chunk.
        """
        pending = self._pending
        (line,) = pending
        rest = line.lstrip(b" \t")
        if not rest:
            pending.clear()
            self._head = line
            self._look_first = True
            return events
        if rest[0] != 0x5B:  # not "["
            return events
        pending.clear()
        self._start_array(events)
        return self._read_array(rest[1:], events)

    def _in_array(self) -> bool:
        # Not inline in _read_array: there mypy takes ``_array`` for the None set above,
        # not seeing that _feed may set it, and mypyc's compiled check would fail.
        return self._array is not None

    def _read_array(self, data: bytes, out: list[SSEEvent]) -> list[SSEEvent]:
        """Read ``data`` inside a JSON array: dispatch its complete elements, then
        process the bytes after its ``]`` as lines; ``out``: the events already due.

        Those lines may start another array: this loop reads it, so a chunk of many
        arrays costs no recursion (:meth:`_feed`, called from here, leaves the bytes
        of the next array in ``_rest``).
        """
        if self._reading:
            self._rest = data
            return out
        self._reading = True
        try:
            while True:
                array = self._array
                assert array is not None
                elements: list[bytes] = []
                end = array.feed(data, elements) if data else -1
                if elements:
                    out += [SSEEvent(element, "raw") for element in elements]
                    self._events += len(elements)
                if end < 0:
                    return out
                self._array = None
                self._look_first = False
                data = data[end:]
                if not data:
                    return out
                out += self._feed(data)
                if not self._in_array():
                    return out
                data, self._rest = self._rest, b""
        finally:
            self._reading = False

    error = None
    """Always ``None``: the decoder raises its one error (not an event stream) at once."""

    def close(self, error: Exception | None = None) -> list[SSEEvent]:
        """Signal the end of input; return the events still pending.

        The unterminated last line (if any) is processed as a line, then a
        pending raw block or JSON array element is dispatched (even if
        unbalanced), then a pending ``data`` event that lacks its empty line.
        With ``error`` (the body was cut off by it) nothing more is dispatched: a
        partial event is not an event.

        Raises:
            MalformedStreamError: the input held no event but lines that are not
                SSE (an HTML error page, binary data). An empty body, or one of
                only comments, is not this error.
        """
        if error is not None or self._done:
            self._drop()
            return []
        out = self._flush()
        if self._events == 0 and self._ignored is not None and not self._done:
            ignored, self._ignored = self._ignored, None
            raise MalformedStreamError(
                "the body is not a Server-Sent Events stream (no event in it)",
                snippet=snippet(ignored),
            )
        return out

    def _flush(self) -> list[SSEEvent]:
        """The events pending at the end of input (WHATWG, plus the deviations above)."""
        if self._look_first and self._array is None:
            self._look_first = False
            if self._head:
                self._pending.append(self._head)
                self._head = b""
        self._skip_lf = False
        out: list[SSEEvent] = []
        if self._pending:
            out = self._feed(b"\n")  # the last line, ended
            if self._done:
                return out
        if self._array is not None:
            element = self._array.close()
            self._array = None
            self._look_first = False
            if element is not None:
                out.append(SSEEvent(element, "raw"))
                self._events += 1
        if self._raw is not None:
            out.append(self._dispatch_raw())
        if self._data:
            out.append(self._dispatch())
        self._event_type = None
        self._retry = None
        return out

    # -- internals ---------------------------------------------------------

    def _lines(self, lines: list[bytes]) -> list[SSEEvent]:
        """Process complete lines (without their line ends)."""
        out: list[SSEEvent] = []
        data = self._data
        in_raw = self._raw is not None
        rest = iter(lines)
        for line in rest:
            if in_raw:
                self._raw_line(line, out)
                in_raw = self._raw is not None
                continue
            if not line:
                if data:
                    # Dispatch (inlined _dispatch(): this is the hot path).
                    text = data[0] if len(data) == 1 else b"\n".join(data)
                    data.clear()
                    event_type = self._event_type or "message"
                    out.append(SSEEvent(text, event_type, self._last_id, self._retry))
                    self._events += 1
                self._event_type = None
                self._retry = None
                continue
            if line.startswith(b"data: "):
                value = line[6:]
            elif line.startswith(b"data:"):
                value = line[5:]
            else:
                if line[0] != 0x3A:  # not a ":" comment
                    self._other_line(line, out)
                    if self._array is not None:  # the caller reads the array's bytes
                        self._after = sum(1 for _ in rest)
                        break
                    in_raw = self._raw is not None
                continue
            if not data and value.strip() == _DONE_BYTES:
                self._finish()
                break
            data.append(value)
        return out

    def _other_line(self, line: bytes, out: list[SSEEvent]) -> None:
        """A line that is neither blank, nor ``data:``, nor a comment."""
        first = line.lstrip(b" \t")[:1]
        if first == b"[":
            self._start_array(out)
            return
        if first == b"{":
            if self._data:  # an event that lacks its blank line came first: it goes first
                out.append(self._dispatch())
            self._raw = []
            self._depth = 0
            self._in_string = False
            self._raw_line(line, out)
            return
        name, colon, value = line.partition(b":")
        if colon and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            # Only reached for "data" without a colon: an empty value.
            self._data.append(value)
        elif name == b"event":
            self._event_type = value.decode("utf-8", "replace")
        elif name == b"id":
            text = value.decode("utf-8", "replace")
            if "\x00" not in text:
                self._last_id = text
        elif name == b"retry":
            # bytes.isdigit(): ASCII digits only; absurdly long values are ignored
            if value.isdigit() and len(value) <= _MAX_RETRY_DIGITS:
                self._retry = int(value)
        elif self._ignored is None and name != b"id":
            self._ignored = line[:200]

    def _start_array(self, out: list[SSEEvent]) -> None:
        """A raw block starts with ``[``: read it as a JSON array, element by element."""
        if self._data:  # an event that lacks its blank line came first: it goes first
            out.append(self._dispatch())
        self._array = _ArrayReader()
        self._look_first = True

    def _raw_line(self, line: bytes, out: list[SSEEvent]) -> None:
        """Add one line to the raw block; dispatch the block once it balances."""
        raw = self._raw
        assert raw is not None
        raw.append(line)
        depth, in_string = _scan_raw(line, self._depth, self._in_string)
        if depth <= 0 and not in_string:
            out.append(self._dispatch_raw())
        else:
            self._depth = depth
            self._in_string = in_string

    def _dispatch(self) -> SSEEvent:
        """Dispatch the data event being built and reset its buffers."""
        data = self._data
        text = data[0] if len(data) == 1 else b"\n".join(data)
        data.clear()
        event = SSEEvent(text, self._event_type or "message", self._last_id, self._retry)
        self._event_type = None
        self._retry = None
        self._events += 1
        return event

    def _dispatch_raw(self) -> SSEEvent:
        """Dispatch the raw block being built and leave raw mode."""
        raw = self._raw
        assert raw is not None
        self._raw = None
        self._depth = 0
        self._in_string = False
        text = raw[0] if len(raw) == 1 else b"\n".join(raw)
        self._events += 1
        return SSEEvent(text, "raw")

    def _finish(self) -> None:
        """``[DONE]`` seen: drop all state and ignore the rest of the input."""
        self._done = True
        self._drop()

    def _drop(self) -> None:
        """Forget the line, event and raw block being built."""
        self._idle = False
        self._pending.clear()
        self._head = b""
        self._data.clear()
        self._raw = None
        self._array = None
        self._rest = b""
        self._event_type = None
        self._retry = None
