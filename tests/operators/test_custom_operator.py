"""``core_operator``, public: an operator of your own from a sans-IO core, made the way
rxgem's stages are (a fresh core per subscription, flush on completion and on error,
errors naming the stage), marble-testable and usable between the pipeline's stages."""

from __future__ import annotations

from typing import Any

import pytest
import reactivex
from reactivex import operators as ops

import rxgem
from rxgem.core import Core, MalformedStreamError
from rxgem.items import Batch, Item, Text
from rxgem.operators import core_operator, pipeline_stages
from rxgem.testing import expect_marbles, run_marbles


class Upper(Core[str, str]):
    """Stateless: feed only (``error`` and ``close`` are ``Core``'s defaults)."""

    def feed(self, value: str) -> list[str]:
        return [value.upper()]


class Pairs:
    """Holds one value until the next; the last one at the end (or before an error)."""

    error: Exception | None = None

    def __init__(self, joiner: str = "") -> None:
        self.joiner = joiner
        self.held: str | None = None

    def feed(self, value: str) -> list[str]:
        if value in ("boom", b"boom"):
            raise ValueError("boom")
        if self.held is None:
            self.held = value
            return []
        pair, self.held = self.held + self.joiner + value, None
        return [pair]

    def close(self, error: Exception | None = None) -> list[str]:
        held, self.held = self.held, None
        if held is None:
            return []
        return [held + ("!" if error is not None else "")]


class DropThoughts(Core[Batch, Item]):
    def feed(self, batch: Batch) -> Batch:
        return [item for item in batch if not (isinstance(item, Text) and item.thought)]


upper = core_operator(Upper)
pairs = core_operator(Pairs)
drop_thoughts = core_operator(DropThoughts, batched=True)


def test_a_stateless_core_is_an_operator() -> None:
    output = run_marbles(upper(), "-a-b-|")
    assert output == expect_marbles("-A-B-|")


def test_the_factory_takes_the_cores_arguments_and_state_lives_per_subscription() -> None:
    operator = pairs(joiner="+")  # one operator, subscribed twice below
    first = run_marbles(operator, "-a-b-c-|")
    second = run_marbles(operator, "-d-|")
    assert first == expect_marbles("---x---(c,|)", {"x": "a+b", "c": "c"})
    assert second == expect_marbles("---(d,|)", {"d": "d"})  # nothing left over from the first


def test_an_upstream_error_flushes_what_the_core_holds_first() -> None:
    output = run_marbles(pairs(), "-a-#", error=ConnectionError("cut"))
    assert output == expect_marbles("---(h,#)", {"h": "a!"}, error=ConnectionError("cut"))


def test_a_cores_own_error_names_the_stage_after_the_flush() -> None:
    output = run_marbles(pairs(), "-a-boom-b-|", {"a": "a", "boom": "boom", "b": "b"})
    assert output == expect_marbles("---(h,#)", {"h": "a!"}, error=ValueError("boom"))
    assert output.error is not None
    assert output.error.__notes__ == ["raised by the Pairs operator"]
    assert output.source_subscriptions == [(0, 3)]  # it let go of its source


def test_the_name_given_is_the_one_in_the_note() -> None:
    named = core_operator(Pairs, name="pair_up")
    output = run_marbles(named(), "-boom-|", {"boom": "boom"})
    assert output.error is not None
    assert output.error.__notes__ == ["raised by the pair_up operator"]


def test_a_stock_stages_error_names_it_too() -> None:
    output = run_marbles(pipeline_stages()[:2], "-a-|", {"a": b"data: {not json\n\n"})
    assert isinstance(output.error, MalformedStreamError)
    assert output.error.__notes__ == ["raised by the parse operator"]


def test_a_batched_core_emits_one_batch_per_feed_and_none_when_empty() -> None:
    thought, answer = Text(0, "Hmm.", thought=True), Text(0, "Hi")
    output = run_marbles(drop_thoughts(), "-a-b-|", {"a": [thought], "b": [thought, answer]})
    assert output == expect_marbles("---b-|", {"b": [answer]})


def test_ends_early_completes_when_the_core_is_done() -> None:
    class UntilStop(Core[str, str]):
        def __init__(self) -> None:
            self.done = False

        def feed(self, value: str) -> list[str]:
            self.done = value == "stop"
            return [] if self.done else [value]

    until_stop = core_operator(UntilStop, ends_early=True)
    output = run_marbles(until_stop(), "-a-stop-b-|", {"a": "a", "stop": "stop", "b": "b"})
    assert output == expect_marbles("-a-|", {"a": "a"})
    assert output.source_subscriptions == [(0, 3)]


def test_between_the_pipelines_stages_and_on_from_body() -> None:
    stages = [operator for _, operator in pipeline_stages()]
    body = rxgem.samples.read("thinking_tools")
    operators = [*stages[:4], drop_thoughts(), *stages[4:], ops.to_list()]
    chunks = rxgem.from_body([body]).pipe(*operators).run()
    message = rxgem.assemble(chunks)["choices"][0]["message"]
    assert "reasoning_content" not in message
    assert message["tool_calls"]


def test_on_from_body_directly_a_cores_error_is_named_too() -> None:
    errors: list[Exception] = []
    source: Any = rxgem.from_body([b"a", b"boom"])
    source.pipe(pairs()).subscribe(on_error=errors.append)
    assert [type(e) for e in errors] == [ValueError]
    assert errors[0].__notes__ == ["raised by the Pairs operator"]


def test_a_core_that_cannot_be_made_is_an_error_at_subscription() -> None:
    def broken() -> Core[Any, Any]:
        raise RuntimeError("no core")

    errors: list[Exception] = []
    reactivex.of(1).pipe(core_operator(broken)()).subscribe(on_error=errors.append)
    assert [str(e) for e in errors] == ["no core"]


@pytest.mark.parametrize("make", [Upper, Pairs])
def test_the_cores_have_the_protocol(make: Any) -> None:
    core: Core[str, str] = make()
    assert core.error is None
    assert core.close() == []
