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

Adding an option: a key in its stage's ``TypedDict`` (with its check, if any, in
``_option_checks``, which the core calls too) and the parameter of the
core that uses it. The docs of the ``TypedDict`` classes, and of the operators that
take them, are written from the declaration (:func:`options_doc`).
"""

import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypedDict, TypeVar, get_type_hints

from ._option_checks import check_announce, check_api, check_callable, check_reasoning_field
from .chat._chunk_builder import ChunkBuilder, ReasoningField
from .chat._mapping import random_id
from .gemini._enums import GeminiApi
from .gemini._parser import ResponseParser
from .responses._builder import ResponsesBuilder
from .responses._mapping import check_namespaced, check_request, check_response_id
from .slots._args_table import ArgsTable
from .slots._finish_buffer import Announce, FinishBuffer
from .slots._policies import SlotPolicy, SlotPolicyName, resolve_policy
from .slots._table import SlotTable
from .sse._decoder import SSEDecoder

__all__ = [
    "RESPONSES_STAGES",
    "STAGES",
    "FlushOnFinishOptions",
    "GroupBySlotOptions",
    "Option",
    "ParseOptions",
    "PipelineOptions",
    "PipelineSettings",
    "ResponsesPipelineOptions",
    "Stage",
    "StreamOptions",
    "ToOpenAIOptions",
    "ToResponsesOptions",
    "options_doc",
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
    allow_truncated: Annotated[
        bool,
        Option(
            False,
            "end a candidate that never got a ``finishReason`` with a finish instead of"
            " :class:`~rxgem.TruncatedStreamError`.",
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
    ParseOptions, GroupBySlotOptions, FlushOnFinishOptions, _ChunkOptions, total=False
):
    """The pipeline's options but ``model`` (which ``stream_chat`` takes as the Gemini model)."""


class PipelineOptions(StreamOptions, _ModelOption, total=False):
    """The keyword options of the whole pipeline (each stage takes its own subset)."""


class ResponsesPipelineOptions(
    ParseOptions, GroupBySlotOptions, FlushOnFinishOptions, ToResponsesOptions, total=False
):
    """The keyword options of the Responses pipeline (each stage takes its own subset)."""


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

_NAMES = frozenset(name for stage in STAGES for name in stage.declared)


class PipelineSettings:
    """:class:`PipelineOptions` checked once; makes the six cores of one stream.

    Raises:
        TypeError, ValueError: for an unknown option or a bad value.
    """

    __slots__ = ("makers", "options")

    def __init__(self, options: Mapping[str, Any], stages: tuple[Stage[Any], ...] = STAGES) -> None:
        names = _NAMES if stages is STAGES else {n for stage in stages for n in stage.declared}
        unknown = sorted(set(options) - names)
        if unknown:
            raise TypeError(
                f"unknown pipeline option {unknown[0]!r}; expected one of"
                f" {', '.join(sorted(names))}"
            )
        self.options: Mapping[str, Any] = dict(options)
        self.makers: tuple[Callable[[], Any], ...] = tuple(
            stage.maker(options, strict=False) for stage in stages
        )
        """Each stage's maker of fresh cores, in the order of ``stages`` (:data:`STAGES`)."""

    def cores(self) -> tuple[Any, ...]:
        """Fresh cores for one stream, in the order of :data:`STAGES`."""
        return tuple(make() for make in self.makers)


def _document() -> None:
    """Write each option ``TypedDict``'s attributes into its docstring, from the declaration."""
    for options in (
        ParseOptions,
        GroupBySlotOptions,
        FlushOnFinishOptions,
        ToOpenAIOptions,
        StreamOptions,
        PipelineOptions,
        ToResponsesOptions,
        ResponsesPipelineOptions,
    ):
        options.__doc__ = f"{options.__doc__}\n\nAttributes:\n{options_doc(options)}\n"


_document()
