"""The pipeline's options: each declared once, and everything reads that declaration.

Every option is a key of its stage's ``TypedDict`` with an ``Option`` (default, doc,
check); the cores are made from it, the operators, ``Converter`` and ``stream_chat``
take it, and a bad value is refused in the same words through any of them.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rxgem
import rxgem._build
import rxgem.converter
import rxgem.operators
from rxgem.core.pipeline import (
    RESPONSES_STAGES,
    STAGES,
    PipelineOptions,
    PipelineSettings,
    StreamOptions,
)

DECLARED = {name: stage for stage in STAGES for name in stage.declared}

BAD: list[tuple[str, Any, type[Exception], str]] = [
    ("api", "palm", ValueError, "api must be 'gemini' or 'vertex', not 'palm'"),
    ("slot_policy", "first", ValueError, "unknown slot policy 'first'"),
    ("announce", "all", ValueError, "announce must be 'first' or 'none', not 'all'"),
    ("reasoning_field", "thinking", ValueError, "reasoning_field must be"),
    ("id_factory", "abc", TypeError, "id_factory must be callable"),
    ("clock", 0, TypeError, "clock must be callable"),
]


def test_the_typing_faces_are_the_declaration() -> None:
    # every stage option, and `upstream`, which chooses the stages rather than a core's
    assert set(PipelineOptions.__optional_keys__) == set(DECLARED) | {"upstream"}
    assert set(StreamOptions.__optional_keys__) == (set(DECLARED) | {"upstream"}) - {"model"}
    assert PipelineOptions.__required_keys__ == frozenset()
    assert rxgem.converter.PipelineOptions is PipelineOptions
    assert rxgem.converter.StreamOptions is StreamOptions


def _defaults(core: type) -> dict[str, Any]:
    """``core``'s keyword defaults; read from its source when it was compiled (mypyc
    classes have no signature), each default evaluated in the compiled module."""
    module = sys.modules[core.__module__]
    if not str(getattr(module.__spec__, "origin", "")).endswith((".so", ".pyd")):
        return {
            name: parameter.default
            for name, parameter in inspect.signature(core).parameters.items()
        }
    source = Path(rxgem._build.source_path(module.__name__)).read_text(encoding="utf-8")
    init = next(
        node
        for cls in ast.parse(source).body
        if isinstance(cls, ast.ClassDef) and cls.name == core.__name__
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.name == "__init__"
    )
    arguments = init.args
    positional = arguments.args[len(arguments.args) - len(arguments.defaults) :]
    pairs = [
        *zip(positional, arguments.defaults, strict=True),
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
    ]
    return {
        argument.arg: eval(ast.unparse(default), vars(module))  # our own source
        for argument, default in pairs
        if default is not None
    }


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_each_declared_default_is_its_cores_default(name: str) -> None:
    stage = DECLARED[name]
    _, option = stage.declared[name]
    assert _defaults(stage.core)[option.param or name] == option.default
    assert option.doc
    assert name in (PipelineOptions.__doc__ or "")


@pytest.mark.parametrize(("name", "value", "error", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_value_is_refused_in_the_same_words_everywhere(
    name: str, value: Any, error: type[Exception], message: str
) -> None:
    stage = DECLARED[name]
    _, option = stage.declared[name]
    takers: list[Callable[[], object]] = [
        lambda: rxgem.Converter(**{name: value}),
        lambda: rxgem.gemini_to_openai(**{name: value}),
        lambda: rxgem.operators.pipeline_stages(**{name: value}),
        lambda: getattr(rxgem.operators, stage.name)(**{name: value}),
        lambda: PipelineSettings({name: value}),
    ]
    if name not in ("id_factory", "clock"):  # the core itself calls the check (not those)
        takers.append(lambda: stage.core(**{option.param or name: value}))
    for take in takers:
        with pytest.raises(error, match=message):
            take()


def test_an_unknown_option_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="unknown pipeline option 'modle'"):
        rxgem.gemini_to_openai(modle="x")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="to_openai\\(\\) got an unknown option 'api'"):
        rxgem.operators.to_openai(api="vertex")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="latest_args\\(\\) got an unknown option"):
        STAGES[3].maker({"model": "x"})


def test_each_stage_is_its_operator_and_declares_whether_it_batches() -> None:
    names = [name for name, _ in rxgem.operators.pipeline_stages()]
    assert names == [stage.name for stage in STAGES]
    assert all(callable(getattr(rxgem.operators, name)) for name in names)
    batched = {stage.core.__name__ for stage in STAGES if stage.batched}
    assert batched == {"SlotTable", "ArgsTable", "FinishBuffer"}


def test_converter_feed_unrolls_the_declared_stages() -> None:
    """``BaseConverter.feed`` is written out for speed: the cores in this order, iterating
    the values of the stages that do not batch and passing on the non-empty batches of
    those that do, then the last core of each output. Changing ``STAGES`` or
    ``RESPONSES_STAGES`` means changing it too."""
    core = rxgem.core
    assert [(s.core, s.batched) for s in STAGES] == [
        (core.SSEDecoder, False),
        (core.ResponseParser, False),
        (core.SlotTable, True),
        (core.ArgsTable, True),
        (core.FinishBuffer, True),
        (core.ChunkBuilder, False),
    ]
    assert RESPONSES_STAGES[:5] == STAGES[:5]
    assert [(s.core, s.batched) for s in RESPONSES_STAGES[5:]] == [
        (core.responses.ResponsesBuilder, False)
    ]


def test_the_cores_are_made_with_the_options() -> None:
    settings = PipelineSettings({"api": "vertex", "slot_policy": "every_part", "model": "m"})
    _, parser, slots, _, _, _ = settings.cores()
    assert parser.api == "vertex"
    from rxgem.core.slots._policies import EveryPartPolicy

    assert type(slots.policy) is EveryPartPolicy
    assert settings.cores()[1] is not parser  # fresh cores for every stream
    chunks = list(rxgem.Converter(model="m").iterate([rxgem.samples.read("text")]))
    assert {chunk.model for chunk in chunks} == {"m"}


def test_the_operators_document_their_options_from_the_declaration() -> None:
    for stage in STAGES:
        doc = getattr(rxgem.operators, stage.name).__doc__ or ""
        for name, (_, option) in stage.declared.items():
            assert f"{name}: {option.doc.split()[0]}" in doc, (stage.name, name)
