"""The pipeline's options as command-line flags, made from their declaration.

Each option the pipeline's stages declare (:data:`rxgem.core.STAGES`) gets one flag,
its help written from the option's doc:

- a ``bool`` that defaults to true: ``--no-<name>`` turns it off;
- a ``bool`` that defaults to false: ``--<name>`` turns it on;
- a ``Literal`` (alone or in a union, e.g. with ``None`` or a policy object):
  ``--<name> {choices}``, ``None`` spelled ``none``;
- ``str | None``: ``--<name> TEXT``;
- a callable (``id_factory``, ``clock``): no flag.

Names are written with dashes (``--slot-policy``). An option of another type has no
flag to make: building the parser raises ``TypeError``, so a new option cannot be
left out silently. Only the flags given reach the pipeline's options; the others keep
their declared defaults.
"""

from __future__ import annotations

import argparse
import re
import types
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal, Union, cast, get_args, get_origin

from ..core import STAGES, PipelineOptions

__all__ = ["ALIASES", "add_pipeline_flags", "pipeline_options"]

ALIASES: Mapping[str, tuple[str, ...]] = {"include_usage": ("--no-usage",)}
"""Each option's flags besides the one made from its name (kept for the docs that use them)."""

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


def _flag(name: str, kind: Any, default: Any, doc: str) -> _Flag | None:
    dashed = name.replace("_", "-")
    help_text = _plain(doc)
    if get_origin(kind) is Callable:
        return None
    if kind is bool and default is True:
        return _Flag(
            name,
            (f"--no-{dashed}", *ALIASES.get(name, ())),
            {
                "action": "store_const",
                "const": False,
                "help": f"{help_text} (on by default; this flag turns it off)",
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
    """The flag of each declared option that takes one, in the order of the stages."""
    made = (
        _flag(name, kind, option.default, option.doc)
        for stage in STAGES
        for name, (kind, option) in stage.declared.items()
    )
    return tuple(flag for flag in made if flag is not None)


def add_pipeline_flags(
    parser: argparse.ArgumentParser,
    only: Collection[str] | None = None,
    description: str = "how the Gemini stream is translated (each flag one option)",
) -> None:
    """Add a flag for each pipeline option (of those named in ``only``, if given) to
    ``parser``, in a group of their own."""
    group = parser.add_argument_group("pipeline options", description)
    for flag in _flags():
        if only is None or flag.name in only:
            group.add_argument(
                *flag.flags, dest=flag.name, default=argparse.SUPPRESS, **flag.kwargs
            )


def pipeline_options(args: argparse.Namespace) -> PipelineOptions:
    """The pipeline options the flags in ``args`` give (the flags not given are left out)."""
    given = vars(args)
    return cast(
        PipelineOptions,
        {flag.name: flag.value(given[flag.name]) for flag in _flags() if flag.name in given},
    )
