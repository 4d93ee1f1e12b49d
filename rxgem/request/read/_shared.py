"""What both readers check alike: a function's name and schema, the thinking a reasoning
effort asks of a model's family, the bound on candidates."""

from __future__ import annotations

import re
from typing import Any

from ...core import InvalidRequestError
from .._json import JSONObject
from .._model_families import ModelFamily
from .._policy import SchemaWarning, Unsupported, UnsupportedWarning, unsupported, warn
from ..form import Function, Settings, Thinking
from ..schema._convert import SchemaTarget, to_gemini_schema

__all__ = [
    "BUDGETS",
    "MAX_CANDIDATES",
    "check_function_name",
    "converted_schema",
    "read_answer_format",
    "read_function",
    "read_thinking",
]

MAX_CANDIDATES = 8
"""The most candidates (``n``, Gemini's ``candidateCount``) Gemini makes per request."""


def converted_schema(schema: JSONObject, where: str, target: SchemaTarget) -> JSONObject:
    """``schema`` for Gemini, each approximation made a :class:`SchemaWarning`."""
    notes: list[str] = []
    converted = to_gemini_schema(schema, where=where, target=target, notes=notes)
    for note in notes:
        warn(note, SchemaWarning)
    return converted


def read_answer_format(
    spec: Any,
    where: str,
    settings: Settings,
    target: SchemaTarget,
    *,
    generation: float,
    has_functions: bool,
    holder: str | None = None,
) -> None:
    """A JSON answer format (Chat's ``response_format``, Responses' ``text.format``, at
    ``where``) into ``settings``; its schema sits in ``spec[holder]`` (Chat's
    ``json_schema``), else beside its type."""
    if spec is None:
        return
    kind = spec.get("type") if type(spec) is dict else None
    if kind == "text":
        return
    if kind not in ("json_object", "json_schema"):
        raise InvalidRequestError(
            'must be {"type": "text" | "json_object" | "json_schema", ...}', where=where
        )
    if has_functions and generation < 3:
        raise InvalidRequestError(
            "Gemini before 3 refuses a JSON response format together with function calling",
            where=where,
        )
    settings.json = True
    if kind == "json_schema":
        inner = spec.get(holder) if holder else spec
        schema = inner.get("schema") if type(inner) is dict else None
        at = f"{where}.{holder}.schema" if holder else f"{where}.schema"
        if type(schema) is not dict:
            raise InvalidRequestError("must be a JSON Schema object", where=at)
        settings.schema = converted_schema(schema, at, target)


BUDGETS: dict[str, int] = {"minimal": 512, "low": 1024, "medium": 8192, "high": 24576}
"""Gemini 2.5 ``thinkingBudget`` per ``reasoning_effort`` (Google's compatible endpoint's
1K/8K/24K for low/medium/high)."""
_MAX_BUDGET = {"pro": 32768, "flash": 24576, "flash-lite": 24576}
_MIN_BUDGET = {"pro": 128, "flash": 0, "flash-lite": 0}
_LEVELS = {
    "pro": ("low", "high"),
    "flash": ("minimal", "low", "medium", "high"),
    "flash-lite": ("minimal", "low", "medium", "high"),
}
_ORDER = ("minimal", "low", "medium", "high")


def read_thinking(
    effort: Any,
    family: ModelFamily,
    include_thoughts: bool | None,
    policy: Unsupported,
    where: str = "reasoning_effort",
) -> Thinking | None:
    """The thinking a reasoning effort (the field at ``where``, already checked to be one
    of OpenAI's efforts or ``None``) asks of the model's family."""
    thinking = Thinking(where)
    if effort is not None:
        if effort not in ("none", "minimal", "low", "medium", "high", "xhigh"):
            raise InvalidRequestError(
                "must be none, minimal, low, medium, high or xhigh", where=where
            )
        if family.thinks_in_levels:
            levels = _LEVELS[family.tier]
            if effort == "none":
                warn(
                    "reasoning_effort: Gemini 3 cannot stop thinking; sent its lowest level,"
                    f" {levels[0]!r}",
                    UnsupportedWarning,
                )
                thinking.level = levels[0]
            elif effort == "xhigh":
                thinking.level = levels[-1]
            else:  # the level, or the next one up that the model has
                wanted = _ORDER.index(effort)
                thinking.level = next(
                    (lvl for lvl in levels if _ORDER.index(lvl) >= wanted), levels[-1]
                )
        elif family.thinks_in_budget:
            if effort == "none":
                thinking.budget = _MIN_BUDGET[family.tier]
                if family.tier == "pro":
                    warn(
                        "reasoning_effort: Gemini 2.5 Pro cannot stop thinking; sent its"
                        " smallest budget, 128 tokens",
                        UnsupportedWarning,
                    )
            elif effort == "xhigh":
                thinking.budget = _MAX_BUDGET[family.tier]
            else:
                thinking.budget = max(BUDGETS[effort], _MIN_BUDGET[family.tier])
        else:
            unsupported(
                policy,
                "this model does not think",
                where,
                "leave out the reasoning effort, or ask a Gemini 2.5 or later model",
            )
            return None
    if include_thoughts is not None and (family.thinks_in_levels or family.thinks_in_budget):
        thinking.include_thoughts = include_thoughts
    if thinking.level is None and thinking.budget is None and thinking.include_thoughts is None:
        return None
    return thinking


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")


def check_function_name(name: object, where: str, hint: str = "") -> str:
    """``name``, if Gemini takes it as a function name (``where`` names the field)."""
    if type(name) is not str or not _NAME.fullmatch(name):
        raise InvalidRequestError(
            "a Gemini function name starts with a letter or _, has only letters, digits,"
            f" _ . : - and at most 64 characters{hint}",
            where=where,
        )
    return name


def read_function(name: str, function: JSONObject, where: str, target: SchemaTarget) -> Function:
    """An OpenAI function (its ``description`` and ``parameters``, at ``where``), named
    ``name``, its schema translated for ``target``."""
    out = Function(name)
    description = function.get("description")
    if type(description) is str and description:
        out.description = description
    parameters = function.get("parameters")
    if parameters is not None and parameters != {}:
        at = f"{where}.parameters"
        if type(parameters) is not dict:
            raise InvalidRequestError("must be a JSON Schema object", where=at)
        converted = converted_schema(parameters, at, target)
        if converted.get("properties") or converted.get("type") not in ("object", "OBJECT"):
            out.parameters = converted
    return out
