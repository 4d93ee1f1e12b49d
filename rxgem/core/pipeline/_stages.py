"""The pipeline's stages, each an operator over one core and the options it takes
(declared in :mod:`._options`), in the order of each pipeline; and the settings that
check a pipeline's options once and make its cores.

Each upstream has its own reader stages (``generateContent``: ``parse``,
``group_by_slot``, ``latest_args``, ``flush_on_finish``; Interactions:
``parse_interactions``, ``read_steps``) between ``decode_sse`` and the output's last
stage (``to_openai``, ``to_responses``): :data:`STAGES`, :data:`RESPONSES_STAGES`,
:data:`INTERACTIONS_STAGES`, :data:`INTERACTIONS_RESPONSES_STAGES`, :func:`stages_of`.
Each upstream's stream is read by one :class:`Reader` (its stages for each output), found
by the ``upstream`` option's value with :func:`reader_of` (:class:`PipelineSettings`): the
one place the core maps that name to what it reads.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Generic, Literal, TypeVar

from .._option_checks import check_upstream
from ..chat import ChunkBuilder
from ..gemini import ResponseParser
from ..interactions import InteractionsParser, StepReader
from ..responses import ResponsesBuilder
from ..slots import ArgsTable, FinishBuffer, SlotTable
from ..sse import SSEDecoder
from ._options import (
    FlushOnFinishOptions,
    GroupBySlotOptions,
    ParseOptions,
    ReadStepsOptions,
    ToOpenAIOptions,
    ToResponsesOptions,
    Upstream,
    declared_of,
)

__all__ = [
    "INTERACTIONS_RESPONSES_STAGES",
    "INTERACTIONS_STAGES",
    "RESPONSES_STAGES",
    "STAGES",
    "Output",
    "PipelineSettings",
    "Reader",
    "Stage",
    "reader_of",
    "stages_of",
]

C = TypeVar("C")


def _maker(core: Callable[..., C], kwargs: dict[str, Any]) -> Callable[[], C]:
    """A maker of fresh cores ``core(**kwargs)``."""

    def make() -> C:
        return core(**kwargs)

    return make


class Stage(Generic[C]):
    """One stage of the pipeline: its operator's name, its core and the core's options.

    Attributes:
        name: the operator's name (``"parse"``).
        core: the core class; called with each declared option (by its ``param``).
        options: the ``TypedDict`` of the options its core takes, or ``None``.
        batched: whether the core's ``feed`` returns one batch (a list of the items of
            one Gemini event, passed on as one value) rather than several values.
        ends: whether the core can tell that the stream is over before its input ends
            (``done``: ``data: [DONE]``).
        declared: each option's name → (type, :class:`Option`).
    """

    __slots__ = ("_default", "_defaults", "batched", "core", "declared", "ends", "name", "options")

    def __init__(
        self,
        name: str,
        core: Callable[..., C],
        options: Any = None,
        *,
        batched: bool = False,
        ends: bool = False,
    ) -> None:
        self.name = name
        self.core = core
        self.options = options
        self.batched = batched
        self.ends = ends
        self.declared = declared_of(options) if options is not None else {}
        self._defaults = {o.param or n: o.default for n, (_, o) in self.declared.items()}
        self._default = _maker(core, self._defaults)  # made once: stages are shared

    def __repr__(self) -> str:
        return f"Stage({self.name!r}, {getattr(self.core, '__name__', self.core)})"

    def maker(self, options: Mapping[str, Any], *, strict: bool = True) -> Callable[[], C]:
        """Check this stage's ``options`` now; a maker of fresh cores taking them.

        ``strict``: another name is an error (else it is left to the other stages).
        """
        if strict:
            unknown = sorted(set(options) - self.declared.keys())
            if unknown:
                raise TypeError(
                    f"{self.name}() got an unknown option {unknown[0]!r}; expected one of"
                    f" {', '.join(self.declared) or 'none'}"
                )
        if not self.declared:
            return self.core
        if options.keys().isdisjoint(self.declared):
            return self._default
        kwargs = dict(self._defaults)
        for name in options.keys() & self.declared.keys():
            value = options[name]
            option = self.declared[name][1]
            if option.check is not None:
                option.check(value)
            kwargs[option.param or name] = value
        return _maker(self.core, kwargs)


DECODE_SSE: Stage[SSEDecoder] = Stage("decode_sse", SSEDecoder, ends=True)
PARSE: Stage[ResponseParser] = Stage("parse", ResponseParser, ParseOptions)
GROUP_BY_SLOT: Stage[SlotTable] = Stage(
    "group_by_slot", SlotTable, GroupBySlotOptions, batched=True
)
LATEST_ARGS: Stage[ArgsTable] = Stage("latest_args", ArgsTable, batched=True)
FLUSH_ON_FINISH: Stage[FinishBuffer] = Stage(
    "flush_on_finish", FinishBuffer, FlushOnFinishOptions, batched=True
)
TO_OPENAI: Stage[ChunkBuilder] = Stage("to_openai", ChunkBuilder, ToOpenAIOptions)

STAGES: tuple[Stage[Any], ...] = (
    DECODE_SSE,
    PARSE,
    GROUP_BY_SLOT,
    LATEST_ARGS,
    FLUSH_ON_FINISH,
    TO_OPENAI,
)
"""The pipeline's stages in order, each named after its operator (over one core)."""

TO_RESPONSES: Stage[ResponsesBuilder] = Stage("to_responses", ResponsesBuilder, ToResponsesOptions)
RESPONSES_STAGES: tuple[Stage[Any], ...] = (*STAGES[:5], TO_RESPONSES)
"""The Responses pipeline's stages: the same first five, then ``to_responses``."""

PARSE_INTERACTIONS: Stage[InteractionsParser] = Stage("parse_interactions", InteractionsParser)
READ_STEPS: Stage[StepReader] = Stage("read_steps", StepReader, ReadStepsOptions, batched=True)

INTERACTIONS_STAGES: tuple[Stage[Any], ...] = (
    DECODE_SSE,
    PARSE_INTERACTIONS,
    READ_STEPS,
    TO_OPENAI,
)
"""The pipeline's stages for an Interactions stream (``upstream="interactions"``): its
reader gives the output stage its items directly (no slots to keep, no finish to hold)."""

INTERACTIONS_RESPONSES_STAGES: tuple[Stage[Any], ...] = (*INTERACTIONS_STAGES[:3], TO_RESPONSES)
"""The Responses pipeline's stages for an Interactions stream."""

Output = Literal["chat", "responses"]
"""What the pipeline makes: Chat Completions chunks or Responses events."""


@dataclass(frozen=True, slots=True)
class Reader:
    """How the pipeline reads one upstream's stream: its stages for each output.

    Attributes:
        name: the ``upstream`` option's value that chooses it.
        chat: the stages that make Chat Completions chunks.
        responses: the stages that make Responses events.
        steps: whether its reader gives the output stage its items directly (no slots
            to keep, no finish to hold), as the Interactions reader does.
    """

    name: str
    chat: tuple[Stage[Any], ...]
    responses: tuple[Stage[Any], ...]
    steps: bool = False

    def stages(self, output: Output = "chat") -> tuple[Stage[Any], ...]:
        """The stages that make ``output`` (raises ``ValueError`` for another)."""
        found = {"chat": self.chat, "responses": self.responses}.get(output)
        if found is None:
            raise ValueError(f"output must be 'chat' or 'responses', not {output!r}")
        return found

    def takes(self, option: str) -> bool:
        """Whether a stage of this reader's (either output) takes ``option``."""
        return any(option in stage.declared for stage in (*self.chat, *self.responses))


READERS: Final = (
    Reader("generate-content", STAGES, RESPONSES_STAGES),
    Reader("interactions", INTERACTIONS_STAGES, INTERACTIONS_RESPONSES_STAGES, steps=True),
)
"""The readers of the ``upstream`` option, the default first."""


def reader_of(upstream: object) -> Reader:
    """The reader the ``upstream`` option names.

    Raises:
        ValueError: for a name no reader has.
    """
    check_upstream(upstream)
    return next(reader for reader in READERS if reader.name == upstream)


def stages_of(
    upstream: Upstream = "generate-content", output: Output = "chat"
) -> tuple[Stage[Any], ...]:
    """The stages of the pipeline that reads ``upstream``'s stream into ``output``.

    Raises:
        ValueError: for an unknown ``upstream`` or ``output``.
    """
    return reader_of(upstream).stages(output)


def _names(stages: tuple[Stage[Any], ...]) -> frozenset[str]:
    return frozenset({"upstream", *(name for stage in stages for name in stage.declared)})


_NAMES = {
    stages: _names(stages) for reader in READERS for stages in (reader.chat, reader.responses)
}


class PipelineSettings:
    """:class:`PipelineOptions` checked once; makes the cores of one stream.

    ``stages``: the generate-content pipeline of the output wanted (:data:`STAGES` or
    :data:`RESPONSES_STAGES`); the ``upstream`` option swaps its reader for that
    upstream's (:func:`stages_of`).

    Raises:
        TypeError, ValueError: for an unknown option, a bad value, or an option of
            stages the chosen upstream does not have.
    """

    __slots__ = ("makers", "options", "reader", "stages")

    def __init__(self, options: Mapping[str, Any], stages: tuple[Stage[Any], ...] = STAGES) -> None:
        reader = reader_of(options.get("upstream", READERS[0].name))
        if stages is STAGES:
            stages = reader.chat
        elif stages is RESPONSES_STAGES:
            stages = reader.responses
        names = _NAMES.get(stages) or _names(stages)
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(_unknown(unknown[0], reader, stages, names))
        self.reader = reader
        """What reads the upstream's stream (``options``' ``upstream``)."""
        self.stages = stages
        """The stages whose cores :meth:`cores` makes, in order."""
        self.options: Mapping[str, Any] = dict(options)
        self.makers: tuple[Callable[[], Any], ...] = tuple(
            stage.maker(options, strict=False) for stage in stages
        )
        """Each stage's maker of fresh cores, in the order of :attr:`stages`."""

    def cores(self) -> tuple[Any, ...]:
        """Fresh cores for one stream, in the order of :attr:`stages`."""
        return tuple(make() for make in self.makers)


def _unknown(
    name: str, reader: Reader, stages: tuple[Stage[Any], ...], names: frozenset[str]
) -> str:
    """The message refusing option ``name``: the stages of another upstream may take it."""
    for other in READERS:
        if other is not reader and other.takes(name):
            return (
                f"pipeline option {name!r} is for the {other.name} upstream only: the"
                f" {reader.name} pipeline ({', '.join(stage.name for stage in stages)}) has"
                " no stage that takes it"
            )
    return f"unknown pipeline option {name!r}; expected one of {', '.join(sorted(names))}"
