"""The ``upstream`` option: one pipeline option, declared once, choosing the reader stages
(``generateContent``'s five, or the Interactions API's three) for every output and every
entry point, and refused, with the options of the stages it leaves out, in the same words
everywhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import rxgem
import rxgem.converter
import rxgem.operators
from rxgem import core, samples
from rxgem.core.pipeline import (
    INTERACTIONS_RESPONSES_STAGES,
    INTERACTIONS_STAGES,
    RESPONSES_STAGES,
    STAGES,
    PipelineSettings,
    UpstreamOptions,
    stages_of,
)
from rxgem.testing import FakeInteraction, interaction_stream, text_step

INTERACTIONS_NAMES = ["decode_sse", "parse_interactions", "read_steps", "to_openai"]
BODY = (
    b'event: interaction.created\ndata: {"event_type":"interaction.created",'
    b'"interaction":{"id":"i1","status":"in_progress","model":"gemini-test"}}\n\n'
    b'event: step.start\ndata: {"event_type":"step.start","index":0,'
    b'"step":{"type":"model_output","content":[{"type":"text","text":"Hi"}]}}\n\n'
    b'event: step.stop\ndata: {"event_type":"step.stop","index":0}\n\n'
    b'event: interaction.completed\ndata: {"event_type":"interaction.completed",'
    b'"interaction":{"id":"i1","status":"completed","model":"gemini-test"}}\n\n'
    b"data: [DONE]\n\n"
)


def takers(options: dict[str, Any]) -> list[Callable[[], object]]:
    """Every entry point that takes the pipeline's options."""
    return [
        lambda: rxgem.Converter(**options),
        lambda: rxgem.converter.ResponsesConverter(**options),
        lambda: rxgem.gemini_to_openai(**options),
        lambda: rxgem.operators.gemini_to_responses(**options),
        lambda: rxgem.operators.pipeline_stages(**options),
        lambda: PipelineSettings(options),
        lambda: PipelineSettings(options, RESPONSES_STAGES),
    ]


def test_upstream_is_declared_once_with_its_default_and_check() -> None:
    assert set(UpstreamOptions.__optional_keys__) == {"upstream"}
    for faces in (
        core.pipeline.PipelineOptions,
        core.pipeline.StreamOptions,
        core.pipeline.ResponsesPipelineOptions,
    ):
        assert "upstream" in faces.__optional_keys__
        assert "upstream: " in (faces.__doc__ or "")
    assert PipelineSettings({}).reader is core.pipeline.reader_of("generate-content")


def test_upstream_chooses_the_stages_of_each_output() -> None:
    assert stages_of() is STAGES
    assert stages_of("generate-content", "responses") is RESPONSES_STAGES
    assert stages_of("interactions") is INTERACTIONS_STAGES
    assert stages_of("interactions", "responses") is INTERACTIONS_RESPONSES_STAGES
    assert PipelineSettings({"upstream": "interactions"}).stages is INTERACTIONS_STAGES
    settings = PipelineSettings({"upstream": "interactions"}, RESPONSES_STAGES)
    assert settings.stages is INTERACTIONS_RESPONSES_STAGES
    assert [type(c) for c in settings.cores()] == [
        core.SSEDecoder,
        core.InteractionsParser,
        core.StepReader,
        core.responses.ResponsesBuilder,
    ]
    named = rxgem.operators.pipeline_stages(upstream="interactions")
    assert [name for name, _ in named] == INTERACTIONS_NAMES
    assert all(callable(getattr(rxgem.operators, name)) for name in INTERACTIONS_NAMES)


def test_the_interactions_stages_share_the_output_stages() -> None:
    """The reader's batches go straight to the output stage: no slots, no finish buffer
    (``BaseConverter._feed_steps`` unrolls exactly these)."""
    assert [(s.core, s.batched) for s in INTERACTIONS_STAGES] == [
        (core.SSEDecoder, False),
        (core.InteractionsParser, False),
        (core.StepReader, True),
        (core.ChunkBuilder, False),
    ]
    assert INTERACTIONS_RESPONSES_STAGES[:3] == INTERACTIONS_STAGES[:3]
    assert INTERACTIONS_RESPONSES_STAGES[3] is RESPONSES_STAGES[-1]
    assert INTERACTIONS_STAGES[3] is STAGES[-1]
    assert INTERACTIONS_STAGES[0] is STAGES[0]


def test_a_bad_upstream_is_refused_in_the_same_words_everywhere() -> None:
    message = "upstream must be 'generate-content' or 'interactions', not 'vertex'"
    for take in [*takers({"upstream": "vertex"}), lambda: stages_of("vertex")]:  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=message):
            take()


@pytest.mark.parametrize(
    ("option", "value"),
    [("api", "vertex"), ("slot_policy", "latest"), ("announce", "none")],
)
def test_an_option_of_the_generate_content_stages_is_refused_for_interactions(
    option: str, value: Any
) -> None:
    for take in takers({"upstream": "interactions", option: value}):
        with pytest.raises(TypeError, match=f"{option!r} is for the generate-content upstream"):
            take()


def test_the_options_both_upstreams_take_reach_the_interactions_cores() -> None:
    cut = BODY[: BODY.index(b"event: interaction.completed")]  # no interaction.completed
    with pytest.raises(rxgem.TruncatedStreamError):
        list(rxgem.Converter(upstream="interactions").iterate([cut]))
    chunks = list(
        rxgem.Converter(upstream="interactions", allow_truncated=True, model="m").iterate([cut])
    )
    assert {chunk.model for chunk in chunks} == {"m"}
    assert chunks[-1].choices[0].finish_reason == "stop"  # a finish, not an error
    with pytest.raises(TypeError, match="unknown pipeline option 'modle'"):
        PipelineSettings({"upstream": "interactions", "modle": "m"})


def test_the_aliases_are_gemini_to_with_the_interactions_upstream() -> None:
    fixed: dict[str, Any] = {"id_factory": lambda: "x", "clock": lambda: 0.0}

    def run(operator: Any) -> list[dict[str, Any]]:
        out: list[Any] = []
        rxgem.from_body(BODY).pipe(operator).subscribe(out.append)
        return [value.to_dict() for value in out]

    chat = run(rxgem.operators.interactions_to_openai(**fixed))
    assert chat == run(rxgem.gemini_to_openai(upstream="interactions", **fixed))
    assert (
        "".join(c["choices"][0]["delta"].get("content", "") for c in chat if c["choices"]) == "Hi"
    )
    events = run(rxgem.operators.interactions_to_responses(**fixed))
    assert events == run(rxgem.operators.gemini_to_responses(upstream="interactions", **fixed))
    assert events[-1]["type"] == "response.completed"
    with pytest.raises(TypeError):
        rxgem.operators.interactions_to_openai(slot_policy="latest")  # type: ignore[call-arg]


def test_a_converter_names_the_interaction_it_reads() -> None:
    stream = interaction_stream(FakeInteraction(steps=(text_step("Hi"),)), id="v1_read-me")
    reading = rxgem.converter.ResponsesConverter(upstream="interactions")
    assert reading.interaction_id is None  # nothing read yet
    reading.feed(stream)
    assert reading.interaction_id == "v1_read-me"
    plain = rxgem.converter.ResponsesConverter()
    plain.feed(samples.read("text"))
    assert plain.interaction_id is None
