"""The sans-IO ``ChunkBuilder`` and the finish-reason and usage mappings, driven with items."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from openai.types.chat import ChatCompletionChunk as SDKChunk
from pipeline_harness import check_protocol, counter_ids, sdk_accumulate

import rxgem
from rxgem.core import ChunkBuilder
from rxgem.core.chat._mapping import map_finish_reason, map_usage
from rxgem.core.gemini._models import ModalityTokenCount, UsageMetadata
from rxgem.items import Batch, End, Meta, Text, TextSignature, ToolCall, ToolCallHeader, Usage

CLOCK = 1_700_000_000.0

LENGTH = ["MAX_TOKENS", "CONTINUATION"]
CONTENT_FILTER = [
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "MODEL_ARMOR",
    "PUP_LIMITED_DISABLED",
]
EVERYTHING_ELSE = [
    "STOP",
    "OTHER",
    "LANGUAGE",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
    "TOO_MANY_TOOL_CALLS",
]
UNKNOWN = [
    "FAKE_ENUM",
    "FINISH_REASON_UNSPECIFIED",
    "IMAGE_OTHER",
    "NO_IMAGE",
    "MALFORMED_RESPONSE",
    "MISSING_THOUGHT_SIGNATURE",
    "ESCALATION",
    "max_tokens",
    "",
]
FINISH_TABLE = (
    [(native, "length", "length") for native in LENGTH]
    + [(native, "content_filter", "content_filter") for native in CONTENT_FILTER]
    + [(native, "stop", "tool_calls") for native in EVERYTHING_ELSE + UNKNOWN]
)
BLOCK_REASONS = [
    "SAFETY",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "IMAGE_SAFETY",
    "MODEL_ARMOR",
    "JAILBREAK",
    "SOMETHING_NEW",
]
UNSPECIFIED_BLOCK = ["BLOCKED_REASON_UNSPECIFIED", "BLOCK_REASON_UNSPECIFIED"]


def builder(**options: Any) -> ChunkBuilder:
    options.setdefault("id_factory", counter_ids())
    options.setdefault("clock", lambda: CLOCK)
    return ChunkBuilder(**options)


def run(*batches: Batch, **options: Any) -> list[rxgem.ChatCompletionChunk]:
    chunk_builder = builder(**options)
    chunks = [chunk for batch in batches for chunk in chunk_builder.feed(batch)]
    chunks += chunk_builder.close()
    sdk_validate(chunks)
    return chunks


def sdk_validate(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[SDKChunk]:
    return [SDKChunk.model_validate(chunk.to_dict()) for chunk in chunks]


def choices(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[dict[str, Any]]:
    """Every chunk's single choice, as a dict (the builder puts one choice per chunk)."""
    out = []
    for chunk in chunks:
        data = chunk.to_dict()
        assert len(data["choices"]) == 1, data
        out.append(data["choices"][0])
    return out


def finishes(chunks: Sequence[rxgem.ChatCompletionChunk]) -> list[tuple[int, str, str | None]]:
    return [
        (c.index, c.finish_reason, c.native_finish_reason)
        for chunk in chunks
        for c in chunk.choices
        if c.finish_reason is not None
    ]


META = Meta(response_id="resp-1", model_version="gemini-2.5-flash")
CALL = ToolCall(candidate=0, slot=0, name="lookup", id=None, args={"q": "rx"})


# -- finish reasons ----------------------------------------------------------------------


@pytest.mark.parametrize(("native", "without_calls", "with_calls"), FINISH_TABLE)
def test_map_finish_reason_table(native: str, without_calls: str, with_calls: str) -> None:
    assert map_finish_reason(native) == without_calls
    assert map_finish_reason(native, has_calls=False) == without_calls
    assert map_finish_reason(native, has_calls=True) == with_calls


def test_map_finish_reason_without_a_native_reason() -> None:
    assert map_finish_reason(None) == "stop"
    assert map_finish_reason(None, has_calls=True) == "tool_calls"


@pytest.mark.parametrize(("native", "without_calls", "with_calls"), FINISH_TABLE)
@pytest.mark.parametrize("calls", [False, True], ids=["no-calls", "calls"])
def test_end_item_finishes_the_choice(
    native: str, without_calls: str, with_calls: str, calls: bool
) -> None:
    batch: Batch = [META, Text(candidate=0, text="hi")]
    if calls:
        batch.append(CALL)
    batch.append(End(candidate=0, reason=native, has_calls=calls))
    chunks = run(batch)
    assert finishes(chunks) == [(0, with_calls if calls else without_calls, native)]
    assert chunks[-1].choices[0].delta == rxgem.core.chat.ChoiceDelta()
    check_protocol(chunks)


@pytest.mark.parametrize("native", ["STOP", "OTHER", "FAKE_ENUM"])
def test_calls_seen_by_the_builder_make_tool_calls(native: str) -> None:
    # End.has_calls is False, but the builder itself delivered a call for this choice.
    header = ToolCallHeader(candidate=0, slot=0, name="lookup", id=None)
    assert finishes(run([META, header], [CALL, End(candidate=0, reason=native)])) == [
        (0, "tool_calls", native)
    ]
    assert finishes(run([META, header, End(candidate=0, reason=native)])) == [
        (0, "tool_calls", native)
    ]
    assert finishes(run([META, Text(candidate=0, text="x"), End(candidate=0, reason=native)])) == [
        (0, "stop", native)
    ]


def test_calls_of_one_choice_do_not_change_another() -> None:
    call_1 = ToolCall(candidate=1, slot=0, name="get_time", id=None, args={})
    chunks = run(
        [META, Text(candidate=0, text="a"), Text(candidate=1, text="b")],
        [call_1, End(candidate=0, reason="STOP"), End(candidate=1, reason="STOP")],
    )
    assert finishes(chunks) == [(0, "stop", "STOP"), (1, "tool_calls", "STOP")]
    check_protocol(chunks)


@pytest.mark.parametrize("reason", BLOCK_REASONS)
def test_blocked_prompt_is_content_filter(reason: str) -> None:
    assert map_finish_reason(reason, blocked=True) == "content_filter"
    assert map_finish_reason(reason, blocked=True, has_calls=True) == "content_filter"
    chunks = run([META, End(candidate=0, reason=reason, blocked=True)])
    assert len(chunks) == 1
    [choice] = choices(chunks)
    assert choice == {
        "index": 0,
        "delta": {"role": "assistant"},
        "finish_reason": "content_filter",
        "native_finish_reason": reason,
    }


@pytest.mark.parametrize("reason", UNSPECIFIED_BLOCK)
def test_blocked_prompt_with_unspecified_reason_is_stop(reason: str) -> None:
    assert map_finish_reason(reason, blocked=True) == "stop"
    assert finishes(run([META, End(candidate=0, reason=reason, blocked=True)])) == [
        (0, "stop", reason)
    ]


# -- usage -------------------------------------------------------------------------------


def test_map_usage_full() -> None:
    usage = map_usage(
        UsageMetadata(
            prompt_token_count=100,
            tool_use_prompt_token_count=20,
            candidates_token_count=30,
            thoughts_token_count=7,
            cached_content_token_count=64,
            total_token_count=157,
        )
    )
    assert usage.to_dict() == {
        "prompt_tokens": 120,
        "completion_tokens": 37,
        "total_tokens": 157,
        "completion_tokens_details": {"reasoning_tokens": 7},
        "prompt_tokens_details": {"cached_tokens": 64},
        # the tool-use count is folded into prompt_tokens: the snapshot itself says it apart
        "extra_content": {
            "google": {
                "usage_metadata": {
                    "promptTokenCount": 100,
                    "candidatesTokenCount": 30,
                    "totalTokenCount": 157,
                    "thoughtsTokenCount": 7,
                    "cachedContentTokenCount": 64,
                    "toolUsePromptTokenCount": 20,
                }
            }
        },
    }


def test_map_usage_audio_tokens_and_the_snapshot_when_it_has_modalities() -> None:
    details = [ModalityTokenCount("TEXT", 5), ModalityTokenCount("AUDIO", 7)]
    usage = map_usage(
        UsageMetadata(
            prompt_token_count=12,
            candidates_token_count=9,
            total_token_count=21,
            prompt_tokens_details=details,
            candidates_tokens_details=[ModalityTokenCount("AUDIO", 9)],
            traffic_type="ON_DEMAND",
        )
    ).to_dict()
    assert usage["prompt_tokens_details"] == {"audio_tokens": 7}
    assert usage["completion_tokens_details"] == {"audio_tokens": 9}
    snapshot = usage["extra_content"]["google"]["usage_metadata"]
    assert snapshot["promptTokensDetails"] == [
        {"modality": "TEXT", "tokenCount": 5},
        {"modality": "AUDIO", "tokenCount": 7},
    ]
    assert snapshot["trafficType"] == "ON_DEMAND"


def test_map_usage_details_only_when_sent() -> None:
    usage = map_usage(
        UsageMetadata(prompt_token_count=5, candidates_token_count=6, total_token_count=11)
    )
    assert usage.completion_tokens_details is None
    assert usage.prompt_tokens_details is None
    assert usage.to_dict() == {"prompt_tokens": 5, "completion_tokens": 6, "total_tokens": 11}


def test_map_usage_zero_details_are_sent() -> None:
    usage = map_usage(
        UsageMetadata(
            prompt_token_count=5,
            candidates_token_count=6,
            thoughts_token_count=0,
            cached_content_token_count=0,
            total_token_count=11,
        )
    )
    assert usage.completion_tokens_details == {"reasoning_tokens": 0}
    assert usage.prompt_tokens_details == {"cached_tokens": 0}


def test_map_usage_total_missing_is_the_sum() -> None:
    usage = map_usage(
        UsageMetadata(
            prompt_token_count=10,
            tool_use_prompt_token_count=3,
            candidates_token_count=4,
            thoughts_token_count=2,
        )
    )
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (13, 6, 19)


def test_map_usage_keeps_geminis_total() -> None:
    # Gemini's total is reported as sent, even when it is not the sum of the parts
    usage = map_usage(
        UsageMetadata(prompt_token_count=10, candidates_token_count=4, total_token_count=99)
    )
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (10, 4, 99)


def test_map_usage_prompt_only() -> None:
    usage = map_usage(UsageMetadata(prompt_token_count=11, total_token_count=11))
    assert usage.to_dict() == {"prompt_tokens": 11, "completion_tokens": 0, "total_tokens": 11}


def test_usage_chunk_comes_last_with_no_choices() -> None:
    metadata = UsageMetadata(
        prompt_token_count=9, candidates_token_count=3, thoughts_token_count=2, total_token_count=14
    )
    chunks = run(
        [META, Text(candidate=0, text="x")], [End(candidate=0, reason="STOP"), Usage(metadata)]
    )
    last = chunks[-1].to_dict()
    assert last["choices"] == []
    assert last["usage"] == {
        "prompt_tokens": 9,
        "completion_tokens": 5,
        "total_tokens": 14,
        "completion_tokens_details": {"reasoning_tokens": 2},
    }
    assert all("usage" not in chunk.to_dict() for chunk in chunks[:-1])
    sdk = sdk_validate(chunks)[-1]
    assert sdk.usage is not None
    assert sdk.usage.completion_tokens_details is not None
    assert sdk.usage.completion_tokens_details.reasoning_tokens == 2
    check_protocol(chunks)


def test_finishes_and_usage_wait_for_close_so_later_content_goes_before_them() -> None:
    # an operator before to_openai held this text until its source completed
    usage = Usage(UsageMetadata(prompt_token_count=1, total_token_count=1))
    chunk_builder = builder()
    during = chunk_builder.feed([META, Text(0, "a"), End(0, "STOP"), End(1, "MAX_TOKENS"), usage])
    during += chunk_builder.feed([Text(0, "b"), Text(1, "c"), CALL])
    assert finishes(during) == []
    assert all(chunk.usage is None for chunk in during)
    last = chunk_builder.close()
    assert finishes(last) == [(0, "tool_calls", "STOP"), (1, "length", "MAX_TOKENS")]
    assert last[-1].usage is not None
    assert chunk_builder.close() == []  # spent
    check_protocol(during + last)


def test_close_with_an_error_still_writes_the_finishes_and_usage_that_came() -> None:
    usage = Usage(UsageMetadata(prompt_token_count=1, total_token_count=1))
    chunk_builder = builder()
    chunk_builder.feed([META, Text(0, "a"), End(0, "STOP"), usage])
    last = chunk_builder.close(ValueError("cut off"))
    assert finishes(last) == [(0, "stop", "STOP")]
    assert last[-1].usage is not None


def test_include_usage_false_drops_the_usage_chunk() -> None:
    batch: Batch = [META, Text(candidate=0, text="x"), End(candidate=0, reason="STOP")]
    usage = Usage(UsageMetadata(prompt_token_count=1, total_token_count=1))
    assert len(run([*batch, usage])) == 3
    chunks = run([*batch, usage], include_usage=False)
    assert len(chunks) == 2
    assert all(chunk.usage is None and chunk.choices for chunk in chunks)


# -- choices, role, model, ids -----------------------------------------------------------


def test_choices_open_in_index_order() -> None:
    chunk_builder = builder()
    first = chunk_builder.feed([META, Text(candidate=1, text="b")])
    assert choices(first) == [
        {"index": 0, "delta": {"role": "assistant"}, "finish_reason": None},
        {"index": 1, "delta": {"role": "assistant", "content": "b"}, "finish_reason": None},
    ]
    second = chunk_builder.feed([Text(candidate=0, text="a"), Text(candidate=1, text="c")])
    assert choices(second) == [
        {"index": 0, "delta": {"content": "a"}, "finish_reason": None},
        {"index": 1, "delta": {"content": "c"}, "finish_reason": None},
    ]
    third = chunk_builder.feed([End(candidate=0, reason="STOP"), End(candidate=1, reason="STOP")])
    chunks = first + second + third
    sdk_validate(chunks)
    check_protocol(chunks)


@pytest.mark.parametrize(
    "item",
    [
        Text(candidate=2, text="late"),
        ToolCall(candidate=2, slot=0, name="f", id=None, args={}),
        ToolCallHeader(candidate=2, slot=0, name="f", id=None),
        TextSignature(candidate=2, signature="c2ln"),
        End(candidate=2, reason="STOP"),
    ],
    ids=lambda item: type(item).__name__,
)
def test_any_item_for_a_later_candidate_opens_the_earlier_choices_first(item: Any) -> None:
    chunks = run([META, item])
    found = choices(chunks)
    assert [c["index"] for c in found] == [0, 1, 2]
    assert found[0]["delta"] == {"role": "assistant"}
    assert found[1]["delta"] == {"role": "assistant"}
    assert found[2]["delta"]["role"] == "assistant"
    assert len(found[2]["delta"]) > 1 or found[2]["finish_reason"] is not None


def test_role_only_in_the_first_delta_of_a_choice() -> None:
    chunks = run(
        [META, Text(candidate=0, text="a")],
        [Text(candidate=0, text="b")],
        [CALL, TextSignature(candidate=0, signature="c2ln"), End(candidate=0, reason="STOP")],
    )
    roles = [c.choices[0].delta.role for c in chunks]
    assert roles[0] == "assistant"
    assert roles[1:] == [None] * (len(chunks) - 1)


@pytest.mark.parametrize(
    ("version", "model"),
    [
        ("models/gemini-2.5-flash-preview-05-20", "gemini-2.5-flash-preview-05-20"),
        ("gemini-2.5-flash", "gemini-2.5-flash"),
        ("gemini-3-pro-preview", "gemini-3-pro-preview"),
    ],
)
def test_model_comes_from_model_version(version: str, model: str) -> None:
    chunks = run(
        [Meta(response_id="r", model_version=version), Text(candidate=0, text="x")],
        [End(candidate=0, reason="STOP"), Usage(UsageMetadata(prompt_token_count=1))],
    )
    assert [chunk.model for chunk in chunks] == [model] * 3


def test_model_option_wins() -> None:
    chunks = run(
        [Meta(response_id="r", model_version="models/gemini-x"), Text(candidate=0, text="x")],
        [End(candidate=0, reason="STOP")],
        model="my-model",
    )
    assert {chunk.model for chunk in chunks} == {"my-model"}


def test_id_is_chatcmpl_response_id_and_created_is_read_once() -> None:
    ticks = itertools.count(1_700_000_000)
    calls: list[str] = []

    def ids() -> str:
        calls.append("x")
        return "minted"

    chunks = run(
        [META, Text(candidate=0, text="a")],
        [Text(candidate=0, text="b")],
        [End(candidate=0, reason="STOP")],
        clock=lambda: float(next(ticks)),
        id_factory=ids,
    )
    assert {chunk.id for chunk in chunks} == {"chatcmpl-resp-1"}
    assert {chunk.created for chunk in chunks} == {1_700_000_000}
    assert {chunk.object for chunk in chunks} == {"chat.completion.chunk"}
    assert calls == []


def test_id_without_response_id_is_minted_once() -> None:
    chunks = run(
        [Meta(model_version="gemini-2.5-flash"), Text(candidate=0, text="a")],
        [End(candidate=0, reason="STOP")],
    )
    assert [chunk.id for chunk in chunks] == ["chatcmpl-id0001", "chatcmpl-id0001"]


def test_a_later_meta_does_not_change_id_or_model() -> None:
    chunks = run(
        [META, Text(candidate=0, text="a")],
        [Meta(response_id="other", model_version="gemini-other"), Text(candidate=0, text="b")],
    )
    assert {(chunk.id, chunk.model) for chunk in chunks} == {
        ("chatcmpl-resp-1", "gemini-2.5-flash")
    }


def test_minted_tool_call_ids_are_stable_per_slot() -> None:
    chunk_builder = builder()
    first = chunk_builder.feed(
        [
            META,
            ToolCallHeader(candidate=0, slot=0, name="read", id=None),
            ToolCall(candidate=0, slot=0, name="read", id=None, args={"p": "a"}),
            ToolCall(candidate=0, slot=1, name="read", id=None, args={"p": "b"}),
            ToolCall(candidate=1, slot=0, name="read", id=None, args={"p": "c"}),
        ]
    )
    ids = [
        (c.index, call.index, call.id)
        for chunk in first
        for c in chunk.choices
        for call in c.delta.tool_calls or ()
    ]
    assert ids == [
        (0, 0, "call_id0001"),
        (0, 0, None),  # the arguments of an announced call carry no id
        (0, 1, "call_id0002"),
        (1, 0, "call_id0003"),
    ]
    # a slot seen again keeps its id and mints nothing; a new slot gets the next one
    again = chunk_builder.feed(
        [
            ToolCall(candidate=0, slot=1, name="read", id=None, args={"p": "b2"}),
            ToolCall(candidate=1, slot=0, name="read", id=None, args={"p": "c2"}),
            ToolCall(candidate=0, slot=2, name="read", id=None, args={"p": "d"}),
        ]
    )
    assert [chunk.choices[0].delta.tool_calls[0].id for chunk in again] == [  # type: ignore[index]
        "call_id0002",
        "call_id0003",
        "call_id0004",
    ]


def test_gemini_call_ids_are_used_and_mint_nothing() -> None:
    minted: list[str] = []

    def ids() -> str:
        minted.append("x")
        return "never"

    chunks = run(
        [
            META,
            ToolCallHeader(candidate=0, slot=0, name="get_weather", id="ttgzlpie"),
            ToolCall(candidate=0, slot=0, name="get_weather", id="ttgzlpie", args={"c": "L"}),
            ToolCall(candidate=0, slot=1, name="get_weather", id="artpia4x", args={"c": "P"}),
        ],
        id_factory=ids,
    )
    found = [call.id for c in chunks for call in c.choices[0].delta.tool_calls or ()]
    assert found == ["ttgzlpie", None, "artpia4x"]
    assert minted == []


def test_arguments_are_one_json_object_of_the_args() -> None:
    args = {"city": "São Miguel", "stops": [{"n": 1, "ok": True, "x": None}], "emoji": "☀️"}
    chunks = run([META, ToolCall(candidate=0, slot=0, name="plan", id=None, args=args)])
    [call] = chunks[-1].choices[0].delta.tool_calls or []
    assert call.function is not None
    assert call.function.arguments is not None
    assert json.loads(call.function.arguments) == args
    assert "São Miguel" in call.function.arguments  # raw UTF-8, not \\u escapes


def test_reasoning_field_options() -> None:
    batch: Batch = [
        META,
        Text(candidate=0, text="think", thought=True),
        Text(candidate=0, text="a"),
    ]
    deltas = [c.choices[0].delta for c in run(batch)]
    assert [(d.reasoning_content, d.reasoning, d.content) for d in deltas] == [
        ("think", None, None),
        (None, None, "a"),
    ]
    deltas = [c.choices[0].delta for c in run(batch, reasoning_field="reasoning")]
    assert [(d.reasoning_content, d.reasoning, d.content) for d in deltas] == [
        (None, "think", None),
        (None, None, "a"),
    ]
    deltas = [c.choices[0].delta for c in run(batch, reasoning_field=None)]
    assert [(d.role, d.reasoning_content, d.reasoning, d.content) for d in deltas] == [
        ("assistant", None, None, "a")
    ]
    with pytest.raises(ValueError, match="reasoning_field"):
        ChunkBuilder(reasoning_field="thoughts")  # type: ignore[arg-type]


def test_consecutive_texts_of_a_batch_are_one_chunk() -> None:
    chunks = run(
        [
            META,
            Text(candidate=0, text="a"),
            Text(candidate=0, text="b"),
            Text(candidate=0, text="t", thought=True),
            Text(candidate=0, text="c"),
        ]
    )
    assert [c.choices[0].delta.content for c in chunks] == ["ab", None, "c"]
    assert chunks[1].choices[0].delta.reasoning_content == "t"


# -- to_dict / to_json / SDK -------------------------------------------------------------


def rich_stream() -> list[rxgem.ChatCompletionChunk]:
    return run(
        [META, Text(candidate=0, text="**Plan** é", thought=True)],
        [ToolCallHeader(candidate=0, slot=0, name="read_file", id=None)],
        [Text(candidate=0, text="Bonne journée ☀️ 早上好"), Text(candidate=1, text="other")],
        [
            ToolCall(
                candidate=0,
                slot=0,
                name="read_file",
                id=None,
                args={"path": "a.py"},
                signature="c2lnMQ==",
            ),
            ToolCall(candidate=0, slot=1, name="search", id="g-2", args={"q": "rx"}),
            TextSignature(candidate=0, signature="c2lnMg=="),
            End(candidate=0, reason="STOP", has_calls=True),
            End(candidate=1, reason="OTHER"),
            Usage(
                UsageMetadata(
                    prompt_token_count=10,
                    candidates_token_count=5,
                    thoughts_token_count=3,
                    cached_content_token_count=4,
                    total_token_count=18,
                )
            ),
        ],
    )


def test_to_dict_omits_none_but_keeps_finish_reason_null() -> None:
    dicts = [chunk.to_dict() for chunk in rich_stream()]
    head = {
        "id": "chatcmpl-resp-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": "gemini-2.5-flash",
    }

    def chunk(choice: dict[str, Any]) -> dict[str, Any]:
        return {**head, "choices": [choice]}

    sig1 = {"google": {"thought_signature": "c2lnMQ=="}}
    sig2 = {"google": {"thought_signature": "c2lnMg=="}}
    assert dicts == [
        chunk(
            {
                "index": 0,
                "delta": {"role": "assistant", "reasoning_content": "**Plan** é"},
                "finish_reason": None,
            }
        ),
        chunk(
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_id0001",
                            "type": "function",
                            "function": {"name": "read_file", "arguments": ""},
                        }
                    ]
                },
                "finish_reason": None,
            }
        ),
        chunk({"index": 0, "delta": {"content": "Bonne journée ☀️ 早上好"}, "finish_reason": None}),
        chunk(
            {"index": 1, "delta": {"role": "assistant", "content": "other"}, "finish_reason": None}
        ),
        chunk(
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 0,
                            "function": {"arguments": '{"path":"a.py"}'},
                            "extra_content": sig1,
                        }
                    ]
                },
                "finish_reason": None,
            }
        ),
        chunk(
            {
                "index": 0,
                "delta": {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "g-2",
                            "type": "function",
                            "function": {"name": "search", "arguments": '{"q":"rx"}'},
                        }
                    ]
                },
                "finish_reason": None,
            }
        ),
        chunk({"index": 0, "delta": {"extra_content": sig2}, "finish_reason": None}),
        chunk(
            {
                "index": 0,
                "delta": {},
                "finish_reason": "tool_calls",
                "native_finish_reason": "STOP",
            }
        ),
        chunk(
            {
                "index": 1,
                "delta": {},
                "finish_reason": "stop",
                "native_finish_reason": "OTHER",
            }
        ),
        {
            **head,
            "choices": [],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 8,
                "total_tokens": 18,
                "completion_tokens_details": {"reasoning_tokens": 3},
                "prompt_tokens_details": {"cached_tokens": 4},
            },
        },
    ]
    for data in dicts:
        for choice in data["choices"]:
            assert "finish_reason" in choice


def _walk_values(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [v for item in value.values() for v in [item, *_walk_values(item)]]
    if isinstance(value, list):
        return [v for item in value for v in [item, *_walk_values(item)]]
    return []


def test_to_dict_has_no_none_except_finish_reason() -> None:
    for chunk in rich_stream():
        data = chunk.to_dict()
        nulls = [v for v in _walk_values(data) if v is None]
        assert len(nulls) == sum(1 for c in data["choices"] if c["finish_reason"] is None)


def test_to_json_is_compact_encoding_of_to_dict() -> None:
    for chunk in rich_stream():
        encoded = chunk.to_json()
        assert isinstance(encoded, bytes)
        assert encoded == msgspec.json.encode(chunk.to_dict())
        compact = json.dumps(chunk.to_dict(), separators=(",", ":"), ensure_ascii=False)
        assert encoded == compact.encode()
        assert json.loads(encoded) == chunk.to_dict()


def test_every_chunk_validates_and_accumulates_in_the_sdk() -> None:
    chunks = rich_stream()
    sdk = sdk_validate(chunks)
    assert [c.id for c in sdk] == [c.id for c in chunks]
    assert sdk[0].choices[0].delta.model_extra == {"reasoning_content": "**Plan** é"}
    check_protocol(chunks)
    final = sdk_accumulate(chunks, tools=["read_file", "search"])
    first, second = final.choices
    assert first.finish_reason == "tool_calls"
    assert first.message.content == "Bonne journée ☀️ 早上好"
    assert [
        (c.id, c.function.name, c.function.parsed_arguments) for c in first.message.tool_calls
    ] == [
        ("call_id0001", "read_file", {"path": "a.py"}),
        ("g-2", "search", {"q": "rx"}),
    ]
    assert second.finish_reason == "stop"
    assert second.message.content == "other"
    assert final.usage.total_tokens == 18


@pytest.mark.parametrize("native", LENGTH + CONTENT_FILTER + EVERYTHING_ELSE + UNKNOWN)
def test_every_finish_chunk_validates(native: str) -> None:
    chunks = run([META, CALL, End(candidate=0, reason=native, has_calls=True)])
    for chunk in chunks:
        validated = SDKChunk.model_validate(chunk.to_dict())
        assert validated.to_dict(exclude_none=False)["choices"][0]["index"] == 0
    assert sdk_validate(chunks)[-1].choices[0].finish_reason == map_finish_reason(
        native, has_calls=True
    )
