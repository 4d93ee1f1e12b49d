"""The raw JSON readers on their own: the JSON array body and ``{...}`` blocks, at byte level."""

from __future__ import annotations

import pytest

from rxgem.core.sse._raw_json import JsonArrayReader, open_raw_block

ARRAY = b'{"a": "]}\\"[{"}\r\n,\r\n[1, {"b": [2]}]\r\n, 3.5 ,"x,]"\r\n]data: after\n\n'
ELEMENTS = [b'{"a": "]}\\"[{"}', b'[1, {"b": [2]}]', b"3.5", b'"x,]"']


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(ARRAY)])
def test_the_reader_gives_the_same_elements_and_end_whatever_the_split(size: int) -> None:
    reader = JsonArrayReader()
    elements: list[bytes] = []
    ends = []
    for start in range(0, len(ARRAY), size):
        end = reader.feed(ARRAY[start : start + size], elements)
        if end >= 0:
            ends.append(start + end)
            break
    assert elements == ELEMENTS
    assert ends == [ARRAY.index(b"]data") + 1]
    assert reader.close() is None


def test_the_reader_returns_a_cut_off_element_at_close() -> None:
    reader = JsonArrayReader()
    elements: list[bytes] = []
    assert reader.feed(b'{"a": 1}, {"b": "cut \r\n', elements) == -1
    assert elements == [b'{"a": 1}']
    assert reader.close() == b'{"b": "cut'


def test_a_line_that_is_a_whole_object_opens_no_block() -> None:
    assert open_raw_block(b'{"a": "{[", "b": [1, {}]}') is None


def test_a_block_ends_at_the_line_that_balances_it_outside_strings() -> None:
    block = open_raw_block(b'{"error": {')
    assert block is not None
    assert not block.add(b'  "message": "a } and a \\" inside",')
    assert not block.add(b'  "text": "open string')
    assert not block.add(b'  } still in it"')
    assert block.add(b"}}")
    assert block.payload() == (
        b'{"error": {\n  "message": "a } and a \\" inside",\n  "text": "open string\n'
        b'  } still in it"\n}}'
    )
