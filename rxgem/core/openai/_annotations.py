"""Gemini grounding and citations → OpenAI ``url_citation`` annotations.

Gemini sends a candidate's ``groundingMetadata`` in pieces: each event may carry
some of it (often ``{}`` on every event and the whole of it on the last), and a
support's ``groundingChunkIndices`` index the chunks *accumulated* across the
stream. :class:`MetadataMerger` rebuilds the complete object: lists are
concatenated in arrival order (lists of strings, such as ``webSearchQueries``,
without repeats), other values are replaced by later ones.

Offsets: a support's ``segment`` gives UTF-8 *byte* offsets within one part of the
candidate's content (``partIndex``, counting consecutive text parts as one, as Gemini
aggregates a stream, and each non-text part as one; function calls are not content
and are not counted), or in the candidate's text when it has no ``partIndex``; a
citation source's ``startIndex``/``endIndex`` are byte offsets in the candidate's
text. OpenAI's ``start_index``/``end_index`` are characters (code points) of the
choice's ``content``, which may hold more than the model's text: code rendered as
Markdown (``render_code``) is not in Gemini's offsets, so offsets in the text move
past each rendered block before it. :class:`ContentMap`
follows a choice's content to convert them: it counts the content's characters
and UTF-8 bytes, and keeps its text from the first sign of grounding or citations
on that choice (Gemini sends ``groundingMetadata: {}`` from the first event of a
grounded answer), so a stream without grounding costs no memory per event. A range
in text that came before that sign can be placed only if that text is ASCII. A
segment's ``text`` checks the result and, when it does not match, is looked up in
the content instead. A range that cannot
be placed gives no annotation (the metadata still carries it).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ContentMap", "MetadataMerger", "url_citations"]

TEXT, THOUGHT, OTHER = 1, 2, 3
"""Kinds of content parts: consecutive parts of one kind (but OTHER) are one part."""


class MetadataMerger:
    """Merges the pieces of one metadata object sent over several events."""

    __slots__ = ("_seen", "value")

    def __init__(self) -> None:
        self.value: dict[str, Any] = {}
        self._seen: dict[str, set[str]] = {}

    def add(self, piece: dict[str, Any]) -> None:
        value = self.value
        for key, new in piece.items():
            old = value.get(key)
            if type(new) is not list:
                value[key] = new
            elif type(old) is not list:
                value[key] = list(new)
                if all(type(entry) is str for entry in new):
                    self._seen[key] = set(new)
                    value[key] = list(dict.fromkeys(new))
            elif key in self._seen and all(type(entry) is str for entry in new):
                seen = self._seen[key]
                for entry in new:
                    if entry not in seen:
                        seen.add(entry)
                        old.append(entry)
            else:
                self._seen.pop(key, None)
                old.extend(new)


class ContentMap:
    """Where a choice's content came from: its length in characters and in UTF-8 bytes,
    its parts, and (once asked) its text."""

    __slots__ = (
        "_bytes",
        "_chars",
        "_encoded",
        "_shown",
        "count",
        "kind",
        "last",
        "parts",
        "pending",
        "plain",
        "recorded",
        "recorded_from",
        "start",
    )

    def __init__(self) -> None:
        # pieces not counted yet: counting a batch of them at a time keeps the cost per
        # event to one append (the builder's fast path does only that)
        self.pending: list[str] = []
        self._chars = 0  # characters of the content but `pending`
        self._bytes = 0  # UTF-8 bytes of the content but `pending`
        self.last = "\n"  # the last piece counted ("\n" while there is none)
        self.count = 0  # parts so far (aggregated as Gemini does)
        self.kind = 0  # the current part's kind
        self.start = (0, 0)  # where the current part starts: (characters, bytes)
        self.recorded: list[str] | None = None
        self.recorded_from = (0, 0)  # where the recorded text starts: (characters, bytes)
        self.parts: list[tuple[int, int, int]] = []  # (kind, characters, bytes) from recording on
        self._encoded: tuple[int, str, bytes] | None = None
        # (where in the model's text, in bytes; the bytes shown before it that are not
        # the model's text): one entry per rendered non-text part, in order
        self._shown: list[tuple[int, int]] = []
        self.plain = False  # more text of the current text part only needs `pending`

    def add(self, text: str, kind: int) -> None:
        """Content (or a thought, or a non-text part) was sent."""
        if kind != self.kind or kind == OTHER:
            self.kind = kind
            self.start = self.size()
            self.count += 1
            if self.recorded is not None:
                self.parts.append((kind, *self.start))
            self.plain = kind == TEXT and self.recorded is None
        if kind == THOUGHT or not text:
            return
        if kind == OTHER:  # shown, but not the model's text (code rendered as Markdown)
            extra = self._shown[-1][1] if self._shown else 0
            size = len(text) if text.isascii() else len(text.encode())
            self._shown.append((self.start[1] - extra, extra + size))
        self.pending.append(text)
        if len(self.pending) >= 64:
            self.size()
        if self.recorded is not None:
            self.recorded.append(text)

    def size(self) -> tuple[int, int]:
        """The content so far in characters and in UTF-8 bytes."""
        pending = self.pending
        if pending:
            text = pending[0] if len(pending) == 1 else "".join(pending)
            size = len(text)
            self._chars += size
            self._bytes += size if text.isascii() else len(text.encode())
            self.last = pending[-1]
            pending.clear()
        return self._chars, self._bytes

    @property
    def length(self) -> int:
        """The content's length in characters."""
        return self.size()[0]

    @property
    def newline(self) -> bool:
        """Whether the content is empty or ends with a line break."""
        return (self.pending[-1] if self.pending else self.last).endswith("\n")

    def record(self) -> None:
        """Keep the text from now on (grounding or citations showed up)."""
        if self.recorded is None:
            self.recorded = []
            self.plain = False
            self.recorded_from = self.size()
            if self.count:  # the current part, so that partIndex can reach it
                self.parts.append((self.kind, *self.start))

    def _part_start(self, part_index: int) -> tuple[int, int]:
        """Where part ``part_index`` starts: (characters, bytes); (0, 0) if unknown."""
        first = self.count - len(self.parts)  # the index of parts[0]
        if 0 <= part_index - first < len(self.parts):
            kind, chars, nbytes = self.parts[part_index - first]
            return (chars, nbytes) if kind != THOUGHT else (0, 0)
        return (0, 0)

    def _in_content(self, offset: int, end: bool) -> int:
        """A byte offset in the model's text as a byte offset in the content: past the
        blocks shown before it (an ``end`` at a block's place stays before the block)."""
        moved = 0
        for at, extra in self._shown:
            if at > offset or (end and at == offset):
                break
            moved = extra
        return offset + moved

    def _recorded(self) -> tuple[str, bytes] | None:
        """The recorded text and its UTF-8 (encoded once for all lookups)."""
        if self.recorded is None:
            return None
        if self._encoded is None or self._encoded[0] != len(self.recorded):
            text = "".join(self.recorded)
            self.recorded[:] = [text] if text else []
            self._encoded = (len(self.recorded), text, text.encode())
        return self._encoded[1], self._encoded[2]

    def char_range(
        self, part_index: int | None, start: Any, end: Any, text: Any = None
    ) -> tuple[int, int] | None:
        """Byte offsets ``start``..``end`` (within part ``part_index``, or within the
        model's whole text when ``None``) as character offsets of the content, or ``None``."""
        if not (type(start) is int and type(end) is int and 0 <= start <= end):
            return None
        if part_index is not None:
            base = self._part_start(part_index)[1]
            first, last = base + start, base + end  # bytes of the whole content
        elif self._shown:
            first, last = self._in_content(start, False), self._in_content(end, True)
        else:
            first, last = start, end
        span: tuple[int, int] | None = None
        recorded = self._recorded()
        from_chars, from_bytes = self.recorded_from
        if recorded is not None and first >= from_bytes:
            encoded = recorded[1]
            if last - from_bytes <= len(encoded):
                head = len(encoded[: first - from_bytes].decode("utf-8", "ignore"))
                tail = len(encoded[: last - from_bytes].decode("utf-8", "ignore"))
                span = (from_chars + head, from_chars + tail)
        elif recorded is None and (size := self.size())[0] == size[1] and last <= size[0]:
            span = (first, last)  # all ASCII: bytes are characters
        elif recorded is not None and from_bytes == from_chars and last <= from_bytes:
            span = (first, last)  # within an ASCII stretch before the recording
        if recorded is not None and type(text) is str and text:
            kept = recorded[0]
            if span is None or kept[span[0] - from_chars : span[1] - from_chars] != text:
                found = kept.find(text)
                if found >= 0:
                    span = (from_chars + found, from_chars + found + len(text))
        return span


_SOURCE_KINDS = ("web", "retrievedContext", "maps", "image")


def _source(chunk: Any) -> tuple[str, str] | None:
    """The ``(url, title)`` of a grounding chunk, if it names a URL."""
    if type(chunk) is not dict:
        return None
    for kind in _SOURCE_KINDS:
        source = chunk.get(kind)
        if type(source) is dict:
            url = source.get("uri")
            if type(url) is str and url:
                title = source.get("title")
                return url, title if type(title) is str else ""
    return None


def _citation(url: str, title: str, span: tuple[int, int]) -> dict[str, Any]:
    return {
        "type": "url_citation",
        "url_citation": {"url": url, "title": title, "start_index": span[0], "end_index": span[1]},
    }


def url_citations(
    content: ContentMap, grounding: dict[str, Any] | None, citation: dict[str, Any] | None
) -> list[dict[str, Any]]:
    """OpenAI ``url_citation`` annotations of a choice, from its merged metadata."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, int, int]] = set()

    def add(url: str, title: str, span: tuple[int, int]) -> None:
        key = (url, span[0], span[1])
        if key not in seen:
            seen.add(key)
            out.append(_citation(url, title, span))

    if grounding:
        chunks = grounding.get("groundingChunks")
        chunks = chunks if type(chunks) is list else []
        supports = grounding.get("groundingSupports")
        for support in supports if type(supports) is list else []:
            segment = support.get("segment") if type(support) is dict else None
            if type(segment) is not dict:
                continue
            part = segment.get("partIndex")
            span = content.char_range(
                part if type(part) is int else None,
                segment.get("startIndex", 0),
                segment.get("endIndex"),
                segment.get("text"),
            )
            indices = support.get("groundingChunkIndices")
            if span is None or type(indices) is not list:
                continue
            for index in indices:
                if type(index) is int and 0 <= index < len(chunks):
                    source = _source(chunks[index])
                    if source is not None:
                        add(source[0], source[1], span)
    if citation:
        sources = citation.get("citationSources", citation.get("citations"))
        for cited in sources if type(sources) is list else []:
            if type(cited) is not dict:
                continue
            url = cited.get("uri")
            span = content.char_range(None, cited.get("startIndex", 0), cited.get("endIndex"))
            if type(url) is str and url and span is not None:
                title = cited.get("title")
                add(url, title if type(title) is str else "", span)
    return out
