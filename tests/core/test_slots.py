"""The tool-call slot rules, one test per rule, on the sans-IO SlotTable and end to end."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from pipeline_harness import check_protocol, run, sdk_accumulate

import rxgem
from rxgem.core import GenerateContentResponse, SlotTable
from rxgem.core.slots._json_growth import GROWN, SAME, args_relation, grows, grows_from, same_args
from rxgem.items import CallPart


def call(name: str | None = None, args: Any = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if name is not None:
        body["name"] = name
    if args is not None:
        body["args"] = args
    body.update({k: v for k, v in extra.items() if k != "sig"})
    part: dict[str, Any] = {"functionCall": body}
    if extra.get("sig"):
        part["thoughtSignature"] = extra["sig"]
    return part


def event(*parts: dict[str, Any], candidate: int = 0, finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"parts": list(parts), "role": "model"}, "index": candidate}
    if finish:
        cand["finishReason"] = finish
    return {"candidates": [cand], "modelVersion": "gemini-2.5-flash", "responseId": "r1"}


def slots_of(table: SlotTable, *events: dict[str, Any]) -> list[list[int]]:
    """The slot numbers assigned to the function-call parts of each event."""
    out = []
    for body in events:
        response = msgspec.convert(body, GenerateContentResponse)
        out.append([i.slot for i in table.feed(response) if isinstance(i, CallPart)])
    return out


def to_sse(*events: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\r\n\r\n" for e in events)


def final_calls(*events: dict[str, Any], **options: Any) -> list[tuple[str, dict[str, Any], str]]:
    """Run the whole pipeline and accumulate with the openai SDK: (name, args, id) per call."""
    chunks, error = run(to_sse(*events), **options)
    assert error is None, error
    check_protocol(chunks)
    names = [
        c["function"]["name"]
        for choice in rxgem.assemble(chunks)["choices"]
        for c in choice["message"].get("tool_calls") or []
    ]
    completion = sdk_accumulate(chunks, names)
    return [
        (c.function.name, json.loads(c.function.arguments), c.id)
        for c in completion.choices[0].message.tool_calls or []
    ]


STOP = event({"text": ""}, finish="STOP")


# -- grows() ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"q": "A"}, {"q": "AB"}, True),
        ({"q": "A"}, {"q": "A", "n": 1}, True),
        ({"a": {"b": [1]}}, {"a": {"b": [1, 2], "c": "x"}}, True),
        ({"a": ["x"]}, {"a": ["xy", "z"]}, True),
        ({"q": "AB"}, {"q": "A"}, False),
        ({"q": "A"}, {"q": "B"}, False),
        ({"q": "A", "n": 1}, {"q": "A"}, False),
        ({"n": 1}, {"n": True}, False),
        ({"n": 1}, {"n": 1.0}, False),
        ({"a": [1, 2]}, {"a": [1]}, False),
        ({"a": None}, {"a": None}, True),
        ({"a": "x"}, {"a": ["x"]}, False),
    ],
)
def test_grows(old: Any, new: Any, expected: bool) -> None:
    assert grows(old, new) is expected


class _Holder:
    def __init__(self, args: Any) -> None:
        self.args = args
        self.args_json: tuple[Any, bytes] | None = None


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"q": "A"}, {"q": "A"}),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),  # equal, encoded in another key order
        ({"n": 1}, {"n": 1.0}),
        ({"n": 1}, {"n": True}),
        ({"a": [1, {"b": 0}]}, {"a": [1, {"b": False}]}),
        ({"q": "A"}, {"q": "AB"}),
        ({"q": "AB"}, {"q": "A"}),
    ],
)
@pytest.mark.parametrize("pad", [0, 5000], ids=["small", "big"])  # big: bytes compared first
def test_cached_comparisons_agree_with_grows(old: Any, new: Any, pad: int) -> None:
    # same_args/grows_from/args_relation give grows()'s answer, whatever the cache holds
    if pad:
        old, new = {"pad": "x" * pad, **old}, {"pad": "x" * pad, **new}
    same = old == new and grows(old, new)
    relation = SAME if same else GROWN if grows(old, new) else 0
    assert same_args(_Holder(old), new) is same
    assert grows_from(_Holder(old), new) is grows(old, new)
    assert args_relation(_Holder(old), new) == relation
    for check in (same_args, grows_from, args_relation):
        warm = _Holder(old)
        same_args(warm, old)  # fills the cache
        assert check(warm, new) == {same_args: same, grows_from: grows(old, new)}.get(
            check, relation
        )


@pytest.mark.parametrize("rows", [50, 500], ids=["2KB", "20KB"])
def test_a_resent_args_object_is_encoded_once_per_event(
    monkeypatch: pytest.MonkeyPatch, rows: int
) -> None:
    # A big args object re-sent on every event: SlotTable compares it with the slot's,
    # encoding only the new one (the slot's encoding is kept), and tells ArgsTable
    # (CallPart.replay), which does not compare it again.
    import rxgem.core.slots._json_growth

    calls = 0
    encode = rxgem.core.slots._json_growth._ENCODE

    def counting(value: Any) -> bytes:
        nonlocal calls
        calls += 1
        return encode(value)

    monkeypatch.setattr(rxgem.core.slots._json_growth, "_ENCODE", counting)
    args = {"rows": [{"id": i, "name": f"row {i}", "ok": i % 2 == 0} for i in range(rows)]}
    resent = 10
    body = (
        "".join(
            f"data: {json.dumps(event(call('save', json.loads(json.dumps(args)))))}\n\n"
            for _ in range(resent)
        )
        + f"data: {json.dumps(STOP)}\n\n"
    )
    chunks, error = run(body.encode())
    assert error is None
    assert calls <= (resent - 1) + 2
    [tool] = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert json.loads(tool["function"]["arguments"]) == args


# -- common rules --------------------------------------------------------------------


def test_slots_are_per_candidate() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(call("f", {"x": 1}), candidate=0),
        event(call("f", {"x": 2}), candidate=1),
        event(call("g", {}), candidate=1),
    ) == [[0], [0], [1]]
    assert [s.name for s in table.slots(1)] == ["f", "g"]


def test_id_keeps_a_changed_replay_in_its_slot() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(call("w", {"city": "Paris"}, id="aaaa1111")),
        event(call("w", {"city": "London"}, id="bbbb2222")),
        event(call("w", {"city": "Paris", "unit": "C"}, id="aaaa1111")),
        event(call("w", {"city": "Rome"}, id="aaaa1111")),  # not even a growth: the id decides
    ) == [[0], [1], [0], [0]]


def test_id_calls_end_to_end_keep_gemini_ids_and_latest_args() -> None:
    calls = final_calls(
        event(call("w", {"city": "Paris"}, id="aaaa1111", sig="SIG")),
        event(call("w", {"city": "London"}, id="bbbb2222")),
        event(call("w", {"city": "Paris", "unit": "C"}, id="aaaa1111")),
        STOP,
    )
    assert calls == [
        ("w", {"city": "Paris", "unit": "C"}, "aaaa1111"),
        ("w", {"city": "London"}, "bbbb2222"),
    ]


def test_two_parts_of_one_event_are_always_different_calls() -> None:
    table = SlotTable()
    same = call("now", {})
    assert slots_of(table, event(same, same, call("now", {"tz": "x"}))) == [[0, 1, 2]]


def test_identical_replay_in_a_later_event_joins() -> None:
    assert slots_of(SlotTable(), event(call("f", {"q": "A"})), event(call("f", {"q": "A"}))) == [
        [0],
        [0],
    ]


def test_placeholder_args_are_joined_by_real_args() -> None:
    assert slots_of(SlotTable(), event(call("f", {})), event(call("f", {"ticker": "MSFT"}))) == [
        [0],
        [0],
    ]


def test_absent_args_are_joined_by_real_args() -> None:
    assert slots_of(SlotTable(), event(call("f")), event(call("f", {"ticker": "MSFT"}))) == [
        [0],
        [0],
    ]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"q": "A"}, {"q": "AB"}),
        ({"q": "A"}, {"q": "A", "limit": 5}),
        ({"f": {"a": 1}}, {"f": {"a": 1, "b": 2}}),
        ({"ids": [1]}, {"ids": [1, 2]}),
    ],
    ids=["string-extended", "more-keys", "nested-object", "array-extended"],
)
def test_grown_args_in_a_later_event_join(first: Any, second: Any) -> None:
    assert slots_of(SlotTable(), event(call("f", first)), event(call("f", second))) == [[0], [0]]
    assert final_calls(event(call("f", first)), event(call("f", second)), STOP) == [
        ("f", second, "call_id0001")
    ]


def test_parallel_same_tool_calls_across_events_stay_separate() -> None:
    """Gemini's real shape: one call per event at part 0, the signature only on the first."""
    events = [
        event(call("read", {"p": "a"}, sig="SIG")),
        event(call("read", {"p": "b"})),
        event(call("read", {"p": "c"})),
    ]
    assert slots_of(SlotTable(), *events) == [[0], [1], [2]]
    calls = final_calls(*events, STOP)
    assert [(n, a) for n, a, _ in calls] == [
        ("read", {"p": "a"}),
        ("read", {"p": "b"}),
        ("read", {"p": "c"}),
    ]
    assert len({i for _, _, i in calls}) == 3


def test_when_several_slots_qualify_the_most_recent_wins() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(call("f", {"q": "a"})),
        event(call("f", {"q": "b"})),
        event(call("f", {"q": "b"})),  # identical to slot 1 only
        event(call("f", {})),  # opens slot 2 (a shrink is not a growth of anything)
        event(call("f", {"q": "bz"})),  # qualifies for slot 1 (growth) and slot 2 ({}): slot 2
    ) == [[0], [1], [1], [2], [2]]


def test_a_different_name_never_joins() -> None:
    assert slots_of(SlotTable(), event(call("f", {})), event(call("g", {}))) == [[0], [1]]


def test_signature_is_never_part_of_identity() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(call("f", {"q": "A"}, sig="S1")),
        event(call("f", {"q": "A"})),
        event(call("f", {"q": "AB"}, sig="S2")),
    ) == [[0], [0], [0]]


def test_latest_args_and_latest_nonempty_signature_win() -> None:
    chunks, error = run(
        to_sse(
            event(call("f", {"q": "A"}, sig="S1")),
            event(call("f", {"q": "AB"})),  # no signature: S1 stays
            STOP,
        )
    )
    assert error is None
    [tool] = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert json.loads(tool["function"]["arguments"]) == {"q": "AB"}
    assert tool["extra_content"] == {"google": {"thought_signature": "S1"}}
    chunks, _ = run(
        to_sse(event(call("f", {"q": "A"}, sig="S1")), event(call("f", {"q": "A"}, sig="S2")), STOP)
    )
    [tool] = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert tool["extra_content"] == {"google": {"thought_signature": "S2"}}


# -- Vertex streamed arguments -----------------------------------------------------------


def start(name: str, sig: str | None = None) -> dict[str, Any]:
    return call(name, willContinue=True, sig=sig)


def piece(path: str, more: bool = True, **value: Any) -> dict[str, Any]:
    arg = {"jsonPath": path, **value}
    if "stringValue" in value and more:
        arg["willContinue"] = True
    body: dict[str, Any] = {"partialArgs": [arg]}
    if more:
        body["willContinue"] = True
    return {"functionCall": body}


TERMINAL = {"functionCall": {}}


def test_streamed_start_always_opens_a_new_call() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(start("s")),
        event(piece("$.id", stringValue="A")),
        event(TERMINAL),
        event(start("s")),
        event(piece("$.id", stringValue="A")),
        event(TERMINAL),
    ) == [[0], [0], [0], [1], [1], [1]]  # the terminal `{}` closes its own slot


def test_pieces_belong_to_the_call_streaming_now() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(call("other", {"k": 1})),
        event(start("s")),
        event(piece("$.a", stringValue="x")),
        event({"functionCall": {"willContinue": True}}),
        event(piece("$.b", numberValue=2)),
    ) == [[0], [1], [1], [1], [1]]


@pytest.mark.parametrize(
    "ending",
    ["terminal", "piece-without-willContinue", "next-named-call", "end-of-stream"],
)
def test_streamed_call_completes(ending: str) -> None:
    events = [event(start("s", sig="SIG")), event(piece("$.q", stringValue="he"))]
    if ending == "terminal":
        events += [event(piece("$.q", stringValue="y")), event(TERMINAL)]
    elif ending == "piece-without-willContinue":
        events += [event(piece("$.q", more=False, stringValue="y"))]
    elif ending == "next-named-call":
        events += [event(piece("$.q", stringValue="y")), event(call("s", {"q": "hey"}))]
    else:
        events += [event(piece("$.q", stringValue="y"))]
    table = SlotTable()
    slots_of(table, *events)
    first = table.slots()[0]
    assert first.complete is (ending != "end-of-stream")
    calls = final_calls(*events, STOP)
    assert calls[0][:2] == ("s", {"q": "hey"})
    # the complete call that follows in "next-named-call" is a new call, never joined
    assert len(calls) == (2 if ending == "next-named-call" else 1)


def test_complete_streamed_call_is_never_joined() -> None:
    table = SlotTable()
    assert slots_of(
        table,
        event(start("s")),
        event(piece("$.q", more=False, stringValue="x")),
        event(call("s", {"q": "x"})),  # identical args, but the streamed call is complete
        event(call("s", {"q": "x"})),  # joins the new complete call, not the streamed one
    ) == [[0], [0], [1], [1]]


def test_orphan_piece_is_malformed() -> None:
    table = SlotTable()
    with pytest.raises(rxgem.MalformedStreamError, match="no streamed call"):
        slots_of(table, event(piece("$.q", stringValue="x")))


def test_stray_terminal_is_ignored() -> None:
    assert slots_of(SlotTable(), event(TERMINAL)) == [[]]


def test_tool_indices_are_dense_in_first_sighting_order_and_ids_stable() -> None:
    chunks, error = run(
        to_sse(
            event(call("a", {"x": 1})),
            event(call("b", {"y": 1}), call("c", {})),
            event(call("a", {"x": 1})),
            STOP,
        )
    )
    assert error is None
    check_protocol(chunks)
    tools = rxgem.assemble(chunks)["choices"][0]["message"]["tool_calls"]
    assert [(t["index"], t["function"]["name"]) for t in tools] == [(0, "a"), (1, "b"), (2, "c")]
    assert [t["id"] for t in tools] == ["call_id0001", "call_id0002", "call_id0003"]


# -- the five rows of peers.md §5 through the openai SDK -----------------------------------


def test_row_mutated_args_without_id_is_one_call_with_latest_args() -> None:
    calls = final_calls(event(call("f", {"q": "A"})), event(call("f", {"q": "AB"})), STOP)
    assert [(n, a) for n, a, _ in calls] == [("f", {"q": "AB"})]


def test_row_mutated_args_with_id_is_one_call_with_latest_args() -> None:
    calls = final_calls(
        event(call("f", {"q": "A"}, id="id000001")),
        event(call("f", {"q": "XY"}, id="id000001")),
        STOP,
    )
    assert calls == [("f", {"q": "XY"}, "id000001")]


def test_row_identical_resend_is_one_call() -> None:
    calls = final_calls(event(call("f", {"q": "A"})), event(call("f", {"q": "A"})), STOP)
    assert [(n, a) for n, a, _ in calls] == [("f", {"q": "A"})]


def test_row_placeholder_then_args_is_one_call() -> None:
    calls = final_calls(event(call("f", {})), event(call("f", {"stock": "MSFT"})), STOP)
    assert [(n, a) for n, a, _ in calls] == [("f", {"stock": "MSFT"})]


# -- the other policies --------------------------------------------------------------------


def test_positional_policy_merges_parallel_calls_as_documented() -> None:
    events = [
        event(call("read", {"p": "a"}, sig="SIG")),
        event(call("read", {"p": "b"})),
        event(call("read", {"p": "c"})),
    ]
    assert slots_of(SlotTable("positional"), *events) == [[0], [1], [1]]
    calls = final_calls(*events, STOP, slot_policy="positional")
    assert [a for _, a, _ in calls] == [{"p": "a"}, {"p": "c"}]  # b is lost: the known trade-off


def test_every_part_policy_duplicates_a_resend_as_documented() -> None:
    events = [event(call("f", {"q": "A"})), event(call("f", {"q": "AB"}))]
    assert slots_of(SlotTable("every_part"), *events) == [[0], [1]]
    calls = final_calls(*events, STOP, slot_policy="every_part")
    assert [a for _, a, _ in calls] == [{"q": "A"}, {"q": "AB"}]


def test_ids_win_in_every_policy() -> None:
    events = [
        event(call("f", {"q": "A"}, id="same0001")),
        event(call("f", {"q": "B"}, id="same0001")),
    ]
    for policy in ("latest", "positional", "every_part"):
        assert slots_of(SlotTable(policy), *events) == [[0], [0]], policy


def test_custom_policy_object() -> None:
    class JoinByName:
        name = "by-name"

        def match(
            self,
            slots: Any,
            call: Any,
            *,
            part_index: int,
            signature: str | None,
            event: int,
        ) -> Any:
            return next((s for s in slots if s.name == call.name), None)

    events = [event(call("f", {"q": "A"})), event(call("f", {"q": "B"}))]
    assert slots_of(SlotTable(JoinByName()), *events) == [[0], [0]]


def test_unknown_policy_name_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown slot policy"):
        SlotTable("nope")  # type: ignore[arg-type]


@pytest.mark.parametrize("rows", [50, 500], ids=["2KB", "20KB"])
def test_an_identical_resend_keeps_the_slots_own_copy(rows: int) -> None:
    # one copy of a re-sent object stays alive, not one per stage; a grown one replaces it
    args = {"rows": [{"id": i, "name": f"row {i}"} for i in range(rows)]}
    table = SlotTable()
    decode = msgspec.json.Decoder(GenerateContentResponse).decode
    first = decode(json.dumps(event(call("save", args))))
    table.feed(first)
    kept = table.slots()[0].args
    assert kept is first.candidates[0].content.parts[0].function_call.args  # type: ignore[index,union-attr]
    again = table.feed(decode(json.dumps(event(call("save", args)))))
    assert [item.replay for item in again if isinstance(item, CallPart)] == [True]
    assert table.slots()[0].args is kept
    grown = {**args, "done": True}
    table.feed(decode(json.dumps(event(call("save", grown)))))
    assert table.slots()[0].args == grown
