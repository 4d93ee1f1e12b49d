"""A request body's check and decoding: linear in its size, exact, and never holding the loop.

The probes are the ones a security review sent: a string that never closes, full of
escaped quotes (the check was quadratic: 1 s at 16 KB, 15 s at 64 KB), and a well-formed
32 MB body of escapes, during which ``/healthz`` stalled for seconds. The property test
holds the check and the decoding to ``json.loads`` and to limits computed by walking the
decoded value, on generated JSON with nasty strings, mutated JSON and byte soup, with the
body cut in slices as small as one byte.
"""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from server_harness import KEY, MODEL, TOKEN, serve_process
from strategies import PROPERTIES, examples

from rxgem import samples
from rxgem.server.http._body import (
    SLICE_BYTES,
    BodyError,
    check_json_limits,
    decode_json_object,
    json_object_steps,
)
from rxgem.testing import FakeGemini

AUTH = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
LIMITS: dict[str, Any] = {"max_depth": 100, "max_values": 1_000_000}


def _probe(size: int) -> bytes:
    """A string that never closes, of ``[`` then escaped quotes: the regex's worst case."""
    head = b'{"a":"' + b"[" * 200
    return head + b'\\"' * ((size - len(head)) // 2)


def _seconds(data: bytes, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        with pytest.raises(BodyError):
            decode_json_object(data, **LIMITS)
        best = min(best, time.perf_counter() - started)
    return best


def test_the_unclosed_string_of_escaped_quotes_is_checked_in_linear_time() -> None:
    """Before: 1 s at 16 KB, 15 s at 64 KB (every escaped quote rescanned the rest)."""
    small, large = _seconds(_probe(16 * 1024)), _seconds(_probe(64 * 1024))
    # linear is 4 times; quadratic was 16 (the floor keeps timer noise out)
    assert large < 8 * max(small, 0.002), (small, large)
    assert _seconds(_probe(1024 * 1024), repeat=1) < 1


def test_the_probe_is_a_400_within_a_second_at_1_mb() -> None:
    with (
        FakeGemini() as fake,
        serve_process(
            "--upstream", fake.base_url, "--client-token", TOKEN, env={"RXGEM_API_KEY": KEY}
        ) as (url, _),
    ):
        started = time.monotonic()
        response = httpx.post(
            f"{url}/v1/chat/completions", content=_probe(1024 * 1024), headers=AUTH, timeout=30
        )
        elapsed = time.monotonic() - started
        assert fake.requests == []
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the request body is not valid JSON"
    assert elapsed < 1


def _escapes_body(size: int) -> tuple[bytes, str]:
    """A well-formed chat request of ``size`` bytes whose ``user`` is ``\\"[`` repeated;
    and that field decoded. (``user`` is not sent to Gemini: what is measured is the
    server's reading, checking and decoding, not the upstream's encoding.)"""
    head = b'{"model":"' + MODEL.encode() + b'","messages":[{"role":"user","content":"Hi"}],'
    head += b'"user":"'
    tail = b'"}'
    count, dots = divmod(size - len(head) - len(tail), 3)
    return head + b'\\"[' * count + b"." * dots + tail, '"[' * count + "." * dots


def test_the_largest_body_of_escapes_is_decoded_exactly() -> None:
    body, user = _escapes_body(32 * 1024 * 1024)
    assert decode_json_object(body, **LIMITS)["user"] == user


def _healthz_waits(url: str, body: bytes) -> list[float]:
    """How long each ``/healthz`` took while ``body`` was posted (answered 200)."""
    answer: list[httpx.Response] = []

    def post() -> None:
        answer.append(
            httpx.post(f"{url}/v1/chat/completions", content=body, headers=AUTH, timeout=60)
        )

    waits: list[float] = []
    poster = threading.Thread(target=post)
    with httpx.Client(base_url=url, timeout=10) as probe:
        probe.get("/healthz")  # the connection is open before the body is sent
        poster.start()
        while poster.is_alive():
            started = time.perf_counter()
            assert probe.get("/healthz").status_code == 200
            waits.append(time.perf_counter() - started)
            time.sleep(0.002)
    poster.join()
    assert answer[0].status_code == 200, answer[0].text
    assert len(waits) > 10  # the probe did run while the body was in the server
    return waits


def _longest_healthz_waits(body: bytes) -> list[float]:
    """The longest ``/healthz`` wait while ``body`` is posted to a real server: the best
    of three attempts counts, as one attempt on a machine shared with other work may be
    descheduled (before, every attempt took seconds or hundreds of ms)."""
    with (
        FakeGemini(samples.read("text")) as fake,
        serve_process(
            "--upstream", fake.base_url, "--client-token", TOKEN, env={"RXGEM_API_KEY": KEY}
        ) as (url, _),
    ):
        longest = []
        for _ in range(3):
            longest.append(max(_healthz_waits(url, body)))
            if longest[-1] < 0.05:
                break
        assert len(fake.requests) == len(longest)
    return longest


def test_healthz_answers_within_50_ms_while_the_largest_body_is_read_and_decoded() -> None:
    """Before: a 31 MB body of ``\\"[`` held the event loop 4.5 s."""
    limit = 32 * 1024 * 1024  # the default max_request_bytes
    body, _ = _escapes_body(limit)
    assert len(body) == limit
    longest = _longest_healthz_waits(body)
    assert min(longest) < 0.05, longest


# --------------------------------------------------------------------------- many members

MOST_MEMBERS = 499_990  # with their keys and the request's own fields, max_json_values
STEP_BOUND = SLICE_BYTES + 64  # a slice, and where a string's cut may not split a character
_LOOKS = 3  # the measure, finding the members (or a long string's end), decoding a long string


def _request_with(extra: bytes) -> bytes:
    head = b'{"model":"' + MODEL.encode() + b'","messages":[{"role":"user","content":"Hi"}]'
    return head + extra + b"}"


def _many_members() -> bytes:
    """A chat request whose ``metadata`` (ignored) has half a million small members."""
    members = b",".join(b'"k%d":%d' % (i, i) for i in range(MOST_MEMBERS))
    return _request_with(b',"metadata":{' + members + b"}")


def _many_elements() -> bytes:
    """A chat request whose ``prediction`` (ignored) is an array of a million elements."""
    return _request_with(b',"prediction":[' + b",".join([b"0"] * 999_980) + b"]")


def _steps(data: bytes, **limits: Any) -> tuple[list[int], dict[str, Any]]:
    """The bytes each step of the decoding looked at, and the object decoded."""
    steps = json_object_steps(data, **(limits or LIMITS))
    looked = []
    while True:
        try:
            looked.append(next(steps))
        except StopIteration as done:
            return looked, done.value


@pytest.mark.parametrize("body", [_many_members, _many_elements], ids=["object", "array"])
def test_one_container_of_very_many_members_is_split_in_bounded_steps(body: Any) -> None:
    """Before: msgspec split the container in one call (180 ms for the object, 45 ms
    for the array: the event loop held that long). Now no step looks at more than a
    slice of the body, and every byte is looked at a bounded number of times."""
    data = body()
    looked, value = _steps(data)
    assert value == json.loads(data)
    assert max(looked) <= STEP_BOUND, max(looked)
    assert sum(looked) <= _LOOKS * len(data) + 8 * SLICE_BYTES


def test_the_largest_string_is_decoded_in_bounded_steps() -> None:
    body, user = _escapes_body(32 * 1024 * 1024)
    looked, value = _steps(body)
    assert value["user"] == user
    assert max(looked) <= STEP_BOUND, max(looked)
    assert sum(looked) <= _LOOKS * len(body) + 8 * SLICE_BYTES


@pytest.mark.parametrize("body", [_many_members, _many_elements], ids=["object", "array"])
def test_healthz_answers_within_50_ms_while_very_many_members_are_decoded(body: Any) -> None:
    longest = _longest_healthz_waits(body())
    assert min(longest) < 0.05, longest


def test_a_number_too_long_to_decode_in_one_step_is_refused() -> None:
    """A number is decoded whole, so its length is bounded (msgspec refuses integers of
    more than about 4,300 digits itself; a float's digits that far out do not count)."""
    for number, size in ((b"0." + b"1" * 400_000, SLICE_BYTES), (b"1" * 4097, 64)):
        with pytest.raises(BodyError, match="a number longer than 4096 characters"):
            decode_json_object(_request_with(b',"n":' + number), **LIMITS, slice_bytes=size)
    value = decode_json_object(_request_with(b',"n":0.' + b"1" * 4094), **LIMITS, slice_bytes=64)
    assert value["n"] == json.loads(b"0." + b"1" * 4094)


# --------------------------------------------------------------------------- the property


class _Refused(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise _Refused(name)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _Refused(text)
    return value


def _reference(data: bytes) -> Any:
    """``json.loads`` as the server's decoder reads JSON: strict UTF-8, no NaN or
    Infinity, finite numbers, no lone surrogate (``_Refused`` otherwise)."""
    try:
        text = data.decode("utf-8")
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except (ValueError, RecursionError) as exc:
        raise _Refused(str(exc)) from None
    if _has_lone_surrogate(value):
        raise _Refused("lone surrogate")
    return value


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    return False


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _count(value: Any) -> int:
    """Values, object keys counted as values."""
    if isinstance(value, dict):
        return 1 + sum(1 + _count(v) for v in value.values())
    if isinstance(value, list):
        return 1 + sum(map(_count, value))
    return 1


NASTY = st.text(
    alphabet=st.one_of(
        st.sampled_from('"\\[]{},: \t\n/u\x00\x1f\x7f\u2028é😀\ud83d\ude00'),
        st.characters(codec="utf-8"),
    ),
    max_size=12,
)
ESCAPES = st.text(alphabet='\\"\n/😀é[', max_size=40)  # escapes at every cut
SCALARS = st.one_of(
    ESCAPES,
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    NASTY,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(NASTY, inner, max_size=5)),
    max_leaves=30,
)


# containers of many small members, so that small slices cut them at every boundary
SMALL = st.one_of(
    SCALARS, st.lists(SCALARS, max_size=2), st.dictionaries(NASTY, SCALARS, max_size=2)
)
WIDE = st.one_of(
    st.lists(SMALL, min_size=8, max_size=60),
    st.dictionaries(NASTY, SMALL, min_size=8, max_size=40),
    st.lists(st.lists(SMALL, min_size=4, max_size=20), min_size=2, max_size=6),
)


@st.composite
def _documents(draw: st.DrawFn, values: st.SearchStrategy[Any] = VALUES) -> bytes:
    value = draw(st.one_of(st.dictionaries(NASTY, values, max_size=4), values))
    text = json.dumps(
        value,
        ensure_ascii=draw(st.booleans()),
        indent=draw(st.sampled_from([None, 0, 2])),
        separators=draw(st.sampled_from([None, (",", ":"), (" , ", " : ")])),
    )
    return text.encode("utf-8", "surrogatepass")


@st.composite
def _mutated(draw: st.DrawFn) -> bytes:
    """A document with a few bytes deleted, inserted or changed: near-valid JSON."""
    data = bytearray(draw(_documents(draw(st.sampled_from([VALUES, WIDE])))))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        what = draw(st.sampled_from(["delete", "insert", "replace"]))
        byte = draw(st.sampled_from(list(b'"\\[]{},:ux0 \xff\xc3')))
        if what == "delete" and at < len(data):
            del data[at]
        elif what == "insert":
            data.insert(at, byte)
        elif at < len(data):
            data[at] = byte
    return bytes(data)


SOUP = st.binary(max_size=40) | st.lists(
    st.sampled_from([b"{", b"}", b"[", b"]", b'"', b"\\", b",", b":", b"1", b" ", b"\\u", b"a"]),
    max_size=40,
).map(b"".join)
BODIES = st.one_of(_documents(), _documents(), _documents(WIDE), _mutated(), SOUP)


@settings(PROPERTIES, max_examples=examples(1500))
@given(
    data=BODIES,
    depth_off=st.integers(-2, 2),
    values_off=st.integers(-2, 2),
    slice_bytes=st.sampled_from([1, 2, 3, 7, 16, 64, 200, 1 << 18]),
)
def test_the_check_and_decoding_agree_with_json_loads_and_a_walk_of_the_value(
    data: bytes, depth_off: int, values_off: int, slice_bytes: int
) -> None:
    """The limits are drawn around the body's own depth and count, so both sides of
    each limit are held to, exactly."""
    try:
        expected = _reference(data)
    except _Refused:
        limits: dict[str, Any] = {"max_depth": 3 + depth_off, "max_values": 20 + values_off}
        with pytest.raises(BodyError):
            decode_json_object(data, **limits, slice_bytes=slice_bytes)
        return
    depth, count = _depth(expected), _count(expected)
    limits = {"max_depth": max(0, depth + depth_off), "max_values": max(0, count + values_off)}
    within = depth <= limits["max_depth"] and count <= limits["max_values"]
    if within:
        check_json_limits(data, **limits, slice_bytes=slice_bytes)
    else:
        with pytest.raises(BodyError) as refused:
            check_json_limits(data, **limits, slice_bytes=slice_bytes)
        assert refused.value.status == 400
        assert "max_json_" in refused.value.reason
    if within and isinstance(expected, dict):
        looked, value = _steps(data, **limits, slice_bytes=slice_bytes)
        assert value == expected
        assert max(looked) <= slice_bytes + 64  # a slice, or where a cut may not split
    else:
        with pytest.raises(BodyError):
            decode_json_object(data, **limits, slice_bytes=slice_bytes)
