"""Incremental, sans-IO decoder for Server-Sent Events (``text/event-stream``).

:class:`SSEDecoder` turns the bytes of a Gemini ``streamGenerateContent?alt=sse``
response body into :class:`SSEEvent` objects (and the JSON array body Gemini sends
without ``alt=sse`` into one event per response: see raw JSON blocks below). It
does no I/O: feed it byte chunks as they arrive (:meth:`SSEDecoder.feed`) and call
:meth:`SSEDecoder.close` at the end of the body (the core protocol of
:class:`~rxgem.core.Core`). The output never depends on how the bytes were split
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
  than space or tab is ``{`` or ``[`` starts a *raw block* (a ``data`` event still
  waiting for its empty line is dispatched first, so the two keep their order), read
  as ``_raw_json`` says: a ``{`` block line by line until its brackets balance at the
  end of a line (Gemini's pretty-printed ``{"error": {...}}`` after the events, or a
  line of a JSON-lines body), then one ``SSEEvent(data=block, event="raw")``; a ``[``
  block as a JSON array (``streamGenerateContent`` *without* ``alt=sse``), each
  element an ``SSEEvent(data=element, event="raw")`` as soon as it is complete, its
  bytes exactly as sent; the ``]`` that closes it ends the block, SSE lines may follow.
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

from .._errors import MalformedStreamError, snippet
from . import _raw_json
from ._event import SSEEvent
from ._named import named_event
from ._raw_json import JsonArrayReader, RawJsonBlock, open_raw_block

__all__ = ["DONE", "SSEDecoder", "SSEEvent"]

DONE: str = "[DONE]"

_DONE_BYTES = DONE.encode("ascii")
_BOM = b"\xef\xbb\xbf"
_MAX_RETRY_DIGITS = 18
_LF = 0x0A
_CR = 0x0D
_SPACE = 0x20
_DONE_MAX = 64  # a payload this long or longer is not `[DONE]` with some spaces around
_BLANK = b" \t"
_OPEN_ARRAY = 0x5B  # "["


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
        "_array",
        "_blanks",
        "_data",
        "_done",
        "_event_type",
        "_events",
        "_head",
        "_idle",
        "_ignored",
        "_last_id",
        "_look_first",
        "_pending",
        "_raw",
        "_retry",
        "_skip_lf",
    )

    def __init__(self) -> None:
        # Lines. _look_first: _head holds the first bytes of the stream while they may
        # still be a BOM.
        self._look_first = True
        self._head = b""
        self._blanks: list[bytes] = []  # the blanks that begin the line in progress, so far
        self._pending: list[bytes] = []  # pieces of the incomplete last line
        self._skip_lf = False  # the last chunk ended with CR: drop a leading LF
        # Event being built.
        self._data: list[bytes] = []
        self._event_type: str | None = None
        self._retry: int | None = None
        self._last_id: str | bytes | None = None  # bytes: from the fast path, not decoded
        # The raw JSON being read instead of lines (None when not inside one).
        self._raw: RawJsonBlock | None = None
        self._array: JsonArrayReader | None = None
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
        if self._idle and data.endswith(b"\n\n") and data.startswith(b"event:"):
            event = named_event(data, self._last_id)  # the Interactions API's chunk
            if event is not None:
                self._last_id = event.raw_id
                self._events += 1
                return [event]
        if self._done or not data:
            return []
        out: list[SSEEvent] = []
        if self._look_first:
            data = self._after_bom(data)
        pos = 0
        end = len(data)
        first = True  # the first lines of the chunk: most chunks have nothing else
        while pos < end:  # lines, or a JSON array: each hands the other where it stopped
            if self._array is None:
                pos = self._read_lines(data, pos, out, first)
                first = False
            else:
                pos = self._read_array(data, pos, out)
        self._idle = not (
            self._pending
            or self._blanks
            or self._data
            or self._raw is not None
            or self._array is not None
            or self._skip_lf
            or self._look_first
            or self._event_type is not None
            or self._retry is not None
            or self._done
        )
        return out

    def _after_bom(self, data: bytes) -> bytes:
        """The first bytes of the stream without a BOM (``b""`` while they may be one)."""
        data = self._head + data
        if len(data) < len(_BOM) and _BOM.startswith(data):
            self._head = data
            return b""
        self._look_first = False
        self._head = b""
        return data[len(_BOM) :] if data.startswith(_BOM) else data

    def _read_lines(self, data: bytes, pos: int, out: list[SSEEvent], first: bool) -> int:
        """Read ``data`` from ``pos`` as lines, appending the events to ``out``; return where a
        JSON array's bytes begin (past the ``[`` of the line starting one), else ``len(data)``.
        Linear: the blanks that begin a line are kept in pieces, never read again."""
        end = len(data)
        if self._skip_lf:
            self._skip_lf = False
            if data[pos] == _LF:
                pos += 1
                if pos == end:
                    return end
        blanks = self._blanks
        if blanks or (not self._pending and self._raw is None):  # a line starts here
            lead = _raw_json.BLANKS.match(data, pos).end()  # type: ignore[union-attr]
            if lead == end:  # only blanks so far: the line may still start an array
                blanks.append(data[pos:])
                return end
            if data[lead] == _OPEN_ARRAY:
                blanks.clear()
                self._start_array(out)
                return lead + 1
            if blanks:  # the line goes on: its blanks are its first piece
                self._pending.append(b"".join(blanks))
                blanks.clear()
        lines = (data[pos:] if pos else data).splitlines() if first else []
        if first and not _raw_json.may_start_arrays(lines):  # split once, looked at once
            return self._split(data, pos, end, out, lines)
        while True:
            found = _raw_json.ARRAY_LINE.search(data, pos)
            if found is None:
                return self._split(data, pos, end, out)
            line = found.start() + 1  # the line that may start an array
            after = self._split(data, pos, line, out)
            if after != line or self._done:  # (an array or [DONE] came first)
                return end if self._done else after
            self._skip_lf = False  # the line does not begin with LF
            if self._raw is None:
                self._start_array(out)
                return found.end()
            pos = line  # a line of the raw block

    def _split(
        self,
        data: bytes,
        pos: int,
        stop: int,
        out: list[SSEEvent],
        lines: list[bytes] | None = None,
    ) -> int:
        """Process the lines of ``data[pos:stop]`` (``lines`` if split); return ``stop``, or
        where a JSON array's bytes begin if a line started one (not if _read_lines looked)."""
        chunk = data[pos:stop] if pos or stop != len(data) else data
        lines = chunk.splitlines() if lines is None else lines
        pending = self._pending
        last = chunk[-1]
        tail: bytes | None = None
        if last in b"\r\n":
            self._skip_lf = last == _CR
        else:
            tail = lines.pop()
        if lines:
            if pending:
                pending.append(lines[0])
                lines[0] = b"".join(pending)
                pending.clear()
            if tail is not None:
                pending.append(tail)
            start = self._lines(lines, out)
            if start >= 0:  # the bytes after the `[` of complete line `start`
                ends = chunk.splitlines(True)
                pending.clear()
                self._skip_lf = False
                return pos + sum(map(len, ends[:start])) + ends[start].index(b"[") + 1
        elif tail is not None:
            pending.append(tail)
        blanks = tail is not None and tail[0] in _BLANK and not tail.lstrip(b" \t")
        if blanks and len(pending) == 1 and self._raw is None:  # it may still start an array
            self._blanks.append(pending.pop())
        return stop

    def _read_array(self, data: bytes, pos: int, out: list[SSEEvent]) -> int:
        """Read ``data`` from ``pos`` inside a JSON array, its complete elements to ``out``;
        return where the bytes after its ``]`` begin (``len(data)`` while it goes on)."""
        array = self._array
        assert array is not None
        elements: list[bytes] = []
        end = array.feed(data, elements, pos)
        if elements:
            out += [SSEEvent(element, "raw") for element in elements]
            self._events += len(elements)
        if end < 0:
            return len(data)
        self._array = None
        return end

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
        out = self._end_of_input()
        if self._events == 0 and self._ignored is not None and not self._done:
            ignored, self._ignored = self._ignored, None
            raise MalformedStreamError(
                "the body is not a Server-Sent Events stream (no event in it)",
                snippet=snippet(ignored),
            )
        return out

    def _end_of_input(self) -> list[SSEEvent]:
        """The events pending at the end of input (WHATWG, plus the deviations above)."""
        if self._look_first:
            self._look_first = False
            if self._head:
                self._pending.append(self._head)
                self._head = b""
        if self._blanks:
            self._pending.append(b"".join(self._blanks))
            self._blanks.clear()
        self._skip_lf = False
        out: list[SSEEvent] = []
        if self._pending:
            self._split(b"\n", 0, 1, out)  # the last line, ended (it starts no array)
            if self._done:
                return out
        array = self._array
        if array is not None:
            self._array = None
            element = array.close()
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

    def _lines(self, lines: list[bytes], out: list[SSEEvent]) -> int:
        """Process complete lines (without their line ends), appending events to ``out``.

        Returns the index of the line that started a JSON array (the lines after it
        are the array's bytes, not lines), else ``-1``.
        """
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
                        return len(lines) - 1 - sum(1 for _ in rest)
                    in_raw = self._raw is not None
                continue
            if not data and value.strip() == _DONE_BYTES:
                self._finish()
                break
            data.append(value)
        return -1

    def _other_line(self, line: bytes, out: list[SSEEvent]) -> None:
        """A line that is neither blank, nor ``data:``, nor a comment."""
        first = line.lstrip(b" \t")[:1]
        if first == b"[":
            self._start_array(out)
            return
        if first == b"{":
            if self._data:  # an event that lacks its blank line came first: it goes first
                out.append(self._dispatch())
            self._raw = open_raw_block(line)
            if self._raw is None:  # the line is the whole block (a JSON-lines body)
                self._events += 1
                out.append(SSEEvent(line, "raw"))
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
        self._array = JsonArrayReader()

    def _raw_line(self, line: bytes, out: list[SSEEvent]) -> None:
        """Add one line to the raw block; dispatch the block once it balances."""
        raw = self._raw
        assert raw is not None
        if raw.add(line):
            out.append(self._dispatch_raw())

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
        self._events += 1
        return SSEEvent(raw.payload(), "raw")

    def _finish(self) -> None:
        """``[DONE]`` seen: drop all state and ignore the rest of the input."""
        self._done = True
        self._drop()

    def _drop(self) -> None:
        """Forget the line, event and raw block being built."""
        self._idle = False
        self._pending.clear()
        self._head = b""
        self._blanks.clear()
        self._data.clear()
        self._raw = None
        self._array = None
        self._event_type = None
        self._retry = None
