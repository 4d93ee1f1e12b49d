"""Gemini Code Assist's envelope: ``{"response": {...}, "traceId": "..."}`` per event.

The endpoint gemini-cli's Google sign-in uses (``cloudcode-pa.googleapis.com``,
``v1internal:streamGenerateContent``) wraps each ``GenerateContentResponse``. The
parser unwraps an object whose only known key is ``response`` holding an object.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipeline_harness import run, run_converter, run_stages
from test_gemini_enums import numbered

import rxgem
from rxgem import samples
from rxgem.operators import parse
from rxgem.testing import call, finish, text, usage
from rxgem.testing._gemini_builders import event_json

TRACE = "a1b2c3d4e5f6"


def wrap(value: Any) -> Any:
    return {"response": value, "traceId": TRACE}


def body_of(values: list[Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(v).encode() + b"\r\n\r\n" for v in values)


def sample_values(name: str) -> list[Any]:
    """The JSON values of a sample's events (events that are not JSON are left out)."""
    decoder = rxgem.core.SSEDecoder()
    out = []
    for ev in decoder.feed(samples.read(name)) + decoder.close():
        try:
            out.append(json.loads(ev.data))
        except ValueError:
            continue
    return out


def _feed(
    parser: rxgem.core.ResponseParser, value: Any
) -> list[rxgem.core.GenerateContentResponse]:
    return parser.feed(rxgem.core.SSEEvent(json.dumps(value)))


EVENT = event_json(text("hi"), finish("STOP"), usage(3, 1))


def test_an_envelope_is_unwrapped_and_its_trace_id_dropped() -> None:
    parser = rxgem.core.ResponseParser()
    [plain] = _feed(rxgem.core.ResponseParser(), EVENT)
    assert _feed(parser, wrap(EVENT)) == [plain]
    assert _feed(parser, wrap(EVENT)) == [plain]  # the next ones straight away
    assert TRACE not in repr(plain)


@pytest.mark.parametrize("name", samples.names())
@pytest.mark.parametrize("which", ["every", "some"])
def test_a_wrapped_sample_converts_as_the_sample(name: str, which: str) -> None:
    values = sample_values(name)
    wrapped = [
        wrap(v) if which == "every" or i % 2 == 1 else v
        for i, v in enumerate(values)
        if not isinstance(v, list)
    ]
    plain = [v for v in values if not isinstance(v, list)]
    expected = run_converter(body_of(plain))
    for runner in (run_converter, run, run_stages):
        chunks, error = runner(body_of(wrapped))
        assert chunks == expected[0]
        assert type(error) is type(expected[1])


@pytest.mark.parametrize("api", ["gemini", "vertex"])
@pytest.mark.parametrize("name", ["thinking_tools", "safety", "prompt_blocked", "max_tokens"])
def test_a_wrapped_sample_with_numbered_enums(api: str, name: str) -> None:
    values = sample_values(name)
    expected = run_converter(body_of(values))
    wrapped = [wrap(numbered(v, api)) for v in values]
    chunks, error = run_converter(body_of(wrapped), api=api)
    assert chunks == expected[0]
    assert type(error) is type(expected[1])


def test_before_the_fix_this_stream_had_no_response() -> None:
    body = body_of([wrap(event_json(call("f", a=1))), wrap(event_json(finish("STOP")))])
    chunks, error = run_converter(body)
    assert error is None
    result = rxgem.assemble(chunks)
    assert result["choices"][0]["finish_reason"] == "tool_calls"
    assert result["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"a":1}'


QUOTA = {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}


@pytest.mark.parametrize(
    "stream",
    [
        [wrap({"error": QUOTA})],
        [wrap(EVENT), {"error": QUOTA}],
        [wrap(EVENT), wrap({"error": QUOTA})],
        [[wrap(EVENT), wrap({"error": QUOTA})]],
    ],
)
def test_an_error_inside_or_beside_envelopes_is_an_api_error(stream: list[Any]) -> None:
    parser = rxgem.core.ResponseParser()
    for value in stream[:-1]:
        _feed(parser, value)
    with pytest.raises(rxgem.GeminiAPIError) as caught:
        _feed(parser, stream[-1])
    assert (caught.value.code, caught.value.status, caught.value.event) == (
        429,
        "RESOURCE_EXHAUSTED",
        len(stream),
    )


@pytest.mark.parametrize(
    "value",
    [
        {"response": "x", "traceId": TRACE},
        {"response": [EVENT], "traceId": TRACE},
        {"response": None},
        {"traceId": TRACE},
        {},
    ],
)
def test_not_an_envelope_is_an_empty_response_as_before(value: Any) -> None:
    assert _feed(rxgem.core.ResponseParser(), value) == [rxgem.core.GenerateContentResponse()]


def test_a_known_key_beside_response_means_it_is_not_an_envelope() -> None:
    value = {"response": {"modelVersion": "inner"}, "modelVersion": "outer"}
    [response] = _feed(rxgem.core.ResponseParser(), value)
    assert response.model_version == "outer"


def test_a_plain_event_after_envelopes_still_reads() -> None:
    parser = rxgem.core.ResponseParser()
    _feed(parser, wrap(EVENT))
    [response] = _feed(parser, {"modelVersion": "m", "candidates": []})
    assert response.model_version == "m"
    assert _feed(parser, {}) == [rxgem.core.GenerateContentResponse()]


def test_a_bad_envelope_is_malformed() -> None:
    parser = rxgem.core.ResponseParser()
    _feed(parser, wrap(EVENT))
    with pytest.raises(rxgem.MalformedStreamError) as caught:
        _feed(parser, wrap({"candidates": "x"}))
    assert caught.value.event == 2
    assert "candidates" in caught.value.reason


def test_an_array_of_envelopes() -> None:
    parser = rxgem.core.ResponseParser()
    [plain] = _feed(rxgem.core.ResponseParser(), EVENT)
    assert _feed(parser, [wrap(EVENT), EVENT, wrap(EVENT)]) == [plain, plain, plain]


def test_envelopes_with_invalid_utf8() -> None:
    def broken(value: Any) -> bytes:
        return json.dumps(value).encode().replace(b"\\u00e9", b"\xff")

    event = event_json(text("caf\u00e9"))
    [plain] = rxgem.core.ResponseParser().feed(rxgem.core.SSEEvent(broken(event)))
    parser = rxgem.core.ResponseParser()
    for _ in range(2):  # the first finds the envelope, the second is read as one
        [response] = parser.feed(rxgem.core.SSEEvent(broken(wrap(event))))
        assert response == plain
        assert response.candidates[0].content.parts[0].text == "caf\ufffd"


def test_the_parse_operator_unwraps() -> None:
    import reactivex

    events = [rxgem.core.SSEEvent(json.dumps(wrap(EVENT))) for _ in range(2)]
    out: list[rxgem.core.GenerateContentResponse] = []
    reactivex.from_iterable(events).pipe(parse(api="vertex")).subscribe(out.append)
    assert len(out) == 2
    assert out[0].candidates is not None
