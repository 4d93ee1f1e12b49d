"""Tests for the incremental SSE decoder (rxgem.core.sse._decoder)."""

from __future__ import annotations

import contextlib
import itertools
import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from rxgem import MalformedStreamError
from rxgem.core import SSEDecoder, SSEEvent
from rxgem.core.sse._decoder import DONE


def decode(*chunks: bytes) -> list[SSEEvent]:
    """Feed ``chunks`` one by one, then close; return every event.

    A body with no event at all but lines that are not SSE makes ``close()`` raise
    (``test_not_sse.py``); here, as WHATWG says, such lines are only ignored.
    """
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    for chunk in chunks:
        out.extend(decoder.feed(chunk))
    with contextlib.suppress(MalformedStreamError):
        out.extend(decoder.close())
    return out


def datas(events: list[SSEEvent]) -> list[str]:
    return [e.data for e in events]


def msg(data: str, **kwargs: object) -> SSEEvent:
    return SSEEvent(data=data, **kwargs)  # type: ignore[arg-type]


def raw(data: str) -> SSEEvent:
    return SSEEvent(data=data, event="raw")


# -- line endings ---------------------------------------------------------------


def test_lf_line_endings() -> None:
    assert decode(b"data: a\n\ndata: b\n\n") == [msg("a"), msg("b")]


def test_crlf_line_endings() -> None:
    assert decode(b"data: a\r\n\r\ndata: b\r\n\r\n") == [msg("a"), msg("b")]


def test_cr_line_endings() -> None:
    assert decode(b"data: a\r\rdata: b\r\r") == [msg("a"), msg("b")]


def test_mixed_line_endings() -> None:
    assert decode(b"data: a\r\ndata: b\rdata: c\n\r\n") == [msg("a\nb\nc")]


def test_events_dispatch_without_flush() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r\n\r\n") == [msg("a")]
    assert decoder.feed(b"data: b\r\r") == [msg("b")]
    assert decoder.feed(b"data: c\n\n") == [msg("c")]
    assert decoder.close() == []


def test_crlf_split_between_cr_and_lf_is_one_line_end() -> None:
    # Two data lines; the chunk boundary falls between the CR and the LF of the
    # first line end. Counting CR and LF separately would dispatch "a" alone.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\ndata: b\r\n\r\n") == [msg("a\nb")]
    assert decoder.close() == []


def test_crlf_split_at_event_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r\n\r") == [msg("a")]
    assert decoder.feed(b"\ndata: b\r\n\r\n") == [msg("b")]
    assert decoder.events == 2


def test_cr_at_chunk_end_then_lone_lf_chunk() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\n") == []
    assert decoder.feed(b"\r") == [msg("a")]
    assert decoder.feed(b"\n") == []
    assert decoder.close() == []


def test_lf_after_cr_only_swallowed_immediately() -> None:
    # CR, then an empty chunk, then LF: still a single CRLF.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\ndata: b\n\n") == [msg("a\nb")]


def test_unicode_line_separators_do_not_split() -> None:
    payload = '{"text": "a\u2028b\u2029c\x85d\x0be\x0cf"}'
    stream = ("data: " + payload + "\r\n\r\n").encode()
    assert decode(stream) == [msg(payload)]
    text = json.loads(decode(stream)[0].data, strict=False)["text"]
    assert text == "a\u2028b\u2029c\x85d\x0be\x0cf"


# -- UTF-8 and BOM --------------------------------------------------------------


def test_utf8_split_across_chunks() -> None:
    text = "é日本🎉"
    stream = f"data: {text}\n\n".encode()
    for i in range(1, len(stream)):
        assert decode(stream[:i], stream[i:]) == [msg(text)], i
    assert decode(*(stream[i : i + 1] for i in range(len(stream)))) == [msg(text)]


def test_invalid_utf8_is_replaced() -> None:
    assert decode(b"data: a\xffb\n\n") == [msg("a\ufffdb")]


def test_bom_stripped_at_start() -> None:
    assert decode(b"\xef\xbb\xbfdata: a\n\n") == [msg("a")]


def test_bom_split_across_chunks() -> None:
    stream = b"\xef\xbb\xbfdata: a\n\n"
    for i in range(1, 6):
        assert decode(stream[:i], stream[i:]) == [msg("a")], i
    assert decode(b"\xef", b"\xbb", b"\xbf", b"data: a\n\n") == [msg("a")]
    assert decode(b"\xef", b"", b"\xbb\xbf", b"data: a\n\n") == [msg("a")]


def test_bom_stripped_only_at_start() -> None:
    # A second BOM is part of the first line: its field name is "\ufeffdata".
    assert decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\ndata: b\n\n") == [msg("b")]
    assert decode(b"data: \xef\xbb\xbfa\n\n") == [msg("\ufeffa")]
    assert decode(b"data: a\n\n", b"\xef\xbb\xbfdata: b\n\n") == [msg("a")]


def test_partial_bom_prefix_is_data() -> None:
    # The first bytes look like the start of a BOM but are not one.
    # The first line is the unknown field "\ufffd\ufffddata", ignored.
    assert decode(b"\xef\xbb", b"data: a\n\n") == []
    assert decode(b"\xef\xbb", b"\ndata: a\n\n") == [msg("a")]
    assert decode(b"\xef\xbb") == []
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef") == []
    assert decoder.feed(b"\xbbx: y\ndata: z\n\n") == [msg("z")]


def test_only_bom() -> None:
    assert decode(b"\xef\xbb\xbf") == []


# -- comments and fields --------------------------------------------------------


def test_comments_ignored() -> None:
    stream = b": keep-alive\ndata: a\n:comment: with colon\ndata: b\n\n:\n\n"
    assert decode(stream) == [msg("a\nb")]


def test_only_comments_gives_no_events() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b": one\r\n: two\r\n\r\n:three\n\n") == []
    assert decoder.close() == []
    assert decoder.events == 0


def test_empty_input() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"") == []
    assert decoder.close() == []
    assert decoder.events == 0
    assert not decoder.done


def test_value_one_leading_space_removed() -> None:
    assert decode(b"data:x\n\n") == [msg("x")]
    assert decode(b"data: x\n\n") == [msg("x")]
    assert decode(b"data:  x\n\n") == [msg(" x")]
    assert decode(b"data:\tx\n\n") == [msg("\tx")]
    assert decode(b"data: x \n\n") == [msg("x ")]
    assert decode(b"event:  sp\ndata: x\n\n") == [msg("x", event=" sp")]


def test_value_after_first_colon_only() -> None:
    assert decode(b"data: a: b:c\n\n") == [msg("a: b:c")]
    assert decode(b"event:x:y\ndata\n\n") == [msg("", event="x:y")]


def test_line_without_colon_is_field_with_empty_value() -> None:
    assert decode(b"data\n\n") == [msg("")]
    assert decode(b"data\ndata\n\n") == [msg("\n")]
    # "event" without a value sets an empty type, which means "message".
    assert decode(b"event: x\nevent\ndata: a\n\n") == [msg("a")]


def test_empty_data_value_dispatches_empty_event() -> None:
    assert decode(b"data:\n\n") == [msg("")]
    assert decode(b"data: \n\n") == [msg("")]
    assert decode(b"data:\ndata:\n\n") == [msg("\n")]


def test_data_lines_accumulate() -> None:
    assert decode(b"data: a\ndata: b\ndata:\ndata: c\n\n") == [msg("a\nb\n\nc")]


def test_blank_line_without_data_dispatches_nothing_and_resets_type() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: ping\n\n") == []
    assert decoder.feed(b"data: a\n\n") == [msg("a")]
    assert decoder.events == 1


def test_two_consecutive_blank_lines_give_one_event() -> None:
    assert decode(b"data: a\n\n\n") == [msg("a")]
    assert decode(b"data: a\r\n\r\n\r\n\r\n") == [msg("a")]


def test_event_type_set_and_reset_after_dispatch() -> None:
    stream = b"event: update\ndata: a\n\ndata: b\n\n"
    assert decode(stream) == [msg("a", event="update"), msg("b")]


def test_last_event_type_wins() -> None:
    assert decode(b"event: a\nevent: b\ndata: x\n\n") == [msg("x", event="b")]


def test_id_persists_across_events() -> None:
    stream = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\nid\ndata: d\n\n"
    assert decode(stream) == [
        msg("a", id="1"),
        msg("b", id="1"),
        msg("c", id="2"),
        msg("d", id=""),
    ]


def test_id_set_without_data_still_persists() -> None:
    assert decode(b"id: 7\n\ndata: a\n\n") == [msg("a", id="7")]


def test_id_with_nul_ignored() -> None:
    assert decode(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n") == [
        msg("a", id="1"),
        msg("b", id="1"),
    ]


def test_id_utf8() -> None:
    assert decode("id: é🎉\ndata: a\n\n".encode()) == [msg("a", id="é🎉")]


def test_retry_digits_only() -> None:
    stream = b"retry: 1500\ndata: a\n\ndata: b\n\nretry: 15x\ndata: c\n\n"
    assert decode(stream) == [msg("a", retry=1500), msg("b"), msg("c")]
    assert decode(b"retry: -1\ndata: a\n\n") == [msg("a")]
    assert decode(b"retry: \n\ndata: a\n\n") == [msg("a")]
    assert decode(b"retry: 1 \ndata: a\n\n") == [msg("a")]
    # Non-ASCII digits are not digits here.
    assert decode("retry: ١٢\ndata: a\n\n".encode()) == [msg("a")]


def test_retry_reset_by_blank_line_without_data() -> None:
    assert decode(b"retry: 10\n\ndata: a\n\n") == [msg("a")]


def test_unknown_fields_ignored() -> None:
    stream = b"foo: bar\nDATA: x\n data: y\nevent : z\ndata: a\n\n"
    assert decode(stream) == [msg("a")]


def test_event_split_right_after_data_colon() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data:") == []
    assert decoder.feed(b' {"a": 1}\r\n\r\n') == [msg('{"a": 1}')]
    decoder = SSEDecoder()
    assert decoder.feed(b"data: ") == []
    assert decoder.feed(b" x\n\n") == [msg(" x")]


# -- [DONE] ---------------------------------------------------------------------


def test_done_sets_flag_and_is_not_an_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: [DONE]\n\n") == [msg("a")]
    assert decoder.done
    assert decoder.events == 1
    assert DONE == "[DONE]"


def test_done_ignores_rest_of_chunk_and_later_input() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: [DONE]\n\ndata: b\n\n{\n") == [msg("a")]
    assert decoder.done
    assert decoder.feed(b"data: c\n\n") == []
    assert decoder.close() == []
    assert decoder.events == 1


def test_done_before_its_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: [DONE]\n") == []
    assert decoder.done
    assert decoder.feed(b"\ndata: x\n\n") == []


def test_done_variants() -> None:
    for line in (b"data:[DONE]", b"data: [DONE]", b"data:  [DONE]  ", b"data:\t[DONE]\t"):
        decoder = SSEDecoder()
        assert decoder.feed(line + b"\r\n\r\n") == [], line
        assert decoder.done, line


def test_done_at_flush_without_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\n\ndata: [DONE]") == [msg("a")]
    assert not decoder.done
    assert decoder.close() == []
    assert decoder.done


def test_not_done() -> None:
    assert decode(b"data: [DONE]x\n\n") == [msg("[DONE]x")]
    assert decode(b'data: "[DONE]"\n\n') == [msg('"[DONE]"')]
    assert decode(b"data: [done]\n\n") == [msg("[done]")]
    assert decode(b"event: [DONE]\ndata: a\n\n") == [msg("a", event="[DONE]")]
    # [DONE] after another data line of the same event is ordinary data.
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\ndata: [DONE]\n\n") == [msg("a\n[DONE]")]
    assert not decoder.done


def test_done_inside_raw_block_is_raw_text() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"{\ndata: [DONE]\n}\n") == [raw("{\ndata: [DONE]\n}")]
    assert not decoder.done


# -- raw JSON blocks ------------------------------------------------------------

ERROR_BLOCK = """{
  "error": {
    "code": 499,
    "message": "The operation was cancelled.",
    "status": "CANCELLED",
    "details": [
      {
        "@type": "type.googleapis.com/google.rpc.DebugInfo",
        "detail": "[ORIGINAL ERROR] generic::cancelled: "
      }
    ]
  }
}"""


def test_raw_error_block_after_events() -> None:
    stream = (
        'data: {"candidates": [{"content": {"parts": [{"text": "First "}]}}]}\n\n'
        'data: {"candidates": [{"content": {"parts": [{"text": "Second "}]}}]}\n\n'
        + ERROR_BLOCK
        + "\n"
    ).encode()
    events = decode(stream)
    assert [e.event for e in events] == ["message", "message", "raw"]
    assert events[2] == raw(ERROR_BLOCK)
    assert json.loads(events[2].data)["error"]["code"] == 499


def test_raw_block_dispatched_when_balanced_without_blank_line() -> None:
    decoder = SSEDecoder()
    lines = ERROR_BLOCK.encode().split(b"\n")
    for line in lines[:-1]:
        assert decoder.feed(line + b"\r\n") == []
    assert decoder.feed(lines[-1] + b"\r\n") == [raw(ERROR_BLOCK)]
    assert decoder.events == 1


def test_raw_block_with_crlf_joined_by_lf() -> None:
    assert decode(b'{\r\n  "a": 1\r\n}\r\n') == [raw('{\n  "a": 1\n}')]


def test_raw_block_includes_blank_lines_and_sse_lines() -> None:
    stream = b'{\n\n"a":\n: not a comment\ndata: not data\n\n1}\n'
    assert decode(stream) == [raw('{\n\n"a":\n: not a comment\ndata: not data\n\n1}')]


def test_a_raw_block_never_overtakes_an_event_that_lacks_its_blank_line() -> None:
    # Gemini's raw error object right after an event without its blank line: the
    # event goes first, as it arrived, and a later `data:` line starts a new event.
    decoder = SSEDecoder()
    stream = b'id: 9\nevent: e\nretry: 5\ndata: a\n{"x": 1}\ndata: b\n\n'
    assert decoder.feed(stream) == [
        msg("a", event="e", id="9", retry=5),
        raw('{"x": 1}'),
        msg("b", id="9"),
    ]
    assert decoder.events == 3


def test_json_lines_one_raw_event_per_line() -> None:
    objs = [{"a": 1}, {"b": [1, 2, {"c": "}"}]}, {"e": "]"}, {"d": "é🎉\u2028"}]
    stream = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs).encode()
    events = decode(stream)
    assert [e.event for e in events] == ["raw"] * 4
    assert [json.loads(e.data) for e in events] == objs


def test_a_line_starting_with_a_bracket_is_a_json_array_read_element_by_element() -> None:
    # (tests/core/test_json_array_bodies.py has the full story.)
    stream = b'{"a": 1}\n[1, {"b": "]"}]\n{"c": 2}\n'
    assert decode(stream) == [raw('{"a": 1}'), raw("1"), raw('{"b": "]"}'), raw('{"c": 2}')]


def test_raw_block_leading_whitespace() -> None:
    assert decode(b'  \t{"a": 1}\n') == [raw('  \t{"a": 1}')]
    assert decode(b"  [\n1]\n") == [raw("1")]  # an array: its elements


def test_raw_block_brackets_inside_strings_ignored() -> None:
    stream = b'{"a": "}}]]",\n "b": "\\"}",\n "c": "\\\\"\n}\n'
    (event,) = decode(stream)
    assert event.event == "raw"
    assert json.loads(event.data) == {"a": "}}]]", "b": '"}', "c": "\\"}


def test_raw_block_string_spanning_lines() -> None:
    # Not valid JSON, but the string state must carry across lines.
    stream = b'{"a": "x\n}}}\ny"\n}\n'
    assert decode(stream) == [raw('{"a": "x\n}}}\ny"\n}')]


def test_raw_block_backslash_at_line_end_escapes_the_newline() -> None:
    stream = b'{"a": "x\\\n"}\n'
    assert decode(stream) == [raw('{"a": "x\\\n"}')]


def test_raw_block_escaped_quote_in_unterminated_line() -> None:
    stream = b'{"a": "x\\" }\n y" }\n'
    assert decode(stream) == [raw('{"a": "x\\" }\n y" }')]


def test_raw_block_extra_closers_dispatch() -> None:
    assert decode(b"{}}\ndata: a\n\n") == [raw("{}}"), msg("a")]


def test_raw_block_unbalanced_at_flush() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: a\n\n{\n  "error": {\n') == [msg("a")]
    assert decoder.close() == [raw('{\n  "error": {')]
    assert decoder.events == 2


def test_raw_block_and_pending_data_at_the_end_keep_their_order() -> None:
    assert decode(b'data: a\n{"x":\n') == [msg("a"), raw('{"x":')]
    assert decode(b'data: a\n{"x": 1}') == [msg("a"), raw('{"x": 1}')]


# -- flush ----------------------------------------------------------------------


def test_flush_processes_incomplete_last_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a") == []
    assert decoder.close() == [msg("a")]
    assert decoder.events == 1


def test_flush_dispatches_pending_event_without_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: e\nid: 3\nretry: 7\ndata: a\ndata: b\n") == []
    assert decoder.close() == [msg("a\nb", event="e", id="3", retry=7)]


def test_flush_without_data_dispatches_nothing() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"event: e\nid: 1\n") == []
    assert decoder.close() == []


def test_flush_twice() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: a")
    assert decoder.close() == [msg("a")]
    assert decoder.close() == []


def test_flush_after_cr_at_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.close() == [msg("a")]


# -- counting -------------------------------------------------------------------


def test_events_counter() -> None:
    decoder = SSEDecoder()
    assert decoder.events == 0
    decoder.feed(b"data: 1\n\ndata: 2\n\n")
    assert decoder.events == 2
    decoder.feed(b'{"raw": true}\n: comment\n\n\n')
    assert decoder.events == 3
    decoder.feed(b"data: 4")
    assert decoder.events == 3
    decoder.close()
    assert decoder.events == 4


def test_done_not_counted() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"data: 1\n\ndata: [DONE]\n\n")
    assert decoder.events == 1
    assert decoder.done


# -- independence from chunking -------------------------------------------------

SAMPLE = (
    b"\xef\xbb\xbf"
    + b": comment line\r\n"
    + b"retry: 3000\r\n"
    + b"id: ev-1\r\n"
    + 'data: {"text": "caf\u00e9 \u65e5\u672c \U0001f389"}\r\n\r\n'.encode()
    + b"event: custom\n"
    + b"data: line one\n"
    + b"data: line two\n"
    + b"data:\n"
    + b"data:no-space\n\n"
    + 'data: {"t": "a\u2028b\u2029c\x85"}\r\r'.encode()
    + b":\r"
    + b"data: cr only\r\r"
    + b"\r\n"
    + 'data: {"x": "\U0001f389"}\r\n\r\n'.encode()
    + ERROR_BLOCK.replace("\n", "\r\n").encode()
    + b"\r\n"
    + b'{"jsonl": ["]", "\\"{"]}\n'
    + b"data: tail without blank line"
)

SAMPLE_EVENTS = [
    msg('{"text": "café 日本 🎉"}', id="ev-1", retry=3000),
    msg("line one\nline two\n\nno-space", event="custom", id="ev-1"),
    msg('{"t": "a\u2028b\u2029c\x85"}', id="ev-1"),
    msg("cr only", id="ev-1"),
    msg('{"x": "🎉"}', id="ev-1"),
    raw(ERROR_BLOCK),
    raw('{"jsonl": ["]", "\\"{"]}'),
    msg("tail without blank line", id="ev-1"),
]


def test_sample_whole() -> None:
    assert decode(SAMPLE) == SAMPLE_EVENTS


def test_sample_every_two_piece_split() -> None:
    for i in range(len(SAMPLE) + 1):
        assert decode(SAMPLE[:i], SAMPLE[i:]) == SAMPLE_EVENTS, i


def test_sample_one_byte_at_a_time() -> None:
    assert decode(*(SAMPLE[i : i + 1] for i in range(len(SAMPLE)))) == SAMPLE_EVENTS


def test_sample_with_done_one_byte_at_a_time() -> None:
    stream = SAMPLE.replace(b"event: custom\n", b"data: [DONE]\r\n\r\nevent: custom\n")
    whole = decode(stream)
    assert whole == SAMPLE_EVENTS[:1]
    assert decode(*(stream[i : i + 1] for i in range(len(stream)))) == whole


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(SAMPLE)), max_size=40))
def test_sample_random_splits(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(SAMPLE)]
    chunks = [SAMPLE[a:b] for a, b in itertools.pairwise(points)]
    assert decode(*chunks) == SAMPLE_EVENTS


_LINE = st.sampled_from(
    [
        b"data: a",
        b"data:",
        b"data: \xc3\xa9\xf0\x9f\x8e\x89",
        b"event: e",
        b"id: 1",
        b"retry: 10",
        b": c",
        b"",
        b'{"a": "}"}',
        b"{",
        b"}",
        b'  ["x\\"',
        b'"]',
        b'[{"a": "]"}',
        b"  , 1 ,",
        b'{"b": "x\\',
        b"]",
        b"data: [DONE]",
        b"\xef\xbb\xbfdata: b",
        b"junk",
    ]
)
_EOL = st.sampled_from([b"\n", b"\r", b"\r\n"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_LINE, _EOL), max_size=30),
    st.booleans(),
    st.lists(st.integers(min_value=0, max_value=1000), max_size=30),
)
def test_random_streams_random_splits(
    lines: list[tuple[bytes, bytes]], bom: bool, cuts: list[int]
) -> None:
    stream = (b"\xef\xbb\xbf" if bom else b"") + b"".join(a + b for a, b in lines)
    points = [0, *sorted(c % (len(stream) + 1) for c in cuts), len(stream)]
    chunks = [stream[a:b] for a, b in itertools.pairwise(points)]
    assert decode(*chunks) == decode(stream)


# -- performance sanity ---------------------------------------------------------


def test_large_line_in_small_pieces_is_linear() -> None:
    payload = b'{"text": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    stream = b"data: " + payload + b"\r\n\r\n"
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    start = time.perf_counter()
    for i in range(0, len(stream), 1024):
        out.extend(decoder.feed(stream[i : i + 1024]))
    out.extend(decoder.close())
    elapsed = time.perf_counter() - start
    assert out == [msg(payload.decode())]
    assert elapsed < 5.0


def test_large_raw_block_in_small_pieces() -> None:
    lines = [b"{"] + [b'  "k%d": "v}]",' % i for i in range(20000)] + [b'  "end": 0', b"}"]
    stream = b"\n".join(lines) + b"\n"
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    start = time.perf_counter()
    for i in range(0, len(stream), 1024):
        out.extend(decoder.feed(stream[i : i + 1024]))
    out.extend(decoder.close())
    elapsed = time.perf_counter() - start
    assert len(out) == 1
    assert out[0].event == "raw"
    assert len(json.loads(out[0].data)) == 20001
    assert elapsed < 5.0


_FAST_LINE = st.one_of(
    _LINE,
    st.builds(
        b"".join,
        st.lists(
            st.sampled_from([b"data:", b" ", b"x", b"\r", b"\n", b":", b"[DONE]"]), max_size=8
        ),
    ),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_FAST_LINE, _EOL, _EOL), min_size=1, max_size=10))
def test_chunks_of_one_line_and_two_line_ends_match_byte_by_byte(
    chunks: list[tuple[bytes, bytes, bytes]],
) -> None:
    # Chunks shaped like one event each (the shape the fast path recognises), after
    # a first event that leaves the decoder between events: the same events as the
    # general path gives for the same bytes one at a time.
    pieces = [b"data: first\n\n", *(line + a + b for line, a, b in chunks)]
    stream = b"".join(pieces)
    assert decode(*pieces) == decode(*(stream[i : i + 1] for i in range(len(stream))))


_NAMED_PART = st.sampled_from(
    [
        b"event:",
        b"event: ",
        b"id:",
        b"id: ",
        b"data:",
        b"data: ",
        b"retry: 5",
        b"x",
        b"\x00",
        b"\n",
        b"\r",
        b"[DONE]",
        b"step.delta",
        b'{"a":1}',
        b":",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.builds(
            lambda parts: b"event:" + b"".join(parts) + b"\n\n", st.lists(_NAMED_PART, max_size=10)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_chunks_of_one_named_event_match_byte_by_byte(chunks: list[bytes]) -> None:
    # Chunks shaped like the Interactions API's events (`event:`, maybe `id:`, one `data:`
    # line, LF LF: the shape the named-event fast path recognises), after a first event
    # that leaves the decoder between events: the same events, ids and types as the
    # general path gives for the same bytes one at a time.
    pieces = [b"data: first\n\n", *chunks]
    stream = b"".join(pieces)
    assert decode(*pieces) == decode(*(stream[i : i + 1] for i in range(len(stream))))


def test_named_events_keep_their_type_and_id() -> None:
    decoder = SSEDecoder()
    first = decoder.feed(b"data: a\n\n")  # leaves the decoder between events
    assert first == [msg("a")]
    assert decoder.feed(b"event: step.delta\nid: 7\ndata: {}\n\n") == [
        msg("{}", event="step.delta", id="7")
    ]
    assert decoder.feed(b"event: step.stop\ndata: {}\n\n") == [
        msg("{}", event="step.stop", id="7")  # the last id stays
    ]
    assert decoder.feed(b"event:\nid: \x00\ndata:\n\n") == [msg("", id="7")]
    assert decoder.feed(b"event: done\ndata: [DONE]\n\n") == []
    assert decoder.done


def test_a_named_events_id_is_decoded_when_read_on_it_and_on_later_events() -> None:
    # the fast path keeps an id's bytes until something reads it: the same text then as
    # the general path decodes (invalid UTF-8 replaced)
    decoder = SSEDecoder()
    decoder.feed(b"data: a\n\n")
    (named,) = decoder.feed(b"event: e\nid: caf\xc3\xa9\xff\ndata: {}\n\n")
    (lone,) = decoder.feed(b"data: b\n\n")
    (general,) = decoder.feed(b": a comment\ndata: c\n\n")
    assert named.id == lone.id == general.id == "caf\u00e9\ufffd"
