"""The pipeline's options, each declared once, and the six stages that take them.

An option is one key of the ``TypedDict`` of the stage whose core takes it, annotated
``Annotated[type, Option(default, doc, check)]``: its name, type, default, check, doc
and core in one line. :class:`ParseOptions` (``ResponseParser``),
:class:`GroupBySlotOptions` (``SlotTable``), :class:`FlushOnFinishOptions`
(``FinishBuffer``) and :class:`ToOpenAIOptions` (``ChunkBuilder``) are what the
operators take; :class:`StreamOptions` and :class:`PipelineOptions` unite them for
``gemini_to_openai``, ``Converter`` and ``stream_chat``. Typing reads the
``TypedDict`` (``**options: Unpack[...]``); at run time :data:`STAGES` reads the
``Option`` of each key to check values once (:meth:`Stage.maker`,
:class:`PipelineSettings`) and to make every core with them. The Responses output
has its own last stage (:class:`ToResponsesOptions`, ``ResponsesBuilder``) after the
same five: :data:`RESPONSES_STAGES`, :class:`ResponsesPipelineOptions`.

The ``upstream`` option (:class:`UpstreamOptions`) chooses the reader: Gemini's
``streamGenerateContent`` stream (the five stages above) or the Interactions API's
(``decode_sse``, ``parse_interactions`` and ``read_steps``, whose ``StepReader``
gives the output stage its items directly): :data:`INTERACTIONS_STAGES`,
:data:`INTERACTIONS_RESPONSES_STAGES`, :func:`stages_of`.

Adding an option: a key in its stage's ``TypedDict`` (with its check, if any, in
``_option_checks``, which the core calls too) and the parameter of the
core that uses it. The docs of the ``TypedDict`` classes, and of the operators that
take them, are written from the declaration (:func:`options_doc`).
"""

import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypedDict, TypeVar, get_type_hints

from ._option_checks import (
    check_announce,
    check_api,
    check_callable,
    check_reasoning_field,
    check_upstream,
)
from .chat._chunk_builder import ChunkBuilder, ReasoningField
from .chat._mapping import random_id
from .gemini._enums import GeminiApi
from .gemini._parser import ResponseParser
from .interactions._parser import InteractionsParser
from .interactions._reader import StepReader
from .responses._builder import ResponsesBuilder
from .responses._mapping import check_namespaced, check_request, check_response_id
from .slots._args_table import ArgsTable
from .slots._finish_buffer import Announce, FinishBuffer
from .slots._policies import SlotPolicy, SlotPolicyName, resolve_policy
from .slots._table import SlotTable
from .sse._decoder import SSEDecoder

__all__ = [
    "INTERACTIONS_RESPONSES_STAGES",
    "INTERACTIONS_STAGES",
    "RESPONSES_STAGES",
    "STAGES",
    "FlushOnFinishOptions",
    "GroupBySlotOptions",
    "InteractionsPipelineOptions",
    "InteractionsResponsesOptions",
    "Option",
    "Output",
    "ParseOptions",
    "PipelineOptions",
    "PipelineSettings",
    "ReadStepsOptions",
    "ResponsesPipelineOptions",
    "Stage",
    "StreamOptions",
    "ToOpenAIOptions",
    "ToResponsesOptions",
    "Upstream",
    "UpstreamOptions",
    "options_doc",
    "stages_of",
]

C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Option:
    """What a pipeline option's ``Annotated`` metadata says beside its name and type.

    Attributes:
        default: the value when the option is not given.
        doc: what it does, one sentence or two.
        check: raises ``ValueError``/``TypeError`` for a bad value (the same function
            the core calls); ``None``: any value of the type will do.
        param: the core's keyword for it, when not the option's name.
    """

    default: Any
    doc: str
    check: Callable[[Any], object] | None = None
    param: str | None = None


class ParseOptions(TypedDict, total=False):
    """``parse()``'s options: ``ResponseParser``'s."""

    api: Annotated[
        GeminiApi,
        Option(
            "gemini",
            '``"gemini"`` (default) or ``"vertex"``: whose numbers enums sent as integers'
            " (``enum-encoding=int``) are read with; the two APIs number some"
            " ``finishReason``/``blockReason`` values differently. ``stream_chat`` picks"
            ' ``"vertex"`` for an ``aiplatform.googleapis.com`` base URL unless told.',
            check_api,
        ),
    ]


class GroupBySlotOptions(TypedDict, total=False):
    """``group_by_slot()``'s options: ``SlotTable``'s."""

    slot_policy: Annotated[
        SlotPolicy | SlotPolicyName,
        Option(
            "latest",
            '``"latest"`` (default), ``"positional"``, ``"every_part"``, or a'
            " :class:`~rxgem.SlotPolicy` object: whether a complete call without an id"
            " joins an earlier slot.",
            resolve_policy,
            param="policy",
        ),
    ]


AllowTruncated = Annotated[
    bool,
    Option(
        False,
        "end a stream cut before its end (a candidate without a ``finishReason``; an"
        " Interactions stream without ``interaction.completed``) with a finish instead of"
        " :class:`~rxgem.TruncatedStreamError`.",
    ),
]
"""``allow_truncated``, declared once for the two stages that take it (``flush_on_finish``,
``read_steps``): one option, one flag, whichever upstream is read."""


class FlushOnFinishOptions(TypedDict, total=False):
    """``flush_on_finish()``'s options: ``FinishBuffer``'s."""

    announce: Annotated[
        Announce,
        Option(
            "first",
            '``"first"`` (default) announces each choice\'s first tool call as soon as it'
            ' appears; ``"none"`` holds every call to the end.',
            check_announce,
        ),
    ]
    allow_truncated: AllowTruncated


class ReadStepsOptions(TypedDict, total=False):
    """``read_steps()``'s options: ``StepReader``'s."""

    allow_truncated: AllowTruncated


Upstream = Literal["generate-content", "interactions"]
"""The Gemini API whose stream the pipeline reads: ``streamGenerateContent``, or the
Interactions API (``POST /v1beta/interactions``, ``step.*`` events)."""


class UpstreamOptions(TypedDict, total=False):
    """The pipeline's choice of reader (no core takes it: it chooses the stages)."""

    upstream: Annotated[
        Upstream,
        Option(
            "generate-content",
            '``"generate-content"`` (default): Gemini\'s ``streamGenerateContent`` stream;'
            ' ``"interactions"``: the Interactions API\'s (``step.*`` events), read by'
            " ``parse_interactions`` and ``read_steps`` instead of ``parse`` …"
            " ``flush_on_finish``, whose options it then refuses.",
            check_upstream,
        ),
    ]


class _ChunkOptions(TypedDict, total=False):
    """``ChunkBuilder``'s options but ``model``."""

    include_usage: Annotated[
        bool,
        Option(True, "send the final ``choices: []`` usage chunk (default true)."),
    ]
    reasoning_field: Annotated[
        ReasoningField,
        Option(
            "reasoning_content",
            'the delta field for thought text: ``"reasoning_content"`` (default),'
            ' ``"reasoning"``, or ``None`` to drop thought text.',
            check_reasoning_field,
        ),
    ]
    render_code: Annotated[
        bool,
        Option(
            True,
            "also show code execution as fenced Markdown blocks in the content (default"
            " true); its parts are in ``extra_content.google.parts`` either way.",
        ),
    ]
    signature_in_id: Annotated[
        bool,
        Option(
            False,
            "also put each call's thought signature in its id"
            " (``<id>__thought__<signature>``), for clients that drop unknown fields.",
        ),
    ]
    id_factory: Annotated[
        Callable[[], str],
        Option(
            random_id,
            "returns the random part of minted ``chatcmpl-``/``call_`` ids.",
            check_callable("id_factory"),
        ),
    ]
    clock: Annotated[
        Callable[[], float],
        Option(
            time.time,
            "returns the time in seconds used for ``created``.",
            check_callable("clock"),
        ),
    ]


class _ModelOption(TypedDict, total=False):
    model: Annotated[
        str | None,
        Option(None, "the ``model`` of every chunk; default: Gemini's ``modelVersion``."),
    ]


class ToOpenAIOptions(_ModelOption, _ChunkOptions, total=False):
    """``to_openai()``'s options: ``ChunkBuilder``'s."""


class ToResponsesOptions(_ModelOption, total=False):
    """``to_responses()``'s options: ``ResponsesBuilder``'s."""

    request: Annotated[
        Mapping[str, Any] | None,
        Option(
            None,
            "the Responses request, whose ``tools``, ``tool_choice``, ``parallel_tool_calls``,"
            " ``instructions``, ``metadata``, sampling and other fields the response repeats;"
            ' default: no tools, ``"auto"``, parallel calls allowed.',
            check_request,
        ),
    ]
    include_encrypted_reasoning: Annotated[
        bool,
        Option(
            False,
            "put Gemini's thought signatures in a reasoning item's ``encrypted_content``"
            ' (what ``include: ["reasoning.encrypted_content"]`` asks for).',
        ),
    ]
    namespaced: Annotated[
        Mapping[str, tuple[str, str]] | None,
        Option(
            None,
            "the Gemini name of each function of a ``namespace`` tool (``namespace.name``)"
            " → ``(namespace, name)``, as ``ResponsesRequest.namespaced`` gives it: its"
            " ``function_call`` items get the function's own ``name`` and the"
            " ``namespace``.",
            check_namespaced,
        ),
    ]
    response_id: Annotated[
        str | None,
        Option(
            None,
            "the response's ``id`` on every event; default: ``resp_`` and Gemini's"
            " ``responseId``, or a minted one.",
            check_response_id,
        ),
    ]
    id_factory: Annotated[
        Callable[[], str],
        Option(
            random_id,
            "returns the random part of minted ``resp_``/``msg_``/``rs_``/``fc_``/``call_`` ids.",
            check_callable("id_factory"),
        ),
    ]
    clock: Annotated[
        Callable[[], float],
        Option(
            time.time,
            "returns the time in seconds used for ``created_at``.",
            check_callable("clock"),
        ),
    ]


class StreamOptions(
    UpstreamOptions,
    ParseOptions,
    GroupBySlotOptions,
    FlushOnFinishOptions,
    _ChunkOptions,
    total=False,
):
    """The pipeline's options but ``model`` (which ``stream_chat`` takes as the Gemini model)."""


class PipelineOptions(StreamOptions, _ModelOption, total=False):
    """The keyword options of the whole pipeline (each stage takes its own subset)."""


class ResponsesPipelineOptions(
    UpstreamOptions,
    ParseOptions,
    GroupBySlotOptions,
    FlushOnFinishOptions,
    ToResponsesOptions,
    total=False,
):
    """The keyword options of the Responses pipeline (each stage takes its own subset)."""


class InteractionsPipelineOptions(ReadStepsOptions, _ChunkOptions, _ModelOption, total=False):
    """The keyword options of the Interactions pipeline (``interactions_to_openai``)."""


class InteractionsResponsesOptions(ReadStepsOptions, ToResponsesOptions, total=False):
    """The keyword options of the Interactions Responses pipeline
    (``interactions_to_responses``)."""


def _declared(options: Any) -> dict[str, tuple[Any, Option]]:
    """``options``' keys → (type, :class:`Option`), read from its annotations."""
    declared: dict[str, tuple[Any, Option]] = {}
    for name, hint in get_type_hints(options, include_extras=True).items():
        metadata = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Option)]
        if len(metadata) != 1:
            raise TypeError(f"{options.__name__}.{name} needs one Option in Annotated[...]")
        declared[name] = (hint.__origin__, metadata[0])
    return declared


def options_doc(options: Any, indent: str = "    ") -> str:
    """The lines documenting each option of the ``TypedDict`` ``options``: ``name: doc``."""
    lines = []
    for name, (_, option) in _declared(options).items():
        lines += textwrap.wrap(
            f"{name}: {option.doc}",
            width=88,
            initial_indent=indent,
            subsequent_indent=indent + "    ",
            break_on_hyphens=False,
        )
    return "\n".join(lines)


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
        self.declared = _declared(options) if options is not None else {}
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

_PIPELINES: dict[tuple[str, str], tuple[Stage[Any], ...]] = {
    ("generate-content", "chat"): STAGES,
    ("generate-content", "responses"): RESPONSES_STAGES,
    ("interactions", "chat"): INTERACTIONS_STAGES,
    ("interactions", "responses"): INTERACTIONS_RESPONSES_STAGES,
}


def stages_of(
    upstream: Upstream = "generate-content", output: Output = "chat"
) -> tuple[Stage[Any], ...]:
    """The stages of the pipeline that reads ``upstream``'s stream into ``output``.

    Raises:
        ValueError: for an unknown ``upstream`` or ``output``.
    """
    check_upstream(upstream)
    try:
        return _PIPELINES[upstream, output]
    except KeyError:
        raise ValueError(f"output must be 'chat' or 'responses', not {output!r}") from None


def _names(stages: tuple[Stage[Any], ...]) -> frozenset[str]:
    return frozenset({"upstream", *(name for stage in stages for name in stage.declared)})


_NAMES = {stages: _names(stages) for stages in _PIPELINES.values()}


class PipelineSettings:
    """:class:`PipelineOptions` checked once; makes the cores of one stream.

    ``stages``: the generate-content pipeline of the output wanted (:data:`STAGES` or
    :data:`RESPONSES_STAGES`); the ``upstream`` option swaps its reader for that
    upstream's (:func:`stages_of`).

    Raises:
        TypeError, ValueError: for an unknown option, a bad value, or an option of
            stages the chosen upstream does not have.
    """

    __slots__ = ("makers", "options", "stages", "upstream")

    def __init__(self, options: Mapping[str, Any], stages: tuple[Stage[Any], ...] = STAGES) -> None:
        upstream = options.get("upstream", "generate-content")
        check_upstream(upstream)
        if upstream != "generate-content" and stages in (STAGES, RESPONSES_STAGES):
            stages = _PIPELINES[upstream, "responses" if stages is RESPONSES_STAGES else "chat"]
        names = _NAMES.get(stages) or _names(stages)
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(_unknown(unknown[0], upstream, stages, names))
        self.upstream: str = upstream
        """The upstream whose stream is read (``options``' ``upstream``)."""
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
    name: str, upstream: str, stages: tuple[Stage[Any], ...], names: frozenset[str]
) -> str:
    """The message refusing option ``name``: the stages of another upstream may take it."""
    for (other, _), others in _PIPELINES.items():
        if other != upstream and name in _NAMES[others]:
            return (
                f"pipeline option {name!r} is for the {other} upstream only: the"
                f" {upstream} pipeline ({', '.join(stage.name for stage in stages)}) has"
                " no stage that takes it"
            )
    return f"unknown pipeline option {name!r}; expected one of {', '.join(sorted(names))}"


def _document() -> None:
    """Write each option ``TypedDict``'s attributes into its docstring, from the declaration."""
    for options in (
        UpstreamOptions,
        ParseOptions,
        GroupBySlotOptions,
        FlushOnFinishOptions,
        ReadStepsOptions,
        ToOpenAIOptions,
        StreamOptions,
        PipelineOptions,
        ToResponsesOptions,
        ResponsesPipelineOptions,
        InteractionsPipelineOptions,
        InteractionsResponsesOptions,
    ):
        options.__doc__ = f"{options.__doc__}\n\nAttributes:\n{options_doc(options)}\n"


_document()
