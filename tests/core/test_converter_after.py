"""Cores of your own inside a Converter (``after={stage: Core}``): the chunks of the Rx
pipeline with the same core's operator at the same place, and the Converter's error rule."""

from __future__ import annotations

import re
from typing import Any

import pytest
from interactions_harness import STREAMS, sse
from pipeline_harness import counter_ids

import rxgem
from rxgem import samples
from rxgem.converter import ResponsesConverter
from rxgem.core import Core
from rxgem.items import Batch, Item, Text
from rxgem.operators import core_operator, pipeline_stages, responses_stages
from rxgem.testing import assert_openai_stream, event, finish, text

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
SPLIT = event(text("Write to ann@exa")) + event(text("mple.com today."), finish("STOP"))


class Redactor(Core[Batch, Item]):
    """docs/operators.md's: e-mail addresses masked, even split across events."""

    def __init__(self) -> None:
        self.held: dict[int, str] = {}

    def feed(self, batch: Batch) -> Batch:
        return [out for item in batch for out in self.redact(item)]

    def redact(self, item: Item) -> Batch:
        if not isinstance(item, Text) or item.thought:
            return [item]
        text = self.held.pop(item.candidate, "") + item.text
        cut = text.rfind(" ") + 1
        self.held[item.candidate] = text[cut:]
        return [Text(item.candidate, EMAIL.sub("[email]", text[:cut]))] if cut else []

    def close(self, error: Exception | None = None) -> Batch:
        return [Text(c, EMAIL.sub("[email]", t)) for c, t in self.held.items() if t]


redact = core_operator(Redactor, batched=True)
OPTIONS: dict[str, Any] = {"clock": lambda: 0}


def by_converter(body: bytes, place: str, **options: Any) -> tuple[list[Any], Exception | None]:
    conv = rxgem.Converter(id_factory=counter_ids(), after={place: Redactor}, **OPTIONS, **options)
    chunks: list[Any] = []
    try:
        chunks.extend(conv.iterate([body[: len(body) // 2], body[len(body) // 2 :]]))
    except Exception as error:
        return chunks, error
    return chunks, None


def by_rx(body: bytes, place: str, **options: Any) -> tuple[list[Any], Exception | None]:
    stages = pipeline_stages(id_factory=counter_ids(), **OPTIONS, **options)
    at = [name for name, _ in stages].index(place) + 1
    operators = [operator for _, operator in stages]
    chunks: list[Any] = []
    errors: list[Exception] = []
    rxgem.from_body([body]).pipe(*operators[:at], redact(), *operators[at:]).subscribe(
        chunks.append, errors.append
    )
    return chunks, errors[0] if errors else None


def same(
    converted: tuple[list[Any], Exception | None], rx: tuple[list[Any], Exception | None]
) -> None:
    assert converted[0] == rx[0]
    assert type(converted[1]) is type(rx[1])
    assert str(converted[1]) == str(rx[1])


@pytest.mark.parametrize("place", ["group_by_slot", "latest_args", "flush_on_finish"])
@pytest.mark.parametrize("name", ["split", *sorted(samples.names())])
def test_generate_content_gives_the_rx_pipelines_chunks(name: str, place: str) -> None:
    body = SPLIT if name == "split" else samples.read(name.removesuffix(".sse"))
    converted = by_converter(body, place)
    same(converted, by_rx(body, place))
    if name == "split":
        message = assert_openai_stream(converted[0])["choices"][0]["message"]
        assert message["content"] == "Write to [email] today."


@pytest.mark.parametrize("path", STREAMS, ids=lambda path: path.name)
def test_an_interactions_stream_gives_the_rx_pipelines_chunks(path: Any) -> None:
    body = sse(path)
    converted = by_converter(body, "read_steps", upstream="interactions")
    same(converted, by_rx(body, "read_steps", upstream="interactions"))
    if converted[1] is None:
        assert_openai_stream(converted[0])


@pytest.mark.parametrize("name", ["split", "thinking_tools", "error_mid_stream"])
def test_the_responses_converter_runs_them_too(name: str) -> None:
    body = SPLIT if name == "split" else samples.read(name)
    conv = ResponsesConverter(id_factory=counter_ids(), after={"latest_args": Redactor}, **OPTIONS)
    events: list[Any] = []
    try:
        events.extend(conv.iterate([body]))
    except Exception as error:
        events.append(repr(error))
    stages = responses_stages(id_factory=counter_ids(), **OPTIONS)
    operators = [operator for _, operator in stages]
    rx: list[Any] = []
    rxgem.from_body([body]).pipe(*operators[:4], redact(), *operators[4:]).subscribe(
        rx.append, lambda error: rx.append(repr(error))
    )
    assert events == rx
    if name == "split":  # "today." is Redactor's close output, before flush_on_finish's
        assert conv.response is not None
        message = conv.response.output[0]
        assert message.content[0].text == "Write to [email] today."  # type: ignore[union-attr]


class Upper(Core[Batch, Item]):
    def feed(self, batch: Batch) -> Batch:
        return [Text(i.candidate, i.text.upper()) if isinstance(i, Text) else i for i in batch]


def test_cores_after_one_stage_run_in_order_and_a_close_goes_through_the_later_ones() -> None:
    conv = rxgem.Converter(after={"group_by_slot": [Redactor, Upper]})
    chunks = list(conv.iterate([SPLIT]))
    # "today." is Redactor's close output: Upper saw it before the builder did
    assert rxgem.assemble(chunks)["choices"][0]["message"]["content"] == "WRITE TO [EMAIL] TODAY."


def test_each_converter_makes_its_own_cores() -> None:
    made: list[Redactor] = []

    def make() -> Redactor:
        made.append(Redactor())
        return made[-1]

    first, second = (
        rxgem.Converter(after={"latest_args": make}),
        rxgem.Converter(after={"latest_args": make}),
    )
    assert len(made) == 2
    assert made[0] is not made[1]
    assert first.feed(event(text("Hi there"))) != []
    assert second.feed(b"") == []


class Count(Core[Any, Any]):
    """Not batched (after parse): each value passes on."""

    def __init__(self) -> None:
        self.seen = 0

    def feed(self, value: Any) -> list[Any]:
        self.seen += 1
        return [value]


def test_after_a_stage_that_is_not_batched_each_value_passes_one_by_one() -> None:
    counts: list[Count] = []
    conv = rxgem.Converter(after={"parse": lambda: counts.append(Count()) or counts[-1]})
    assert rxgem.assemble(list(conv.iterate([SPLIT])))["choices"][0]["message"]["content"] == (
        "Write to ann@example.com today."
    )
    assert counts[0].seen == 2


@pytest.mark.parametrize("place", ["to_openai", "redact", "read_steps"])
def test_an_unknown_stage_is_refused_naming_the_stages(place: str) -> None:
    with pytest.raises(
        ValueError,
        match=rf"{place!r}; expected one of decode_sse, parse, "
        r"group_by_slot, latest_args, flush_on_finish$",
    ):
        rxgem.Converter(after={place: Redactor})


def test_a_value_that_is_not_a_core_maker_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="core class or a zero-argument factory, got int"):
        rxgem.Converter(after={"parse": [3]})  # type: ignore[list-item]


class Boom(Core[Batch, Item]):
    """Passes the first batch, raises on the second; holds its last text for close."""

    def __init__(self) -> None:
        self.fed = 0
        self.closed_with: Exception | None = None

    def feed(self, batch: Batch) -> Batch:
        self.fed += 1
        if self.fed == 2:
            raise ValueError("no second batch")
        return batch

    def close(self, error: Exception | None = None) -> Batch:
        self.closed_with = error
        return [Text(0, " (owed)")]


def test_a_core_raising_mid_stream_follows_the_converters_error_rule() -> None:
    booms: list[Boom] = []
    conv = rxgem.Converter(after={"flush_on_finish": lambda: booms.append(Boom()) or booms[-1]})
    first = conv.feed(event(text("One")))
    assert [c.choices[0].delta.content for c in first if c.choices] == ["One"]
    owed = conv.feed(event(text("Two")))  # raises inside Boom: what it owed comes back
    assert conv.error is not None
    assert conv.done
    assert "raised by the Boom operator" in conv.error.__notes__
    assert booms[0].closed_with is conv.error
    with pytest.raises(ValueError, match="no second batch") as raised:
        conv.close()
    assert raised.value is conv.error
    content = "".join(c.choices[0].delta.content or "" for c in first + owed if c.choices)
    assert content == "One (owed)"
    with pytest.raises(ValueError, match="no second batch"):
        conv.feed(b"more")


def test_a_core_raising_in_close_is_raised_by_close_with_what_was_owed() -> None:
    class Late(Core[Batch, Item]):
        def feed(self, batch: Batch) -> Batch:
            return batch

        def close(self, error: Exception | None = None) -> Batch:
            raise RuntimeError("cannot close")

    conv = rxgem.Converter(after={"group_by_slot": Late})
    assert conv.feed(event(text("Hi")))
    with pytest.raises(RuntimeError, match="cannot close") as raised:
        conv.close()
    assert "raised by the Late operator" in raised.value.__notes__
    assert isinstance(raised.value.chunks, list)  # type: ignore[attr-defined]
