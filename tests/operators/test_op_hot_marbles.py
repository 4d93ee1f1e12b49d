"""The operators on a hot marble source: subscribed at the ``^``, they see only what
comes after it, and their output's times count from there."""

from __future__ import annotations

import rxgem
from rxgem import MalformedStreamError
from rxgem.operators import decode_sse, parse
from rxgem.testing import chunk, event, expect_marbles, finish, run_marbles, text

LOOKUP = {
    "a": event(text("Lost")),
    "b": event(text("Hi")),
    "c": event(text(" there"), finish("STOP")),
}


def test_a_late_subscriber_s_first_chunk_carries_the_role() -> None:
    output = run_marbles(rxgem.gemini_to_openai(clock=lambda: 0), "-a-^-b-c-|", LOOKUP)
    assert output == expect_marbles(
        "   ^-b-c-(f,|)",
        {
            "b": chunk("Hi", role="assistant"),
            "c": chunk(" there"),
            "f": chunk(finish="stop", native_finish="STOP"),
        },
    )
    assert output.source_subscriptions == [(0, 6)]


def test_a_hot_source_s_error_class_and_disposal_count_from_the_caret() -> None:
    stages = [("decode_sse", decode_sse()), ("parse", parse())]
    failed = run_marbles(stages, "-a-^-b-#", LOOKUP, error=MalformedStreamError)
    assert [m.time for m in failed] == [2, 4]
    assert isinstance(failed.error, MalformedStreamError)
    assert failed.source_subscriptions == [(0, 4)]
    cut = run_marbles(stages, "-a-^-b-c-|", LOOKUP, dispose_at=3)
    assert [m.time for m in cut] == [2]
    assert cut.source_subscriptions == [(0, 3)]
