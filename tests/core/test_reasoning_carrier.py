"""Thought signatures round-trip through a reasoning item's ``encrypted_content``."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rxgem.core import InvalidRequestError
from rxgem.core.responses._reasoning_carrier import (
    CARRIER_PREFIX,
    CarriedSignature,
    decode_signatures,
    encode_signatures,
)

_signatures = st.lists(
    st.builds(
        CarriedSignature,
        kind=st.sampled_from(["call", "text", "thought"]),
        call_id=st.none() | st.text(max_size=40),
        signature=st.text(max_size=200),
    ),
    max_size=8,
)


@settings(max_examples=300, derandomize=True)
@given(_signatures)
def test_signatures_round_trip(signatures: list[CarriedSignature]) -> None:
    content = encode_signatures(signatures)
    assert content.startswith(CARRIER_PREFIX)
    assert content.isascii()
    assert "=" not in content
    assert decode_signatures(content) == signatures


def test_content_rxgem_did_not_write_is_left_alone() -> None:
    assert decode_signatures("gAAAAABo-openai-encrypted") is None
    assert decode_signatures("") is None


@pytest.mark.parametrize(
    "tail", ["!!!", "e30", "W1siY2FsbCJdXQ", "W1sibm9wZSIsbnVsbCwicyJdXQ"]
)  # bad base64, {}, a short entry, an unknown kind
def test_altered_content_is_a_request_error_naming_where(tail: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        decode_signatures(CARRIER_PREFIX + tail, where="input[2].encrypted_content")
    assert caught.value.where == "input[2].encrypted_content"
