"""``streamGenerateContent`` without ``alt=sse``: the body is one JSON array of responses.

Google writes the array progressively, one pretty-printed response at a time:
``[{...}\\r\\n,\\r\\n{...}\\r\\n]``. ``SSEDecoder`` reads a raw block that starts with
``[`` element by element: each complete top-level element is a raw event as soon as
its closing brace arrives, whatever the split, so the pipeline streams the array as
it streams the SSE form (and an error element, or a cut-off array, loses nothing
that came before it).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pipeline_harness import QUOTA_ERROR, Outcome, run, run_converter

import rxgem
from rxgem import samples
from rxgem.core import SSEDecoder, SSEEvent


def decode_events(*chunks: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.close()


def payloads(events: Sequence[SSEEvent]) -> list[bytes | str]:
    return [e.payload for e in events]


def raw(data: str) -> SSEEvent:
    return SSEEvent(data=data, event="raw")


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def pretty(value: Any, eol: str = "\r\n") -> str:
    """``value`` as Google prints an array element: indented, ``eol`` line ends."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", eol)


def google_array(elements: Sequence[str], eol: str = "\r\n", *, closed: bool = True) -> bytes:
    """The array body as Google writes it: ``[`` elem ``eol , eol`` elem ... ``eol ]``."""
    body = "[" + f"{eol},{eol}".join(elements)
    if closed:
        body += f"{eol}]"
    return body.encode()


def sample_payloads(name: str) -> list[str]:
    """The JSON payloads of a sample's events (``data:`` events and raw blocks alike)."""
    return [e.data for e in decode_events(samples.read(name))]


def array_form(name: str, eol: str = "\r\n") -> bytes:
    return google_array([pretty(json.loads(p), eol) for p in sample_payloads(name)], eol)


def outcome_key(outcome: Outcome) -> tuple[list[dict[str, Any]], str | None]:
    chunks, error = outcome
    return [c.to_dict() for c in chunks], None if error is None else repr(error)


# -- the decoder: one raw event per element ---------------------------------------

ELEMENTS = [
    {"candidates": [{"content": {"parts": [{"text": 'a ] } " \\ é 日本 🎉 \u2028'}]}}]},
    {"candidates": [{"content": {"parts": [{"text": ']]}}\\"[{'}]}, "index": 0}]},
    {"usageMetadata": {"promptTokenCount": 7, "totalTokenCount": 17}, "list": [[], {}, [1]]},
]


def test_google_framing_gives_one_raw_event_per_element_byte_identical() -> None:
    texts = [pretty(e) for e in ELEMENTS]
    body = google_array(texts)
    events = decode_events(body)
    assert [e.event for e in events] == ["raw"] * 3
    assert [e.id for e in events] == [None] * 3
    assert payloads(events) == [t.encode() for t in texts]  # CRLF and all, as sent
    assert [json.loads(e.data) for e in events] == ELEMENTS


@pytest.mark.parametrize("eol", ["\r\n", "\n", "\r"])
def test_every_split_gives_the_same_events(eol: str) -> None:
    body = google_array([pretty(e, eol) for e in ELEMENTS], eol)
    whole = decode_events(body)
    assert len(whole) == 3
    for size in range(1, 14):
        assert decode_events(*pieces(body, size)) == whole, size
    for i in range(len(body) + 1):
        assert payloads(decode_events(body[:i], body[i:])) == payloads(whole), i


def test_an_element_is_dispatched_by_the_chunk_that_holds_its_closing_brace() -> None:
    texts = [pretty(e) for e in ELEMENTS]
    body = google_array(texts)
    # where each element's closing brace is in the body
    ends = []
    pos = 0
    for t in texts:
        pos = body.index(t.encode(), pos) + len(t.encode())
        ends.append(pos)
    for cut in range(len(body) + 1):
        decoder = SSEDecoder()
        first = decoder.feed(body[:cut]) if cut else []
        assert len(first) == sum(end <= cut for end in ends), cut
        rest = decoder.feed(body[cut:]) if cut < len(body) else []
        assert payloads(first + rest + decoder.close()) == [t.encode() for t in texts]


def test_the_first_element_does_not_wait_for_a_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'[{"a": 1}') == [raw('{"a": 1}')]
    assert decoder.feed(b"\r\n,\r\n") == []
    assert decoder.feed(b'{"b": "x\\') == []  # an escape split at the chunk end
    assert decoder.feed(b'"}"}') == [raw('{"b": "x\\"}"}')]
    assert decoder.feed(b"\r\n]") == []
    assert decoder.close() == []
    assert decoder.events == 2


def test_strings_with_brackets_quotes_backslashes_and_utf8_split_anywhere() -> None:
    element = '{"t": "]}\\"\\\\", "u": "\\\\", "v": "é🎉\u2028]", "w": "\\"]}"}'
    assert json.loads(element)  # valid JSON
    body = ("[" + element + ",\n" + element + "]").encode()
    expected = [element.encode()] * 2
    for i, j in itertools.combinations(range(len(body) + 1), 2):
        assert payloads(decode_events(body[:i], body[i:j], body[j:])) == expected, (i, j)


def test_commas_and_whitespace_between_elements_are_ignored() -> None:
    body = b'[ \r\n\t{"a": 1} ,,\n\n{"b": 2}{"c": 3}\r\n , ]'
    assert decode_events(body) == [raw('{"a": 1}'), raw('{"b": 2}'), raw('{"c": 3}')]


def test_elements_that_are_not_objects_are_raw_events_too() -> None:
    body = b'[1, -2.5e3 , "s,]", true, null, [1, [2]], {}]'
    assert payloads(decode_events(body)) == [
        b"1",
        b"-2.5e3",
        b'"s,]"',
        b"true",
        b"null",
        b"[1, [2]]",
        b"{}",
    ]


def test_an_empty_array_gives_no_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"[\r\n]\r\n") == []
    assert decoder.close() == []
    assert decoder.events == 0


def test_the_array_ends_at_its_bracket_and_sse_goes_on() -> None:
    body = b'data: {"x": 0}\r\n\r\n[{"a": 1}\r\n]\r\ndata: {"y": 2}\r\n\r\n{"z": 3}\r\n'
    expected = [
        SSEEvent('{"x": 0}'),
        raw('{"a": 1}'),
        SSEEvent('{"y": 2}'),
        raw('{"z": 3}'),
    ]
    assert decode_events(body) == expected
    assert decode_events(*pieces(body, 1)) == expected


def test_a_data_event_that_lacks_its_blank_line_goes_first() -> None:
    assert decode_events(b'data: a\n[{"b": 1}]\n') == [SSEEvent("a"), raw('{"b": 1}')]
    assert decode_events(b"data: a\n", b'[{"b"', b": 1}") == [SSEEvent("a"), raw('{"b": 1}')]


def test_blanks_before_the_bracket_split_across_chunks() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"  ") == []
    assert decoder.feed(b"\t ") == []
    assert decoder.feed(b'[{"a": 1}') == [raw('{"a": 1}')]
    assert decoder.close() == []
    # blanks that start a line that is no array stay part of that line
    assert decode_events(b"  ", b"data: x\n\ndata: y\n\n") == [SSEEvent("y")]


def test_a_byte_order_mark_before_the_array_is_dropped() -> None:
    body = b'\xef\xbb\xbf[{"a": 1}]'
    assert decode_events(body) == [raw('{"a": 1}')]
    assert decode_events(*pieces(body, 1)) == [raw('{"a": 1}')]


def test_a_bracket_inside_a_raw_object_block_is_no_array() -> None:
    body = b"{\n[1,\n2]}\n"
    assert decode_events(body) == [raw("{\n[1,\n2]}")]
    assert decode_events(*pieces(body, 1)) == [raw("{\n[1,\n2]}")]


def test_json_lines_still_give_one_raw_event_per_line() -> None:
    objs = [{"a": 1}, {"b": "]"}, {"c": [1, 2]}]
    body = "".join(json.dumps(o) + "\r\n" for o in objs).encode()
    assert [json.loads(e.data) for e in decode_events(body)] == objs
    assert [json.loads(e.data) for e in decode_events(*pieces(body, 1))] == objs


def test_a_cut_off_element_is_dispatched_as_it_is_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'[{"a": 1},\r\n{"b": [2, "]') == [raw('{"a": 1}')]
    assert decoder.close() == [raw('{"b": [2, "]')]
    assert decoder.events == 2


def test_an_array_without_its_bracket_but_complete_elements_is_no_error() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'[{"a": 1}\r\n,\r\n{"b": 2}\r\n,\r\n') == [
        raw('{"a": 1}'),
        raw('{"b": 2}'),
    ]
    assert decoder.close() == []


def test_close_with_an_error_dispatches_no_partial_element() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'[{"a": 1}, {"b"') == [raw('{"a": 1}')]
    assert decoder.close(ConnectionError("reset")) == []


def test_many_arrays_in_one_chunk_cost_no_recursion() -> None:
    body = b"[]" * 20000 + b'[{"a": 1}]\n'
    assert decode_events(body) == [raw('{"a": 1}')]


def test_a_large_element_in_small_pieces_is_linear() -> None:
    element = b'{"text": "' + b"x]}\\\\" * (512 * 1024) + b'"}'
    body = b"[" + element + b"]"
    decoder = SSEDecoder()
    out: list[SSEEvent] = []
    start = time.perf_counter()
    for piece in pieces(body, 1024):
        out += decoder.feed(piece)
    out += decoder.close()
    assert time.perf_counter() - start < 5.0
    assert payloads(out) == [element]


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.sampled_from('ab]}[{"\\,:é🎉\u2028 \n\t')),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.sampled_from('k]}"\\é'), max_size=4), inner, max_size=4
        )
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(JSON_VALUES, max_size=6),
    st.sampled_from([None, 0, 2]),  # json.dumps indent
    st.sampled_from(["\r\n,\r\n", ",", ", ", "\n,\n", " \t,"]),
    st.booleans(),  # ensure_ascii
    st.lists(st.integers(min_value=0, max_value=100_000), max_size=30),
)
def test_element_events_are_json_dumps_of_the_elements_whatever_the_split(
    elements: list[Any], indent: int | None, separator: str, ascii_only: bool, cuts: list[int]
) -> None:
    texts = [json.dumps(e, indent=indent, ensure_ascii=ascii_only) for e in elements]
    body = ("[" + separator.join(texts) + "]").encode()
    points = [0, *sorted(c % (len(body) + 1) for c in cuts), len(body)]
    events = decode_events(*(body[a:b] for a, b in itertools.pairwise(points)))
    assert [e.event for e in events] == ["raw"] * len(texts)
    assert payloads(events) == [t.encode() for t in texts]
    assert [json.loads(e.payload) for e in events] == elements


# -- the pipeline: the array form converts as the SSE form ------------------------


@pytest.mark.parametrize("name", samples.names())
def test_the_array_form_of_every_sample_converts_as_its_sse_form(name: str) -> None:
    sse = outcome_key(run_converter(samples.read(name)))
    body = array_form(name)
    assert outcome_key(run_converter(body)) == sse
    for size in range(1, 14):
        assert outcome_key(run_converter(pieces(body, size))) == sse, size
    assert outcome_key(run_converter(pieces(body, 1))) == sse
    # compact elements on one line each, LF line ends
    compact = google_array(sample_payloads(name), "\n")
    assert outcome_key(run_converter(compact)) == sse


def fed(body: bytes) -> list[dict[str, Any]]:
    """The chunks a Converter returns for ``body`` before the end of input."""
    converter = rxgem.Converter(id_factory=lambda: "id", clock=lambda: 0)
    return [c.to_dict() for c in converter.feed(body)]


@pytest.mark.parametrize("name", samples.names())
def test_the_array_form_streams_each_element_as_its_closing_brace_arrives(name: str) -> None:
    # The bytes up to an element's closing brace give the chunks of the SSE form's
    # events up to that one, before the array (or the body) ends.
    payloads_ = sample_payloads(name)
    texts = [pretty(json.loads(p)) for p in payloads_]
    body = array_form(name)
    end = 0
    for k, text in enumerate(texts, 1):
        end = body.index(text.encode(), end) + len(text.encode())
        sse = "".join(f"data: {p}\r\n\r\n" for p in payloads_[:k]).encode()
        try:
            expected = fed(sse)
        except rxgem.RxGemError:
            break  # an error event: the test above compares the outcomes
        assert fed(body[:end]) == expected, k


@pytest.mark.parametrize("name", ["text.sse", "thinking_tools.sse", "truncated.sse"])
def test_the_array_form_through_the_rx_operator(name: str) -> None:
    assert outcome_key(run(array_form(name))) == outcome_key(run(samples.read(name)))


def good_payloads() -> list[str]:
    """The events of text.sse but its last (the finish): the good part of a stream."""
    return sample_payloads("text.sse")[:-1]


def test_an_error_element_after_good_elements_delivers_the_good_ones_first() -> None:
    good = good_payloads()
    error = json.dumps({"error": QUOTA_ERROR})
    body = google_array([*(pretty(json.loads(p)) for p in good), pretty(json.loads(error))])
    sse = "".join(f"data: {p}\r\n\r\n" for p in [*good, error]).encode()
    chunks, exc = run_converter(body)
    assert isinstance(exc, rxgem.GeminiAPIError)
    assert exc.code == 429
    assert exc.status == "RESOURCE_EXHAUSTED"
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    texts = [json.loads(p)["candidates"][0]["content"]["parts"][0]["text"] for p in good]
    assert content == "".join(texts)
    assert outcome_key((chunks, exc)) == outcome_key(run_converter(sse))
    for size in (1, 7, 64):
        assert outcome_key(run_converter(pieces(body, size))) == outcome_key((chunks, exc))
    assert outcome_key(run(body)) == outcome_key(run(sse))


def test_the_good_elements_are_returned_before_the_error_is_raised() -> None:
    good = good_payloads()
    body = google_array([*good, json.dumps({"error": QUOTA_ERROR})])
    converter = rxgem.Converter()
    chunks = converter.feed(body)  # the good elements' chunks; the error is kept
    assert chunks
    assert isinstance(converter.error, rxgem.GeminiAPIError)
    with pytest.raises(rxgem.GeminiAPIError):
        converter.close()


def test_a_one_element_error_array_is_the_api_error() -> None:
    body = google_array([pretty({"error": QUOTA_ERROR}, "\n")], "\n")
    chunks, exc = run_converter(body)
    assert chunks == []
    assert isinstance(exc, rxgem.GeminiAPIError)
    assert exc.code == 429


def test_a_cut_off_array_delivers_every_complete_element_then_malformed() -> None:
    good = good_payloads()
    whole = google_array([pretty(json.loads(p)) for p in good])
    cut = whole[: whole.rindex(b'"text"')]  # inside the last element
    last_start = whole.rindex(b"{\r\n", 0, len(cut))
    complete = google_array([pretty(json.loads(p)) for p in good[:-1]], closed=False)
    assert cut.startswith(complete)
    assert len(cut) > len(complete)
    expected_chunks, _ = run_converter(complete)
    for body in (cut, whole[: last_start + 1]):
        chunks, exc = run_converter(body)
        assert isinstance(exc, rxgem.MalformedStreamError), body[-40:]
        assert "invalid JSON" in str(exc)
        assert f"event {len(good)}" in str(exc)
        delivered = [c.to_dict() for c in chunks]
        assert delivered == [c.to_dict() for c in expected_chunks[: len(delivered)]]
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        texts = [json.loads(p)["candidates"][0]["content"]["parts"][0]["text"] for p in good]
        assert content == "".join(texts[:-1])


@pytest.mark.parametrize("name", ["text.sse", "truncated.sse", "thinking_tools.sse"])
def test_an_array_without_its_bracket_is_judged_by_the_finish_rules(name: str) -> None:
    # every element complete, the `]` never came: no error at the SSE level; the
    # outcome is the SSE form's (text.sse finishes; truncated.sse never finishes)
    body = array_form(name)
    cut = body[: body.rindex(b"]")]
    assert outcome_key(run_converter(cut)) == outcome_key(run_converter(samples.read(name)))
    cut_after_comma = cut + b",\r\n"
    sse = outcome_key(run_converter(samples.read(name)))
    assert outcome_key(run_converter(cut_after_comma)) == sse
