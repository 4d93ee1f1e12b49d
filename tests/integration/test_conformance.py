"""The whole pipeline on every shipped sample, judged by the real openai SDK and expected.json."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pipeline_harness import (
    check_protocol,
    expected_for,
    jsonl_to_sse,
    load_shared,
    run,
    sample_names,
    sdk_accumulate,
    sdk_validate,
)

import rxgem
from rxgem import samples

NAMES = sample_names()

# Samples whose expectation rxgem does not meet yet: known bugs, kept visible (strict, so that
# a fix shows up as XPASS and the entry is removed).
KNOWN_BUGS: dict[str, str] = {}


def _judged(names: list[str]) -> list[Any]:
    return [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[n]))
        if n in KNOWN_BUGS
        else n
        for n in names
    ]


def _tools(expected: dict[str, Any]) -> list[str]:
    """Strict tools for the SDK, unless it would raise for a length/content_filter finish."""
    finishes = {choice["finish_reason"] for choice in expected["choices"]}
    if finishes & {"length", "content_filter"}:
        return []
    return [
        call["function"]["name"] for choice in expected["choices"] for call in choice["tool_calls"]
    ]


def test_every_sample_has_an_expectation() -> None:
    assert sorted(samples.expected()) == NAMES
    assert len(NAMES) >= 16


@pytest.mark.parametrize("announce", ["first", "none"])
@pytest.mark.parametrize("name", _judged(NAMES))
def test_sample_matches_expectation_through_openai_sdk(name: str, announce: str) -> None:
    expected = expected_for(name)
    chunks, error = run(samples.read(name), announce=announce, api=expected.get("api", "gemini"))
    sdk_validate(chunks)
    check_protocol(chunks)

    if expected["error"] is None:
        assert error is None, f"unexpected error {error!r}"
    else:
        assert type(error).__name__ == expected["error"]["type"]
        if expected["error"].get("code") is not None:
            assert isinstance(error, rxgem.GeminiAPIError)
            assert error.code == expected["error"]["code"]
            assert error.status == expected["error"]["status"]

    completion = sdk_accumulate(chunks, _tools(expected))
    assert completion.model == expected["model"]
    if expected["response_id"]:
        assert completion.id == f"chatcmpl-{expected['response_id']}"
    assert len(completion.choices) == len(expected["choices"])
    for choice, want in zip(completion.choices, expected["choices"], strict=True):
        message = choice.message
        assert message.content == want["content"]
        assert getattr(message, "reasoning_content", None) == want["reasoning"]
        assert choice.finish_reason == want["finish_reason"]
        extra = (message.model_extra or {}).get("extra_content")
        google = extra["google"] if extra else {}
        assert google.get("thought_signature") == want["thought_signature"]
        assert message.refusal == want.get("refusal")
        annotations = [a.url_citation.model_dump() for a in message.annotations or []]
        assert annotations == want.get("annotations", [])
        images = [
            entry["image_url"]["url"] for entry in (message.model_extra or {}).get("images", [])
        ]
        assert images == want.get("images", [])
        audio = message.audio.data if message.audio is not None else None
        assert audio == want.get("audio")
        parts = [
            {
                "kind": next(k for k in e["part"] if k not in ("thought", "thoughtSignature")),
                "thought_signature": e["part"].get("thoughtSignature"),
            }
            for e in google.get("parts", [])
        ]
        assert parts == want.get("parts", [])
        for key in want.get("google", []):
            assert key in google, f"extra_content.google lacks {key}"
        logprobs = [
            {
                "token": entry.token,
                "logprob": entry.logprob,
                "top_logprobs": [
                    {"token": t.token, "logprob": t.logprob} for t in entry.top_logprobs
                ],
            }
            for entry in (choice.logprobs.content or [] if choice.logprobs else [])
        ]
        assert logprobs == want.get("logprobs", [])
        calls = message.tool_calls or []
        assert len(calls) == len(want["tool_calls"])
        for call, want_call in zip(calls, want["tool_calls"], strict=True):
            assert call.type == "function"
            want_arguments = json.loads(want_call["function"]["arguments"])
            assert call.function.name == want_call["function"]["name"]
            assert json.loads(call.function.arguments) == want_arguments
            if _tools(expected):  # strict tools: the SDK parsed the arguments itself
                assert call.function.parsed_arguments == want_arguments
            if want_call["id"] is not None:
                assert call.id == want_call["id"]
            else:
                assert call.id.startswith("call_")
            call_extra = (call.model_extra or {}).get("extra_content")
            call_signature = call_extra["google"].get("thought_signature") if call_extra else None
            want_extra = want_call.get("extra_content", {}).get("google", {})
            assert call_signature == want_extra.get("thought_signature")

    if expected["usage"] is None:
        assert completion.usage is None
    else:
        usage = completion.usage
        assert usage is not None
        assert usage.prompt_tokens == expected["usage"]["prompt_tokens"]
        assert usage.completion_tokens == expected["usage"]["completion_tokens"]
        assert usage.total_tokens == expected["usage"]["total_tokens"]
        reasoning = usage.completion_tokens_details
        assert (reasoning.reasoning_tokens if reasoning else None) == expected["usage"][
            "reasoning_tokens"
        ]
        cached = usage.prompt_tokens_details
        assert (cached.cached_tokens if cached else None) == expected["usage"]["cached_tokens"]


@pytest.mark.parametrize("name", NAMES)
def test_native_finish_reason_rides_along(name: str) -> None:
    expected = expected_for(name)
    chunks, _ = run(samples.read(name), api=expected.get("api", "gemini"))
    natives = {
        choice.index: choice.native_finish_reason
        for chunk in chunks
        for choice in chunk.choices
        if choice.finish_reason is not None
    }
    for index, want in enumerate(expected["choices"]):
        if want["finish_reason"] is None:
            assert index not in natives
        else:
            assert natives[index] == want["native_finish_reason"]


@pytest.mark.parametrize("name", NAMES)
def test_own_accumulator_agrees_with_openai_sdk(name: str) -> None:
    chunks, _ = run(samples.read(name), api=expected_for(name).get("api", "gemini"))
    mine = rxgem.assemble(chunks)
    sdk = sdk_accumulate(chunks)
    for choice, theirs in zip(mine["choices"], sdk.choices, strict=True):
        message = choice["message"]
        assert message.get("content") == theirs.message.content
        assert message.get("reasoning_content") == getattr(
            theirs.message, "reasoning_content", None
        )
        assert choice["finish_reason"] == theirs.finish_reason
        mine_calls = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or []
        ]
        sdk_calls = [
            (c.id, c.function.name, c.function.arguments) for c in theirs.message.tool_calls or []
        ]
        assert mine_calls == sdk_calls


@pytest.mark.parametrize("name", ["thinking_tools.sse", "text.sse", "vertex_partial_args.sse"])
def test_output_does_not_depend_on_byte_splits(name: str) -> None:
    data = samples.read(name)
    whole = [c.to_dict() for c in run(data)[0]]
    step = max(1, len(data) // 600)  # every split point of the small samples, ~600 of the big
    for cut in range(1, len(data), step):
        split = [c.to_dict() for c in run([data[:cut], data[cut:]])[0]]
        assert split == whole, f"output differs when split at byte {cut}"
    assert [c.to_dict() for c in run([bytes([b]) for b in data])[0]] == whole


def test_every_split_point_inside_utf8_sequences() -> None:
    data = samples.read("text.sse")
    inside = [i for i, b in enumerate(data) if 0x80 <= b < 0xC0]  # continuation bytes
    assert len(inside) > 10, "the text sample must contain multi-byte characters"
    whole = [c.to_dict() for c in run(data)[0]]
    for cut in inside:
        assert [c.to_dict() for c in run([data[:cut], data[cut:]])[0]] == whole


def test_text_goes_out_before_the_next_event_is_read() -> None:
    """Each event's text is emitted as soon as its bytes arrive, not at the end."""
    import reactivex
    from reactivex.subject import Subject

    data = samples.read("text.sse")
    events = [e + b"\r\n\r\n" for e in data.split(b"\r\n\r\n") if e]
    subject: Subject[bytes] = Subject()
    chunks: list[rxgem.ChatCompletionChunk] = []
    subject.pipe(rxgem.gemini_to_openai()).subscribe(chunks.append)
    contents = []
    for event in events:
        before = len(chunks)
        subject.on_next(event)
        contents.append("".join(c.choices[0].delta.content or "" for c in chunks[before:]))
    subject.on_completed()
    expected = expected_for("text.sse")["choices"][0]["content"]
    assert all(contents[:-1]), "every text event yields its text immediately"
    assert "".join(contents) == expected
    assert reactivex is not None


def _frame(payload: Any) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"


def _text_event(text: str, **candidate: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"parts": [{"text": text}]}, **candidate}]}


def _call_event(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "candidates": [{"content": {"parts": [{"functionCall": {"name": name, "args": args}}]}}]
    }


@pytest.mark.parametrize(
    ("tail", "error_type"),
    [
        (
            _frame({"error": {"code": 500, "message": "boom", "status": "INTERNAL"}}),
            "GeminiAPIError",
        ),
        (
            b'{\n  "error": {\n    "code": 503,\n    "status": "UNAVAILABLE"\n  }\n}\n',
            "GeminiAPIError",
        ),
        (b"data: {not json\r\n\r\n", "MalformedStreamError"),
        (_frame({"candidates": "wrong type"}), "MalformedStreamError"),
        (b"", "TruncatedStreamError"),
    ],
    ids=["error-event", "raw-error", "invalid-json", "wrong-shape", "truncated"],
)
def test_pending_calls_are_flushed_before_any_stream_error(tail: bytes, error_type: str) -> None:
    data = (
        _frame(_text_event("Looking it up. "))
        + _frame(_call_event("lookup", {"q": "A"}))
        + _frame(_call_event("lookup", {"q": "AB"}))
        + _frame(_call_event("fetch", {"url": "x"}))
        + tail
    )
    chunks, error = run(data)
    assert type(error).__name__ == error_type
    sdk_validate(chunks)
    check_protocol(chunks)
    assert all(choice.finish_reason is None for c in chunks for choice in c.choices)
    message = rxgem.assemble(chunks)["choices"][0]["message"]
    assert message["content"] == "Looking it up. "
    assert [
        (t["function"]["name"], json.loads(t["function"]["arguments"]))
        for t in message["tool_calls"]
    ] == [("lookup", {"q": "AB"}), ("fetch", {"url": "x"})]


def test_objects_with_only_unknown_keys_are_ignored() -> None:
    data = samples.read("text.sse")
    noisy = _frame({"someFutureField": {"x": 1}}) + data + _frame({"another": [1, 2]})
    assert [c.to_dict() for c in run(noisy)[0]] == [c.to_dict() for c in run(data)[0]]


def test_done_sentinel_ends_the_stream_and_ignores_the_rest() -> None:
    data = samples.read("text.sse")
    with_done = data + b"data: [DONE]\r\n\r\n" + _frame({"error": {"code": 500}})
    chunks, error = run(with_done)
    assert error is None
    assert [c.to_dict() for c in chunks] == [c.to_dict() for c in run(data)[0]]


def test_allow_truncated_ends_with_a_finish() -> None:
    chunks, error = run(samples.read("truncated.sse"), allow_truncated=True)
    assert error is None
    check_protocol(chunks)
    finishes = [ch.finish_reason for c in chunks for ch in c.choices if ch.finish_reason]
    assert finishes == ["tool_calls"]


def test_empty_body_is_truncated() -> None:
    chunks, error = run(b"")
    assert chunks == []
    assert isinstance(error, rxgem.TruncatedStreamError)


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", None])
def test_reasoning_field(field: str | None) -> None:
    chunks, _ = run(samples.read("thinking_tools.sse"), reasoning_field=field)
    sdk_validate(chunks)
    message = rxgem.assemble(chunks)["choices"][0]["message"]
    want = expected_for("thinking_tools.sse")["choices"][0]["reasoning"]
    for key in ("reasoning_content", "reasoning"):
        assert message.get(key) == (want if key == field else None)


# -- the recorded captures in ../shared (reference data, not shipped) ------------------
# Run only when ../shared/captures is there (conftest deselects them otherwise, and says so).


def _shared(name: str) -> tuple[list[rxgem.ChatCompletionChunk], Exception | None, Any]:
    data = jsonl_to_sse(load_shared(name))
    chunks, error = run(data)
    sdk_validate(chunks)
    check_protocol(chunks)
    names = [
        call["function"]["name"]
        for choice in rxgem.assemble(chunks)["choices"]
        for call in choice["message"].get("tool_calls") or []
    ]
    return chunks, error, sdk_accumulate(chunks, names)


def _calls(completion: Any) -> list[tuple[str, Any]]:
    return [
        (c.function.name, json.loads(c.function.arguments))
        for c in completion.choices[0].message.tool_calls or []
    ]


@pytest.mark.shared_captures
def test_shared_no_args_and_parallel_streamed_calls() -> None:
    _, error, completion = _shared("google-stream-no-args-tool-call.chunks.txt")
    assert error is None
    assert _calls(completion) == [
        ("read_theme", {}),
        ("read_screen", {"id": "A"}),
        ("read_screen", {"id": "B"}),
        ("read_screen", {"id": "C"}),
    ]
    assert completion.choices[0].finish_reason == "tool_calls"


@pytest.mark.shared_captures
def test_shared_two_sequential_streamed_calls() -> None:
    _, error, completion = _shared("google-stream-tool-call-arguments.chunks.txt")
    assert error is None
    assert _calls(completion) == [
        ("getWeather", {"location": "Boston"}),
        ("getWeather", {"location": "San Francisco"}),
    ]


@pytest.mark.shared_captures
def test_shared_nested_partial_args() -> None:
    _, error, completion = _shared("google-vertex-stream-tool-call-arguments-nested.1.chunks.txt")
    assert error is None
    [(name, args)] = _calls(completion)
    assert name == "cookRecipe"
    recipe = args["recipe"]
    assert recipe["name"] == "Lasagna"
    assert len(recipe["ingredients"]) == 10
    assert recipe["ingredients"][0] == {"amount": "16 oz", "name": "Lasagna noodles"}
    assert recipe["steps"][1] == (
        "Cook lasagna noodles according to package directions, drain and set aside."
    )
    assert recipe["steps"][4] == "In a 9x13 baking dish, spread a thin layer of meat sauce."


@pytest.mark.shared_captures
def test_shared_missing_terminal_function_call() -> None:
    _, error, completion = _shared(
        "google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt"
    )
    assert error is None
    [(name, args)] = _calls(completion)
    assert name == "writeItems"
    assert args["operations"][1] == {
        "action": "add",
        "description": "Ripe yellow banana",
        "itemid": "banana_001",
        "price": 0.3,
    }


@pytest.mark.shared_captures
@pytest.mark.parametrize(
    "name",
    [
        "google-text.chunks.txt",
        "google-reasoning.chunks.txt",
        "google-reasoning-gemini3.chunks.txt",
        "google-tool-call.chunks.txt",
        "google-tool-call-gemini3.chunks.txt",
    ],
)
def test_shared_text_and_tool_captures(name: str) -> None:
    chunks, error, completion = _shared(name)
    assert error is None
    lines = [json.loads(line) for line in load_shared(name).splitlines() if line.strip()]
    text = "".join(
        part.get("text", "")
        for line in lines
        for part in line["candidates"][0]["content"]["parts"]
        if not part.get("thought")
    )
    assert (completion.choices[0].message.content or "") == text
    calls = [
        part["functionCall"]
        for line in lines
        for part in line["candidates"][0]["content"]["parts"]
        if "functionCall" in part
    ]
    assert _calls(completion) == [(c["name"], c.get("args", {})) for c in calls]
    signatures = [
        part["thoughtSignature"]
        for line in lines
        for part in line["candidates"][0]["content"]["parts"]
        if part.get("thoughtSignature")
    ]
    wire = b"".join(chunk.to_json() for chunk in chunks)
    for signature in signatures:
        assert wire.count(signature.encode()) == 1, "each signature goes out exactly once"


@pytest.mark.shared_captures
def test_shared_jsonl_capture_decodes_without_sse_framing() -> None:
    """A JSON-lines capture (no ``data:`` framing) converts the same as its SSE form."""
    text = load_shared("google-tool-call.chunks.txt")
    framed = [c.to_dict() for c in run(jsonl_to_sse(text))[0]]
    raw = [c.to_dict() for c in run(text.encode())[0]]
    assert raw == framed
