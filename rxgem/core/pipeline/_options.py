"""The pipeline's options, each declared once.

An option is one key of the ``TypedDict`` of the stage whose core takes it, annotated
``Annotated[type, Option(default, doc, check)]``: its name, type, default, check, doc
and core in one line. :class:`ParseOptions` (``ResponseParser``),
:class:`GroupBySlotOptions` (``SlotTable``), :class:`FlushOnFinishOptions`
(``FinishBuffer``), :class:`ReadStepsOptions` (``StepReader``) and
:class:`ToOpenAIOptions` (``ChunkBuilder``) are what the operators take;
:class:`StreamOptions` and :class:`PipelineOptions` unite them for ``gemini_to_openai``,
``Converter`` and ``stream_chat``. Typing reads the ``TypedDict`` (``**options:
Unpack[...]``); at run time the stages (``_stages``: ``STAGES``, ``Stage.maker``,
``PipelineSettings``) read the ``Option`` of each key to check values once and to make
every core with them. The Responses output has its own last stage
(:class:`ToResponsesOptions`, ``ResponsesBuilder``): :class:`ResponsesPipelineOptions`.
The ``upstream`` option (:class:`UpstreamOptions`) chooses the reader stages: Gemini's
``streamGenerateContent`` stream or the Interactions API's
(:class:`InteractionsPipelineOptions`, :class:`InteractionsResponsesOptions`).

Adding an option: a key in its stage's ``TypedDict`` (with its check, if any, in
``_option_checks``, which the core calls too) and the parameter of the
core that uses it. The docs of the ``TypedDict`` classes, and of the operators that
take them, are written from the declaration (:func:`options_doc`).
"""

import textwrap
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, get_type_hints

from .._option_checks import Upstream as Upstream
from .._option_checks import (
    check_announce,
    check_callable,
    check_reasoning_field,
    check_upstream,
)
from ..chat import ReasoningField, random_id
from ..gemini import GeminiApi, check_api
from ..openai import unscrubbed
from ..responses import check_namespaced, check_request, check_response_id
from ..slots import Announce, SlotPolicy, SlotPolicyName, resolve_policy

__all__ = [
    "FlushOnFinishOptions",
    "GroupBySlotOptions",
    "InteractionsPipelineOptions",
    "InteractionsResponsesOptions",
    "Option",
    "ParseOptions",
    "PipelineOptions",
    "ReadStepsOptions",
    "ResponsesPipelineOptions",
    "StreamOptions",
    "ToOpenAIOptions",
    "ToResponsesOptions",
    "Upstream",
    "UpstreamOptions",
    "declared_of",
    "options_doc",
]


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
    scrub: Annotated[
        Callable[[str], str],
        Option(
            unscrubbed,
            "returns what Gemini said (an error's message, a blocked prompt's reason) as a"
            " failed response may show it, e.g. without your keys; default: as it is.",
            check_callable("scrub"),
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


def declared_of(options: Any) -> dict[str, tuple[Any, Option]]:
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
    for name, (_, option) in declared_of(options).items():
        lines += textwrap.wrap(
            f"{name}: {option.doc}",
            width=88,
            initial_indent=indent,
            subsequent_indent=indent + "    ",
            break_on_hyphens=False,
        )
    return "\n".join(lines)


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
