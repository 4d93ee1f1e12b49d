"""A body that is not an event stream at all gets a MalformedStreamError naming its first line."""

from __future__ import annotations

import pytest
from pipeline_harness import run
from reactivex.testing import ReactiveTest
from reactivex.testing.marbles import marbles_testing

import rxgem
from rxgem.operators import decode_sse

PAGE = b"<html>\r\n<body><h1>502 Bad Gateway</h1></body>\r\n</html>\r\n"


def test_decoder_remembers_the_first_line_that_is_not_sse() -> None:
    decoder = rxgem.core.SSEDecoder()
    assert decoder.feed(b": comment\nevent: x\nid: 7\nretry: 10\n") == []
    assert decoder.ignored_line is None  # all of those are SSE
    decoder.feed(PAGE)
    assert decoder.ignored_line == "<html>"


def test_html_page_is_malformed_not_truncated() -> None:
    chunks, error = run(PAGE)
    assert chunks == []
    assert isinstance(error, rxgem.MalformedStreamError)
    assert "not a Server-Sent Events stream" in str(error)
    assert "<html>" in error.snippet


@pytest.mark.parametrize("body", [b"", b": keep-alive\n\n: again\n\n"])
def test_empty_or_comment_only_body_is_truncated(body: bytes) -> None:
    _, error = run(body)
    assert isinstance(error, rxgem.TruncatedStreamError)


def test_ignored_lines_beside_real_events_change_nothing() -> None:
    data = rxgem.samples.read("text")
    chunks, error = run(b"x-proxy-note\n" + data)
    assert error is None
    assert [c.to_dict() for c in chunks] == [c.to_dict() for c in run(data)[0]]


def test_decode_sse_ends_with_the_error_at_completion() -> None:
    with marbles_testing() as (start, cold, _hot, _exp):
        results = start(cold("-a-|", {"a": PAGE}).pipe(decode_sse()))
    assert len(results) == 1
    assert results[0].time == 203
    expected = ReactiveTest.on_error(203, lambda e: isinstance(e, rxgem.MalformedStreamError))
    assert [expected] == results


def test_close_judges_the_body_and_flush_is_gone() -> None:
    assert not hasattr(rxgem.core.SSEDecoder, "flush")
    strict = rxgem.core.SSEDecoder()
    strict.feed(PAGE)
    with pytest.raises(rxgem.MalformedStreamError, match="not a Server-Sent Events stream"):
        strict.close()
