"""One item contract for both upstreams: an operator written in plain RxPY (no rxgem
helper) that holds content and lets it go when its source completes, put anywhere between
the reader and ``to_openai``, still gives a valid OpenAI stream, with the same message.

Over every sample (``generateContent``) and every recorded Interactions stream that ends
well, at every position: after ``parse`` (``parse_interactions``) the values are
responses (typed events), so the holder keeps them all and lets them go in order; from
``group_by_slot`` (``read_steps``) on they are batches, and the holder keeps only the
content (text, code and media parts, sources), letting everything else pass at once (as a
redacting operator would).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import reactivex
from interactions_harness import FAILING, OLD, STREAMS, sse
from interactions_harness import name as stream_name
from pipeline_harness import SHARED_CAPTURES, jsonl_to_sse, load_shared
from reactivex import Observable, abc

import rxgem
from rxgem.items import Batch, DataPart, Logprobs, Sources, Text, TextSignature
from rxgem.operators import NamedOperator, pipeline_stages, responses_stages
from rxgem.testing import assert_openai_stream

Operator = Callable[[Observable[Any]], Observable[Any]]

pytestmark = pytest.mark.filterwarnings("ignore:rxgem does not know the Interactions type")


def hold_all(source: Observable[Any]) -> Observable[Any]:
    """Every value, held until the source completes, then all of them in order."""

    def subscribe(
        observer: abc.ObserverBase[Any], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        held: list[Any] = []

        def on_completed() -> None:
            for value in held:
                observer.on_next(value)
            observer.on_completed()

        return source.subscribe(held.append, observer.on_error, on_completed, scheduler=scheduler)

    return Observable(subscribe)


CONTENT = (Text, DataPart, Sources, Logprobs, TextSignature)
"""What a choice's content is made of, in the order it is shown (a redactor holds these)."""


def hold_content(source: Observable[Batch]) -> Observable[Batch]:
    """Content held until the source completes; every other item (tool calls, the
    finish, usage) passes at once."""

    def subscribe(
        observer: abc.ObserverBase[Batch], scheduler: abc.SchedulerBase | None = None
    ) -> abc.DisposableBase:
        held: Batch = []

        def on_next(batch: Batch) -> None:
            held.extend(item for item in batch if isinstance(item, CONTENT))
            rest: Batch = [item for item in batch if not isinstance(item, CONTENT)]
            if rest:
                observer.on_next(rest)

        def on_completed() -> None:
            if held:
                observer.on_next(held)
            observer.on_completed()

        return source.subscribe(on_next, observer.on_error, on_completed, scheduler=scheduler)

    return Observable(subscribe)


def stages_of(upstream: str) -> list[NamedOperator]:
    """The pipeline's stages, minting the same ids on every run."""
    count = iter(range(1_000_000))
    return pipeline_stages(
        upstream=upstream,  # type: ignore[arg-type]
        id_factory=lambda: f"id{next(count)}",
    )


def run(body: bytes, stages: list[NamedOperator]) -> tuple[list[Any], Exception | None]:
    chunks: list[Any] = []
    errors: list[Exception] = []
    pieces = [body[i : i + 97] for i in range(0, len(body), 97)]
    reactivex.from_iterable(pieces).pipe(*(operator for _, operator in stages)).subscribe(
        chunks.append, errors.append
    )
    return chunks, errors[0] if errors else None


def with_holder(stages: list[NamedOperator], after: int, holder: Operator) -> list[NamedOperator]:
    return [*stages[: after + 1], ("holder", holder), *stages[after + 1 :]]


def message(result: dict[str, Any]) -> dict[str, Any]:
    return {"choices": result["choices"], "usage": result["usage"]}


GENERATE_CONTENT = [name.removesuffix(".sse") for name in rxgem.samples.names()]
INTERACTIONS = [path for path in STREAMS if stream_name(path) not in FAILING | OLD]
SHARED = sorted(path.name for path in (SHARED_CAPTURES / "vercel-ai").glob("*.chunks.txt"))
"""The recorded ``generateContent`` captures (``../shared/captures``), where they are."""


# (upstream, position after which the holder goes, the holder)
PLACES = [
    ("generate-content", 1, hold_all),  # after parse
    ("generate-content", 2, hold_content),  # after group_by_slot
    ("generate-content", 3, hold_content),  # after latest_args
    ("generate-content", 4, hold_content),  # after flush_on_finish
    ("generate-content", 4, hold_all),
    ("interactions", 1, hold_all),  # after parse_interactions
    ("interactions", 2, hold_content),  # after read_steps
    ("interactions", 2, hold_all),
]
CASES = [
    pytest.param(upstream, after, holder, name, id=f"{upstream}-{after}-{holder.__name__}-{name}")
    for upstream, after, holder in PLACES
    for name in (GENERATE_CONTENT if upstream == "generate-content" else INTERACTIONS)
] + [
    pytest.param(
        upstream,
        after,
        holder,
        name,
        id=f"{upstream}-{after}-{holder.__name__}-{name}",
        marks=pytest.mark.shared_captures,
    )
    for upstream, after, holder in PLACES
    if upstream == "generate-content"
    for name in SHARED
]


def body_of(upstream: str, name: str | Path) -> bytes:
    if upstream == "interactions":
        assert isinstance(name, Path)
        return sse(name)
    assert isinstance(name, str)
    if name.endswith(".chunks.txt"):
        return jsonl_to_sse(load_shared(name))
    return rxgem.samples.read(name)


@pytest.mark.parametrize(("upstream", "after", "holder", "name"), CASES)
def test_a_holding_operator_anywhere_gives_a_valid_stream_with_the_same_message(
    upstream: str, after: int, holder: Operator, name: str | Path
) -> None:
    body = body_of(upstream, name)
    plain, plain_error = run(body, stages_of(upstream))
    held, held_error = run(body, with_holder(stages_of(upstream), after, holder))
    if plain_error is not None:  # a failed stream: the holder passes the error on, unchanged
        assert type(held_error) is type(plain_error)
        return
    assert held_error is None
    expected = assert_openai_stream(plain)
    assert message(assert_openai_stream(held)) == message(expected)


def responses_stages_of(upstream: str) -> list[NamedOperator]:
    count = iter(range(1_000_000))
    return responses_stages(
        upstream=upstream,  # type: ignore[arg-type]
        id_factory=lambda: f"id{next(count)}",
        clock=lambda: 1_700_000_000.0,
    )


def final_output(events: list[Any]) -> list[str]:
    """The terminal event's output items without their ids (minted anew per item), in any
    order: held thoughts let go after the calls make their reasoning item come later."""
    document = events[-1].to_dict()["response"]
    items = [
        {k: v for k, v in item.items() if k not in ("id", "call_id")} for item in document["output"]
    ]
    return sorted(json.dumps(item, sort_keys=True) for item in items)


@pytest.mark.parametrize(
    ("upstream", "after", "holder", "name"),
    [case for case in CASES if not case.marks],
)
def test_a_holding_operator_anywhere_gives_the_same_response(
    upstream: str, after: int, holder: Operator, name: str | Path
) -> None:
    # What an operator holds past the finish still goes into the response's items.
    body = body_of(upstream, name)
    plain, plain_error = run(body, responses_stages_of(upstream))
    held, held_error = run(body, with_holder(responses_stages_of(upstream), after, holder))
    assert type(held_error) is type(plain_error)
    if plain_error is None:
        assert final_output(held) == final_output(plain)
