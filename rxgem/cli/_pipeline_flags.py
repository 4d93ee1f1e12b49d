"""The pipeline's options as command-line flags, made from their declaration.

Each option the stages of an output declare (:data:`OUTPUTS`: the Chat Completions
pipeline's :data:`rxgem.core.STAGES`, the Responses pipeline's
:data:`rxgem.core.RESPONSES_STAGES`) gets one flag, its help written from the
option's doc; an option both declare (``api``, ``model``…) gets one flag for both:

- a ``bool`` that defaults to true: ``--no-<name>`` turns it off;
- a ``bool`` that defaults to false: ``--<name>`` turns it on;
- a ``Literal`` (alone or in a union, e.g. with ``None`` or a policy object):
  ``--<name> {choices}``, ``None`` spelled ``none``;
- ``str | None``: ``--<name> TEXT``;
- a callable (``id_factory``, ``clock``): no flag (a function is not written on a
  command line);
- a mapping (the Responses stage's ``request``: the whole request, whose fields the
  response repeats; ``namespaced``: what the request's ``namespace`` tools make of
  their functions' names): no flag (a JSON object is not one option; ``rxgem serve``
  takes it from each request).

Names are written with dashes (``--slot-policy``). An option of another type has no
flag to make: building the parser raises ``TypeError``, so a new option cannot be
left out silently. Only the flags given reach the pipeline's options; the others keep
their declared defaults. A parser given several outputs marks each flag that applies to
one only (``[--to chat only]``), and :func:`pipeline_options` refuses such a flag given
for another output, naming it (a flag that would do nothing is a usage error).
"""

from __future__ import annotations

import argparse
import re
import types
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, Literal, Union, cast, get_args, get_origin, overload

from ..core.pipeline import (
    RESPONSES_STAGES,
    STAGES,
    PipelineOptions,
    ResponsesPipelineOptions,
    Stage,
)
from ._common import UsageError

__all__ = [
    "ALIASES",
    "OUTPUTS",
    "Output",
    "add_pipeline_flags",
    "pipeline_options",
    "refuse_flags",
]

Output = Literal["chat", "responses"]
"""What the pipeline turns Gemini's stream into: Chat Completions chunks or Responses events."""

OUTPUTS: Mapping[Output, tuple[str, tuple[Stage[Any], ...]]] = {
    "chat": ("Chat Completions", STAGES),
    "responses": ("Responses", RESPONSES_STAGES),
}
"""Each output's name for people and its pipeline's stages, whose options make the flags."""

_CHAT: tuple[Output, ...] = ("chat",)

ALIASES: Mapping[str, tuple[str, ...]] = {"include_usage": ("--no-usage",)}
"""Each option's flags besides the one made from its name (kept for the docs that use them)."""

_HELP: Mapping[str, str] = {
    "api": "which API's numbering to read enums sent as integers with: gemini (AI Studio)"
    " or vertex (Vertex AI), which number some finish and block reasons differently",
    "slot_policy": "how a tool call that comes whole and without an id is told apart from"
    " an earlier one: latest (it updates the latest call of that name whose arguments it"
    " repeats or extends), positional (the call at the same part position), every_part"
    " (each part is a new call)",
    "announce": "first: show each answer's first tool call as soon as it starts;"
    " none: hold every call until the answer ends",
    "allow_truncated": "accept a stream cut off before Gemini said it was done: end it"
    " with what arrived instead of an error",
    "model": "the model name written in the output (default: the one Gemini reports)",
    "include_usage": "leave out the final usage chunk (token counts)",
    "reasoning_field": "where the model's thinking goes in each chunk: reasoning_content,"
    " reasoning, or none to leave it out",
    "render_code": "do not copy code execution (code and its result) into the text as"
    " Markdown blocks (it stays in extra_content.google.parts)",
    "signature_in_id": "put each tool call's thought signature in its id as well, for"
    " clients that drop fields they do not know",
    "include_encrypted_reasoning": "put Gemini's thought signatures in reasoning items'"
    " encrypted_content",
    "response_id": "the response id written in every event (default: made from Gemini's)",
}
"""Each option's help at a terminal, in the words of the flag (an option's doc is written
for the Python API: its objects and defaults); an option not here gets its doc."""

_NONE = "none"
_ROLE = re.compile(r":[a-z]+:`~?(?:[\w.]*\.)?(\w+)(?:\(\))?`")  # :class:`~rxgem.X` -> X
_CODE = re.compile(r"``(.+?)``")  # ``x`` -> x
_SAID_DEFAULT = re.compile(r"\s*\(default(?: true| false)?\)")  # the default is shown apart


@dataclass(frozen=True, slots=True)
class _Flag:
    """One option's flag: its names, ``add_argument``'s keywords, and its value from the args."""

    name: str
    flags: tuple[str, ...]
    kwargs: Mapping[str, Any]
    value: Callable[[Any], Any]
    outputs: tuple[Output, ...] = ()
    """The outputs whose pipeline declares the option."""


def _plain(doc: str) -> str:
    """An option's doc without its RST markup and without "(default …)" remarks."""
    text = _SAID_DEFAULT.sub("", _CODE.sub(r"\1", _ROLE.sub(r"\1", doc)))
    return " ".join(text.split()).replace("%", "%%")  # argparse formats help with %


def _choices(kind: Any) -> tuple[Any, ...] | None:
    """The values a ``Literal`` (or a union holding one) allows, with ``None``; else ``None``."""
    if get_origin(kind) is Literal:
        return get_args(kind)
    if get_origin(kind) in (Union, types.UnionType):
        arms = get_args(kind)
        literals = [value for arm in arms if get_origin(arm) is Literal for value in get_args(arm)]
        if literals:
            return (*literals, None) if type(None) in arms else tuple(literals)
    return None


def _is_mapping(kind: Any) -> bool:
    """Whether ``kind`` is a ``Mapping[...]`` (alone or in a union, e.g. with ``None``)."""
    arms = get_args(kind) if get_origin(kind) in (Union, types.UnionType) else (kind,)
    return any(arm is Mapping or get_origin(arm) is Mapping for arm in arms)


def _flag(name: str, kind: Any, default: Any, doc: str) -> _Flag | None:
    dashed = name.replace("_", "-")
    worded = _HELP.get(name)
    help_text = worded.replace("%", "%%") if worded is not None else _plain(doc)
    if get_origin(kind) is Callable or _is_mapping(kind):
        return None
    if kind is bool and default is True:
        return _Flag(
            name,
            (f"--no-{dashed}", *ALIASES.get(name, ())),
            {
                "action": "store_const",
                "const": False,
                "help": help_text if worded is not None else f"turn off: {help_text}",
            },
            bool,
        )
    if kind is bool and default is False:
        return _Flag(
            name,
            (f"--{dashed}", *ALIASES.get(name, ())),
            {"action": "store_const", "const": True, "help": f"{help_text} (default: off)"},
            bool,
        )
    choices = _choices(kind)
    if choices is not None:
        if None in choices and _NONE in choices:
            raise TypeError(f"option {name!r}: None and {_NONE!r} would be spelled alike")
        by_word = {_NONE if value is None else str(value): value for value in choices}
        shown = _NONE if default is None else str(default)
        if worded is None:
            help_text = _plain(doc.replace("``None``", f"``{_NONE}``"))
        return _Flag(
            name,
            (f"--{dashed}", *ALIASES.get(name, ())),
            {"choices": tuple(by_word), "help": f"{help_text} (default: {shown})"},
            by_word.__getitem__,
        )
    if kind is str or set(get_args(kind)) == {str, type(None)}:
        said = "" if "default" in help_text else f" (default: {default})"
        return _Flag(
            name,
            (f"--{dashed}", *ALIASES.get(name, ())),
            {"metavar": "TEXT", "help": f"{help_text}{said}"},
            str,
        )
    raise TypeError(f"option {name!r} of type {kind!r} has no command-line flag: declare one")


@cache
def _flags() -> tuple[_Flag, ...]:
    """The flag of each declared option that takes one, in the order of the stages (the
    Chat Completions pipeline's, then the options only the Responses stage declares),
    each with the outputs it applies to.

    Raises:
        TypeError: for an option both outputs declare, but not alike (one flag cannot
            mean two things).
    """
    made: dict[str, _Flag] = {}
    for output, (_, stages) in OUTPUTS.items():
        for stage in stages:
            for name, (kind, option) in stage.declared.items():
                flag = _flag(name, kind, option.default, option.doc)
                if flag is None:
                    continue
                seen = made.get(name)
                if seen is None:
                    made[name] = replace(flag, outputs=(output,))
                elif (seen.flags, seen.kwargs) != (flag.flags, flag.kwargs):
                    raise TypeError(f"option {name!r} is declared differently by two outputs")
                elif output not in seen.outputs:
                    made[name] = replace(seen, outputs=(*seen.outputs, output))
    return tuple(made.values())


def add_pipeline_flags(
    parser: argparse.ArgumentParser,
    only: Collection[str] | None = None,
    description: str = "how the Gemini stream is translated",
    outputs: Collection[Output] = _CHAT,
) -> None:
    """Add a flag for each option of the pipelines of ``outputs`` (of those named in
    ``only``, if given) to ``parser``, in a group of their own.

    With several ``outputs``, the help of a flag that applies to one only says so.
    """
    group = parser.add_argument_group("pipeline options", description)
    for flag in _flags():
        applies = [output for output in flag.outputs if output in outputs]
        if not applies or (only is not None and flag.name not in only):
            continue
        kwargs = dict(flag.kwargs)
        if len(applies) < len(outputs):
            kwargs["help"] = f"[--to {' or '.join(applies)} only] {kwargs['help']}"
        group.add_argument(*flag.flags, dest=flag.name, default=argparse.SUPPRESS, **kwargs)


def _spelled(flag: _Flag) -> str:
    return " (or ".join(flag.flags) + ")" * (len(flag.flags) - 1)


def refuse_flags(options: Mapping[str, Any], stages: tuple[Stage[Any], ...], what: str) -> None:
    """Refuse an option of ``options`` (given by a flag) that none of ``stages`` takes.

    Raises:
        UsageError: naming the flag and ``what`` has no use for it (``--from interactions``).
    """
    names = {name for stage in stages for name in stage.declared}
    for flag in _flags():
        if flag.name in options and flag.name not in names:
            raise UsageError(
                f"{_spelled(flag)} does nothing for {what}: its pipeline"
                f" ({', '.join(stage.name for stage in stages)}) has no {flag.name} option"
            )


@overload
def pipeline_options(
    args: argparse.Namespace, output: Literal["chat"] = "chat"
) -> PipelineOptions: ...


@overload
def pipeline_options(
    args: argparse.Namespace, output: Literal["responses"]
) -> ResponsesPipelineOptions: ...


def pipeline_options(
    args: argparse.Namespace, output: Output = "chat"
) -> PipelineOptions | ResponsesPipelineOptions:
    """The options of ``output``'s pipeline that the flags in ``args`` give (the flags
    not given are left out).

    Raises:
        UsageError: for a flag given that ``output``'s pipeline does not take, named.
    """
    given = vars(args)
    options: dict[str, Any] = {}
    for flag in _flags():
        if flag.name not in given:
            continue
        if output not in flag.outputs:
            spelled = _spelled(flag)
            others = " or ".join(f"--to {other}" for other in flag.outputs)
            raise UsageError(
                f"{spelled} is for {others} only: the {OUTPUTS[output][0]} output"
                f" (--to {output}) has no {flag.name} option"
            )
        options[flag.name] = flag.value(given[flag.name])
    return cast("PipelineOptions | ResponsesPipelineOptions", options)
