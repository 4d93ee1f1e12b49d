"""The marble kit and ``assert_openai_stream`` of ``rxgem.testing``, used on the project itself."""

from __future__ import annotations

import json
import re
import string
import sys
import textwrap
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rxgem
import rxgem.testing
from rxgem import items, samples
from rxgem.core.gemini._models import FunctionCall
from rxgem.operators import group_by_slot, latest_args
from rxgem.testing import (
    Marble,
    api_error,
    assert_openai_stream,
    blocked,
    call,
    call_end,
    call_start,
    chunk,
    event,
    expect_marbles,
    finish,
    partial_args,
    response,
    run_marbles,
    text,
    thought,
    usage,
)
from rxgem.testing._assert import RULES, StreamRuleError
from rxgem.testing._gemini_builders import MODEL, candidate, event_json
from rxgem.testing._openai_builders import CHUNK_ID, tool_delta, usage_chunk

NAMES = samples.names()
ROOT = Path(__file__).resolve().parents[2]
SIG = "c2lnbmF0dXJl"


def pipeline(**options: Any) -> Any:
    options.setdefault("clock", lambda: 0)
    return rxgem.gemini_to_openai(**options)


def pieces_of(data: bytes, size: int) -> tuple[str, dict[str | float, Any]]:
    """A marble string and lookup feeding ``data`` in ``size``-byte pieces: ``0-1-2-…-|``."""
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    return "-".join(map(str, range(len(chunks)))) + "|", dict(enumerate(chunks))


def tool_names(expected: dict[str, Any]) -> list[str] | None:
    finishes = {choice["finish_reason"] for choice in expected["choices"]}
    if finishes & {"length", "content_filter"}:
        return None  # the SDK's get_final_completion refuses these finishes
    return [c["function"]["name"] for choice in expected["choices"] for c in choice["tool_calls"]]


# -- every shipped sample, through the kit ------------------------------------------------


@pytest.mark.parametrize("size", [61, 4096])
@pytest.mark.parametrize("name", NAMES)
def test_every_sample_passes_assert_openai_stream(name: str, size: int) -> None:
    expected = samples.expected()[name]
    source, lookup = pieces_of(samples.read(name), size)
    output = run_marbles(pipeline(api=expected.get("api", "gemini")), source, lookup)
    failed = expected["error"] is not None
    assert output.completed is not failed
    if failed:
        assert type(output.error).__name__ == expected["error"]["type"]
    result = assert_openai_stream(output.values, tools=tool_names(expected), complete=not failed)
    assert len(result["choices"]) == len(expected["choices"])
    for got, want in zip(result["choices"], expected["choices"], strict=True):
        message = got["message"]
        assert (message.get("content") or None) == want["content"]
        assert (message.get("reasoning_content") or None) == want["reasoning"]
        assert got["finish_reason"] == want["finish_reason"]
        calls = [
            (c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or ()
        ]
        assert calls == [
            (c["function"]["name"], c["function"]["arguments"]) for c in want["tool_calls"]
        ]


@pytest.mark.parametrize("policy", ["latest", "positional", "every_part"])
@pytest.mark.parametrize("name", NAMES)
def test_every_slot_policy_keeps_the_protocol(name: str, policy: str) -> None:
    source, lookup = pieces_of(samples.read(name), 512)
    output = run_marbles(pipeline(slot_policy=policy, announce="first"), source, lookup)
    assert_openai_stream(output.values, complete=output.completed)


# -- the constructors ---------------------------------------------------------------------


def test_event_is_one_sse_event_of_the_documented_shape() -> None:
    data = event(thought("hmm", sig=SIG), call("search", q="a"), finish("STOP"), usage(7, 3))
    assert data.startswith(b"data: {")
    assert data.endswith(b"}\r\n\r\n")
    assert json.loads(data[6:]) == {
        "candidates": [
            {
                "content": {
                    "parts": [
                        {"text": "hmm", "thought": True, "thoughtSignature": SIG},
                        {"functionCall": {"name": "search", "args": {"q": "a"}}},
                    ],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 3, "totalTokenCount": 10},
        "modelVersion": MODEL,
        "responseId": "test",
    }


def test_call_arguments_ids_and_no_args() -> None:
    assert call("f").json == {"functionCall": {"name": "f"}}
    assert call("f", {}).json == {"functionCall": {"name": "f", "args": {}}}
    assert call("f", {"id": 1}, id="x1", sig=SIG).json == {
        "functionCall": {"name": "f", "args": {"id": 1}, "id": "x1"},
        "thoughtSignature": SIG,
    }
    assert call("f", {"a": 1}, b=2).json["functionCall"]["args"] == {"a": 1, "b": 2}


def test_response_is_the_typed_event() -> None:
    typed = response(text("hi"), finish("MAX_TOKENS"), response_id=None, model=None)
    assert isinstance(typed, rxgem.core.GenerateContentResponse)
    assert typed.response_id is None
    assert typed.candidates is not None
    assert typed.candidates[0].finish_reason == "MAX_TOKENS"
    assert msgspec.json.decode(event(text("hi"))[6:], type=rxgem.core.GenerateContentResponse) == (
        response(text("hi"))
    )


def test_candidates_blocked_and_errors() -> None:
    body = event_json(candidate(0, text("a")), candidate(1, text("b"), finish("STOP")))
    assert [c["index"] for c in body["candidates"]] == [0, 1]
    assert body["candidates"][1]["finishReason"] == "STOP"
    assert event_json(blocked("SAFETY"), usage(3))["promptFeedback"] == {"blockReason": "SAFETY"}
    assert event_json(api_error(429, "RESOURCE_EXHAUSTED", "slow down")) == {
        "error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}
    }
    with pytest.raises(ValueError, match="nothing else"):
        event_json(api_error(), text("x"))
    with pytest.raises(ValueError, match="parts and a finish"):
        candidate(0, usage(1))


def test_vertex_partial_args_through_the_pipeline() -> None:
    lookup = {
        "s": event(call_start("plan", sig=SIG)),
        "a": event(partial_args("$.city", "Lis")),
        "b": event(partial_args("$.city", "bon")),
        "n": event(partial_args("$.days", 3)),
        "t": event(partial_args("$.ok", True), partial_args("$.note", None)),
        "e": event(call_end()),
        "z": event(finish("STOP")),
    }
    output = run_marbles(pipeline(), "s-a-b-n-t-e-z|", lookup)
    result = assert_openai_stream(output.values, tools=["plan"])
    (only,) = result["choices"][0]["message"]["tool_calls"]
    assert json.loads(only["function"]["arguments"]) == {
        "city": "Lisbon",
        "days": 3,
        "ok": True,
        "note": None,
    }
    assert only["extra_content"]["google"]["thought_signature"] == SIG
    assert partial_args("$.x", "v", more=False).json == {
        "functionCall": {"partialArgs": [{"jsonPath": "$.x", "stringValue": "v"}]}
    }
    with pytest.raises(TypeError):
        partial_args("$.x", [1])


def test_blocked_prompt_and_api_error_events() -> None:
    output = run_marbles(pipeline(), "-a|", {"a": event(blocked("SAFETY"), usage(5))})
    result = assert_openai_stream(output.values)
    assert result["choices"][0]["finish_reason"] == "content_filter"
    output = run_marbles(pipeline(), "-a-b|", {"a": event(text("hi")), "b": event(api_error(503))})
    assert output == expect_marbles(
        "-a-#",
        {"a": chunk("hi", role="assistant")},
        error=rxgem.GeminiAPIError,
    )
    assert_openai_stream(output.values, complete=False)


def test_chunk_constructors_match_what_the_pipeline_emits() -> None:
    lookup = {
        "a": event(text("Hi"), usage(4, 1)),
        "b": event(call("f", x=1, id="c1", sig=SIG)),
        "z": event(finish("STOP"), usage(4, 6)),
    }
    output = run_marbles(pipeline(), "-a-b-z|", lookup)
    assert output == expect_marbles(
        "-a-b--(c,d,e,|)",
        {
            "a": chunk("Hi", role="assistant"),
            "b": chunk(tool_calls=[tool_delta(0, id="c1", name="f")]),
            "c": chunk(tool_calls=[tool_delta(0, '{"x":1}', signature=SIG)]),
            "d": chunk(finish="tool_calls", native_finish="STOP"),
            "e": usage_chunk(4, 6),
        },
    )
    assert output.values[0].id == CHUNK_ID


# -- run_marbles and expect_marbles --------------------------------------------------------


def test_run_marbles_on_a_middle_operator() -> None:
    lookup = {
        "a": response(call("read", p="a")),
        "b": response(call("read", p="b")),
        "c": response(call("read", p="b")),  # a replay: nothing changes
    }
    output = run_marbles(
        [("group_by_slot", group_by_slot()), ("latest_args", latest_args())], "-a-b-c-|", lookup
    )
    meta = items.Meta("test", MODEL)
    assert output == expect_marbles(
        "-a-b---|",
        {
            "a": [meta, items.SlotUpdate(0, 0, "read", None, {"p": "a"})],
            "b": [items.SlotUpdate(0, 1, "read", None, {"p": "b"})],
        },
    )  # the replay changes nothing: latest_args emits nothing for it
    assert output.recorder.stages == ["source", "group_by_slot", "latest_args"]
    slots = [i.slot for batch in output.recorder.values("group_by_slot") for i in batch[-1:]]
    assert slots == [0, 1, 1]
    assert "latest_args" in str(output.diagram())


def test_errors_compare_by_class_and_arguments() -> None:
    boom = ValueError("boom")
    output = run_marbles(group_by_slot(), "-#", error=boom)
    assert output == [Marble(1, "error", ValueError("boom"))]
    assert output == [Marble(1, "error", ValueError)]
    assert output != [Marble(1, "error", ValueError("other"))]
    assert output != [Marble(1, "error", KeyError("boom"))]
    assert output.error is boom
    assert not output.completed
    assert expect_marbles("-#", error=ValueError) == output


def test_malformed_input_errors_with_its_class() -> None:
    output = run_marbles(pipeline(), "-a-|", {"a": b"data: {nope\r\n\r\n"})
    assert output == expect_marbles("-#", error=rxgem.MalformedStreamError)


def test_dispose_at_and_groups() -> None:
    lookup = {"a": event(text("a")), "b": event(text("b")), "c": event(text("c"))}
    output = run_marbles(pipeline(), "-a-b-c-|", lookup, dispose_at=4)
    assert [r.time for r in output] == [1, 3]
    with pytest.raises(KeyError, match="adjacent letters"):
        run_marbles(pipeline(), "-ab-|", lookup)
    assert expect_marbles("-(a,b)-|", {"a": 1, "b": 2}) == [
        Marble(1, "next", 1),
        Marble(1, "next", 2),
        Marble(7, "completed"),  # a group takes its length in ticks
    ]


def test_source_subscriptions_show_when_the_operator_lets_go() -> None:
    lookup = {"a": event(text("a")), "b": event(text("b")), "d": b"data: [DONE]\n\n"}
    assert run_marbles(pipeline(), "-a-b-|", lookup).source_subscriptions == [(0, 5)]
    assert run_marbles(pipeline(), "-a-b-|", lookup, dispose_at=2).source_subscriptions == [(0, 2)]
    # `[DONE]` completes the pipeline and disposes of the source at once
    assert run_marbles(pipeline(), "-a-d-b-|", lookup).source_subscriptions == [(0, 3)]


# -- assert_openai_stream: every rule, broken on purpose ----------------------------------


def good_stream() -> list[Any]:
    return [
        chunk("Hi", role="assistant"),
        chunk(tool_calls=[tool_delta(0, id="call_1", name="f")]),
        chunk(tool_calls=[tool_delta(0, '{"x":1}')]),
        chunk(tool_calls=[tool_delta(1, '{"y":2}', id="call_2", name="g")]),
        chunk(finish="tool_calls"),
        usage_chunk(3, 4),
    ]


def test_a_good_stream_passes_and_is_assembled() -> None:
    result = assert_openai_stream(good_stream(), tools=["f", "g"])
    message = result["choices"][0]["message"]
    assert message["content"] == "Hi"
    assert [c["function"]["arguments"] for c in message["tool_calls"]] == ['{"x":1}', '{"y":2}']
    assert result["usage"]["total_tokens"] == 7
    assert assert_openai_stream([c.to_dict() for c in good_stream()]) == result


def broken(rule: str) -> list[Any]:
    """A hand-made stream that breaks exactly ``rule``."""
    s = good_stream()
    if rule == "role-once":
        s[2] = chunk(role="assistant", tool_calls=[tool_delta(0, '{"x":1}')])
    elif rule == "role-first":
        s[0] = chunk("Hi")
    elif rule == "tool-index-dense":
        s[3] = chunk(tool_calls=[tool_delta(2, '{"y":2}', id="call_2", name="g")])
    elif rule == "tool-index-reopened":
        s.insert(4, chunk(tool_calls=[tool_delta(0, "")]))
    elif rule == "tool-header-once":
        s[2] = chunk(tool_calls=[tool_delta(0, '{"x":1}', id="call_1", name="f")])
    elif rule == "tool-header-first":
        s[1] = chunk(tool_calls=[tool_delta(0, "")])
    elif rule == "tool-arguments-json":
        s[2] = chunk(tool_calls=[tool_delta(0, '{"x":1}{"x":2}')])
    elif rule == "tool-name-known":
        s[1] = chunk(tool_calls=[tool_delta(0, id="call_1", name="nope")])
    elif rule == "finish-once":
        s.insert(5, chunk(finish="tool_calls"))
    elif rule == "after-finish":
        s.insert(5, chunk("more"))
    elif rule == "finish-value":
        s[4] = chunk(finish="done")  # type: ignore[arg-type]
    elif rule == "finish-missing":
        del s[4]
    elif rule == "finish-tool-calls":
        s[4] = chunk(finish="stop")
    elif rule == "usage-last":
        s.insert(4, s.pop())
    elif rule == "usage-shape":
        s[5] = s[5].to_dict() | {"choices": [chunk().to_dict()["choices"][0]]}
    elif rule == "constant-fields":
        s[2] = chunk(tool_calls=[tool_delta(0, '{"x":1}')], model="other")
    elif rule == "object":
        s[0] = s[0].to_dict() | {"object": "chat.completion"}
    elif rule == "choice-order":
        s.insert(1, chunk("x", role="assistant", choice=2))
    elif rule == "signature-once":
        s[1] = chunk(tool_calls=[tool_delta(0, id="call_1", name="f", signature=SIG)])
        s[2] = chunk(tool_calls=[tool_delta(0, '{"x":1}', signature=SIG)])
    elif rule == "chunk-shape":
        s[0] = s[0].to_dict() | {"choices": [{"index": 0}]}
    else:
        raise AssertionError(rule)
    return s


RULE_AT = {  # the chunk each broken stream is reported at (None: the stream as a whole)
    "role-once": 2,
    "role-first": 0,
    "tool-index-dense": 3,
    "tool-index-reopened": 4,
    "tool-header-once": 2,
    "tool-header-first": 1,
    "tool-arguments-json": None,
    "tool-name-known": 1,
    "finish-once": 5,
    "after-finish": 5,
    "finish-value": 4,
    "finish-missing": None,
    "finish-tool-calls": 4,
    "usage-last": 5,
    "usage-shape": 5,
    "constant-fields": 2,
    "object": 0,
    "choice-order": 1,
    "signature-once": 2,
    "chunk-shape": 0,
}


@pytest.mark.parametrize("rule", sorted(RULE_AT))
def test_each_broken_rule_is_named(rule: str) -> None:
    with pytest.raises(StreamRuleError) as caught:
        assert_openai_stream(broken(rule), tools=["f", "g"])
    error = caught.value
    assert isinstance(error, AssertionError)
    assert error.rule == rule
    assert error.index == RULE_AT[rule]
    assert repr(rule) in str(error)
    assert RULES[rule] in str(error)
    where = f"chunks[{RULE_AT[rule]}]" if RULE_AT[rule] is not None else "the stream"
    assert where in str(error)


def test_not_empty_and_incomplete_streams() -> None:
    with pytest.raises(StreamRuleError, match="not-empty"):
        assert_openai_stream([])
    assert assert_openai_stream([], complete=False)["choices"] == []
    unfinished = good_stream()[:4]
    with pytest.raises(StreamRuleError, match="finish-missing"):
        assert_openai_stream(unfinished)
    assert_openai_stream(unfinished, complete=False)


def test_a_usage_chunk_alone_is_not_a_complete_stream() -> None:
    with pytest.raises(StreamRuleError, match="not-empty"):
        assert_openai_stream([usage_chunk(1, 2)])


def test_without_the_openai_sdk_the_rules_still_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai.lib.streaming.chat", None)  # import fails
    assert assert_openai_stream(good_stream(), tools=["f", "g"])["choices"][0]["message"]
    with pytest.raises(StreamRuleError, match="role-once"):
        assert_openai_stream(broken("role-once"))


def test_openai_sdk_chunks_are_accepted() -> None:
    from openai.types.chat import ChatCompletionChunk as SDKChunk

    sdk_chunks = [SDKChunk.model_validate(c.to_dict()) for c in good_stream()]
    assert assert_openai_stream(sdk_chunks) == assert_openai_stream(good_stream())


def test_tools_given_as_openai_definitions() -> None:
    tools = [{"type": "function", "function": {"name": name}} for name in ("f", "g")]
    assert_openai_stream(good_stream(), tools=tools)


def test_rules_are_documented() -> None:
    assert set(RULE_AT) | {"not-empty", "sdk-validate", "sdk-accumulate", "sdk-agrees"} == set(
        RULES
    )


# -- properties: any stream made of the constructors keeps the protocol --------------------

NAMES_ = st.sampled_from(["read", "search", "f"])
ARGS = st.dictionaries(st.sampled_from(["q", "p", "n"]), st.text("ab", max_size=3), max_size=2)
PARTS = st.one_of(
    st.builds(text, st.text("xyz", max_size=3)),
    st.builds(thought, st.text("xyz", min_size=1, max_size=3)),
    st.builds(lambda n, a, s: call(n, a, sig=s), NAMES_, ARGS, st.sampled_from([None, SIG])),
)
EVENT = st.tuples(
    st.lists(PARTS, max_size=3),
    st.sampled_from([None, None, "STOP", "MAX_TOKENS", "SAFETY"]),
    st.booleans(),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(EVENT, min_size=1, max_size=6),
    policy=st.sampled_from(["latest", "positional", "every_part"]),
    announce=st.sampled_from(["first", "none"]),
)
def test_any_stream_of_constructed_events_keeps_the_protocol(
    events: list[tuple[list[Any], str | None, bool]], policy: str, announce: str
) -> None:
    lookup: dict[str | float, Any] = {}
    marbles = ""
    for key, (parts, reason, with_usage) in zip(string.ascii_letters, events, strict=False):
        pieces = list(parts)
        if reason is not None:
            pieces.append(finish(reason))
        if with_usage:
            pieces.append(usage(5, 3))
        lookup[key] = event(*pieces)
        marbles += f"-{key}"
    output = run_marbles(pipeline(slot_policy=policy, announce=announce), marbles + "|", lookup)
    finished = any(reason is not None for _parts, reason, _u in events)
    assert_openai_stream(output.values, complete=finished and output.completed)


def test_run_marbles_feeds_typed_responses_too() -> None:
    output = run_marbles(group_by_slot(), "-a|", {"a": response(call("f", x=1))})
    assert output.values == [
        [items.Meta("test", MODEL), items.CallPart(0, 0, FunctionCall("f", {"x": 1}))]
    ]


def test_the_testing_api_is_exactly_this() -> None:
    assert set(rxgem.testing.__all__) == {
        *("FakeGemini", "FakeResponse", "ReceivedRequest", "SCENARIOS", "schema_value"),
        *("FakeInteraction", "text_step", "thought_step", "call_step", "interaction_stream"),
        *("run_marbles", "expect_marbles", "cassette_marbles"),
        *("event", "response", "text", "thought", "call", "call_start", "partial_args"),
        *("call_end", "finish", "usage", "blocked", "api_error", "chunk"),
        *("assert_openai_stream", "gemini_request_problems", "check_interaction_body"),
    }
    for name in rxgem.testing.__all__:
        value = getattr(rxgem.testing, name)
        if callable(value):
            assert value.__doc__, name


# -- the documented examples --------------------------------------------------------------


def run_example_tests(source: str, where: str) -> None:
    namespace: dict[str, Any] = {"__name__": "example"}
    exec(compile(source, where, "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    assert tests, f"{where} defines no test"
    for test in tests:
        test()


def test_the_package_docstring_example_passes() -> None:
    doc = rxgem.testing.__doc__ or ""
    example = doc.split("Example (a complete pytest test of the marble kit)::\n", 1)[1]
    example = textwrap.dedent(example.split("\nThe fake server:", 1)[0])
    run_example_tests(example, "rxgem.testing docstring")


def test_the_readme_example_tests_pass() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.DOTALL)
    kit = [block for block in blocks if "run_marbles" in block and "assert_openai_stream" in block]
    assert kit, "README shows no example test that uses rxgem.testing"
    for block in kit:
        run_example_tests(block, "README.md")


# -- found with the kit ---------------------------------------------------------------------


def test_an_opened_choice_zero_is_finished_when_only_candidate_one_speaks() -> None:
    output = run_marbles(pipeline(), "-0|", {0: event(candidate(1, text("hi"), finish("STOP")))})
    assert output.completed
    assert_openai_stream(output.values)


def test_allow_truncated_without_any_candidate_still_ends_with_a_finish() -> None:
    output = run_marbles(pipeline(allow_truncated=True), "-0|", {0: event(usage(5, 3))})
    assert output.completed
    assert_openai_stream(output.values)


def test_rich_part_builders_make_what_gemini_sends() -> None:
    from rxgem.testing._gemini_builders import candidate_fields, code, code_result, file, media

    grounding = {
        "groundingChunks": [{"web": {"uri": "https://rx.example", "title": "rx"}}],
        "groundingSupports": [
            {"segment": {"endIndex": 4, "text": "Done"}, "groundingChunkIndices": [0]}
        ],
    }
    body = (
        event(code("print(1)", sig="S1"), code_result("1\n"))
        + event(media("image/png", b"\x89PNG"), file("gs://b/x.png", "image/png"))
        + event(text("Done"), candidate_fields(groundingMetadata=grounding), finish("STOP"))
    )
    chunks = list(rxgem.Converter().iterate([body]))
    result = assert_openai_stream(chunks)
    message = result["choices"][0]["message"]
    entries = message["extra_content"]["google"]["parts"]
    assert [next(iter(e["part"])) for e in entries] == [
        "executableCode",
        "codeExecutionResult",
        "inlineData",
        "fileData",
    ]
    assert entries[0]["part"]["thoughtSignature"] == "S1"
    assert [i["image_url"]["url"] for i in message["images"]] == [
        "data:image/png;base64,iVBORw==",
        "gs://b/x.png",
    ]
    assert message["annotations"][0]["url_citation"]["url"] == "https://rx.example"
