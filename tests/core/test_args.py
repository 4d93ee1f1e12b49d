"""The sans-IO ArgsTable: latest args, partialArgs assembly, stable snapshots."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

import rxgem
from rxgem.core import ArgsTable
from rxgem.core.gemini._models import FunctionCall
from rxgem.core.slots._json_path import parse_json_path
from rxgem.items import CallPart, SlotUpdate, Text


def part(slot: int = 0, sig: str | None = None, candidate: int = 0, **body: Any) -> CallPart:
    return CallPart(candidate, slot, msgspec.convert(body, FunctionCall), sig)


def pieces(*pairs: tuple[str, dict[str, Any]], more: bool = True) -> CallPart:
    args = [{"jsonPath": path, **value} for path, value in pairs]
    return part(partialArgs=args, willContinue=more)


@pytest.mark.parametrize(
    ("path", "keys"),
    [
        ("$", ()),
        ("$.a", ("a",)),
        ("$.a.b[0].c", ("a", "b", 0, "c")),
        ("$.recipe.ingredients[10].amount", ("recipe", "ingredients", 10, "amount")),
        ("$['a.b']", ("a.b",)),
        ('$["x"][2]', ("x", 2)),
        ("$['it\\'s']", ("it's",)),
        ("$.é", ("é",)),
    ],
)
def test_parse_json_path(path: str, keys: tuple[Any, ...]) -> None:
    assert parse_json_path(path) == keys


@pytest.mark.parametrize("path", ["a.b", "$.a[*]", "$..a", "$[?(@.x)]", "$.a["])
def test_unsupported_json_paths_are_rejected(path: str) -> None:
    with pytest.raises(ValueError, match="JSON path"):
        parse_json_path(path)


def test_latest_complete_args_win_and_identical_replays_are_swallowed() -> None:
    table = ArgsTable()
    [first] = table.feed([part(name="f", args={"q": "A"})])
    assert first == SlotUpdate(0, 0, "f", None, {"q": "A"}, None)
    assert table.feed([part(name="f", args={"q": "A"})]) == []
    [grown] = table.feed([part(name="f", args={"q": "AB"})])
    assert grown.args == {"q": "AB"}


def test_a_replay_with_equal_but_differently_typed_values_is_a_change() -> None:
    table = ArgsTable()
    table.feed([part(name="f", args={"n": 1})])
    [update] = table.feed([part(name="f", args={"n": True})])
    assert update.args == {"n": True}
    assert update.args["n"] is True


def test_signature_latest_nonempty_wins() -> None:
    table = ArgsTable()
    table.feed([part(name="f", args={}, sig="S1")])
    assert table.feed([part(name="f", args={})]) == []  # no signature: nothing changes
    [update] = table.feed([part(name="f", args={}, sig="S2")])
    assert update.signature == "S2"


def test_other_items_pass_through_in_order() -> None:
    table = ArgsTable()
    batch = table.feed([Text(0, "a"), part(name="f", args={}), Text(0, "b")])
    assert [type(i).__name__ for i in batch] == ["Text", "SlotUpdate", "Text"]


def test_partial_args_assemble_a_nested_object() -> None:
    table = ArgsTable()
    table.feed([part(name="plan", willContinue=True)])
    table.feed([pieces(("$.dest", {"stringValue": "Ky", "willContinue": True}))])
    table.feed([pieces(("$.dest", {"stringValue": "oto", "willContinue": True}))])
    table.feed([pieces(("$.dest", {"stringValue": ""}))])
    table.feed([pieces(("$.days", {"numberValue": 6}))])
    table.feed([pieces(("$.stops[1].city", {"stringValue": "Nara"}))])
    table.feed([pieces(("$.stops[0].city", {"stringValue": "Osaka"}))])
    table.feed(
        [pieces(("$.flexible", {"boolValue": False}), ("$.notes", {"nullValue": "NULL_VALUE"}))]
    )
    [last] = table.feed([pieces(("$['a.b']", {"stringValue": ""}), more=False)])
    assert last.args == {
        "dest": "Kyoto",
        "days": 6,
        "stops": [{"city": "Osaka"}, {"city": "Nara"}],
        "flexible": False,
        "notes": None,
        "a.b": "",
    }
    assert isinstance(last.args["days"], int)


def test_emitted_snapshots_are_never_mutated_later() -> None:
    table = ArgsTable()
    table.feed([part(name="s", willContinue=True)])
    [early] = table.feed([pieces(("$.a.b", {"stringValue": "x"}))])
    table.feed([pieces(("$.a.b", {"stringValue": "y"}), ("$.a.c", {"numberValue": 1}))])
    assert early.args == {"a": {"b": "x"}}


def test_string_fragments_are_written_once_the_string_is_complete() -> None:
    table = ArgsTable()
    table.feed([part(name="s", willContinue=True)])
    assert table.feed([pieces(("$.q", {"stringValue": "x", "willContinue": True}))]) == []
    assert table.feed([pieces(("$.q", {"stringValue": "y", "willContinue": True}))]) == []
    [update] = table.feed([pieces(("$.q", {"stringValue": ""}))])
    assert update.args == {"q": "xy"}
    # a later empty closing fragment of a string that is already there changes nothing
    assert table.feed([pieces(("$.q", {"stringValue": ""}))]) == []


def test_another_path_completes_the_open_string() -> None:
    table = ArgsTable()
    table.feed([part(name="s", willContinue=True)])
    table.feed([pieces(("$.a", {"stringValue": "he", "willContinue": True}))])
    [update] = table.feed([pieces(("$.b", {"numberValue": 2}))])
    assert update.args == {"a": "he", "b": 2}


def test_close_writes_a_string_left_open_at_the_end_of_the_stream() -> None:
    table = ArgsTable()
    table.feed([part(name="s", willContinue=True)])
    table.feed([pieces(("$.a", {"stringValue": "unfinish", "willContinue": True}))])
    [update] = table.close()
    assert update.args == {"a": "unfinish"}
    assert table.close() == []


def test_bad_json_path_is_malformed() -> None:
    table = ArgsTable()
    table.feed([part(name="s", willContinue=True)])
    with pytest.raises(rxgem.MalformedStreamError, match="JSON path"):
        table.feed([pieces(("$.a[*]", {"stringValue": "x"}))])
    with pytest.raises(rxgem.MalformedStreamError, match="inside the arguments"):
        table.feed([pieces(("$", {"stringValue": "x"}))])


def test_a_bad_path_of_a_streamed_string_is_malformed_at_its_first_fragment() -> None:
    table = ArgsTable()
    table.feed([part(name="s", willContinue=True)])
    with pytest.raises(rxgem.MalformedStreamError, match="JSON path"):
        table.feed([pieces(("no-dollar", {"stringValue": "x", "willContinue": True}))])


def open_strings(table: ArgsTable) -> None:
    """Slot 0 streams a string far beyond its array (it cannot be written); slot 1 a good one."""
    far = {"jsonPath": "$.a[5000]", "stringValue": "x", "willContinue": True}
    good = {"jsonPath": "$.b", "stringValue": "ok", "willContinue": True}
    table.feed([part(slot=0, name="s", willContinue=True), part(slot=1, name="t")])
    table.feed([part(slot=0, partialArgs=[far], willContinue=True)])
    table.feed([part(slot=1, partialArgs=[good], willContinue=True)])


def test_close_returns_the_strings_it_can_write_and_the_next_call_raises() -> None:
    table = ArgsTable()
    open_strings(table)
    [update] = table.close()
    assert (update.slot, update.args) == (1, {"b": "ok"})
    assert isinstance(table.error, rxgem.MalformedStreamError)
    with pytest.raises(rxgem.MalformedStreamError, match="far beyond"):
        table.close()


def test_close_with_an_error_never_raises() -> None:
    table = ArgsTable()
    open_strings(table)
    [update] = table.close(RuntimeError("upstream"))
    assert update.slot == 1
    assert table.error is None


def test_slots_are_keyed_by_candidate_and_slot() -> None:
    table = ArgsTable()
    a = table.feed([part(0, name="f", args={"x": 1}, candidate=0)])
    b = table.feed([part(0, name="f", args={"x": 1}, candidate=1)])
    assert a[0].candidate == 0
    assert b[0].candidate == 1
