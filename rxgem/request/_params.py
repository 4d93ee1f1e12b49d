"""OpenAI request parameters → Gemini ``generationConfig``, ``thinkingConfig``, tools.

Each OpenAI parameter maps to its Gemini counterpart, or is named as an
approximation (README, "Requests"), or, having no counterpart that would keep the
request's meaning, is *unsupported*: an :class:`UnsupportedFieldError` (an
:class:`~rxgem.InvalidRequestError`) by default, dropped with an
:class:`UnsupportedWarning` with ``unsupported="warn"``.
"""

from __future__ import annotations

import math
import re
import warnings
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias

from ..core import InvalidRequestError
from ._json import JSONObject, quoted
from ._model_families import ModelFamily
from ._settings import Function, Settings, Thinking, Tools
from .schema._convert import SchemaTarget, to_gemini_schema

__all__ = [
    "BUDGETS",
    "MAX_CANDIDATES",
    "SchemaWarning",
    "Unsupported",
    "UnsupportedFieldError",
    "UnsupportedWarning",
    "check_function_name",
    "converted_schema",
    "read_function",
    "read_generation",
    "read_thinking",
    "read_tool_choice",
    "read_tools",
    "schema_target",
    "unsupported",
]

Unsupported: TypeAlias = Literal["error", "warn"]

MAX_CANDIDATES = 8
"""The most candidates (``n``, Gemini's ``candidateCount``) Gemini makes per request."""


class UnsupportedWarning(UserWarning):
    """A request field had no Gemini counterpart and was left out (``unsupported="warn"``)."""


class UnsupportedFieldError(InvalidRequestError):
    """A request field with no Gemini counterpart, refused (``unsupported="error"``).

    :attr:`reason` speaks to whoever wrote the request, in the request's own terms: what
    Gemini lacks and which field to change. ``rxgem serve`` sends it to HTTP clients as the
    400's message, so it never names this library's arguments. The exception's text
    (``str()``, a traceback) adds what only a Python caller can do: pass
    ``unsupported="warn"`` to have the field left out with a warning.
    """

    def __init__(self, reason: str, *, where: str = "") -> None:
        super().__init__(reason, where=where)
        self.args = (f'{self.args[0]} (unsupported="warn" drops it with a warning)',)


class SchemaWarning(UserWarning):
    """A JSON Schema keyword Gemini lacks was approximated or left out (the message says how)."""


_SCHEMA_TARGETS: Final = MappingProxyType({"gemini": "json_schema", "vertex": "openapi"})
"""The schema dialect of each ``api``: the Gemini API takes full JSON Schema
(``parametersJsonSchema``, ``responseJsonSchema``), Vertex AI the OpenAPI subset
(``parameters``, ``responseSchema``)."""


def schema_target(api: object) -> SchemaTarget:
    """The schema dialect a request for ``api`` is written in (the translations' ``api``
    option, read once; raises ``ValueError`` for an API that is neither)."""
    target = _SCHEMA_TARGETS.get(api) if isinstance(api, str) else None
    if target is None:
        raise ValueError(f"api must be 'gemini' or 'vertex', not {api!r}")
    return target  # type: ignore[return-value]


def converted_schema(schema: JSONObject, where: str, target: SchemaTarget) -> JSONObject:
    """``schema`` for Gemini, each approximation made a :class:`SchemaWarning`."""
    notes: list[str] = []
    converted = to_gemini_schema(schema, where=where, target=target, notes=notes)
    for note in notes:
        warnings.warn(note, SchemaWarning, stacklevel=5)
    return converted


def unsupported(policy: Unsupported, reason: str, where: str, remedy: str) -> None:
    """Refuse (``"error"``) or warn about (``"warn"``) a field Gemini cannot honour.

    ``reason`` says what Gemini lacks; ``remedy`` what to change in the request, in the
    words of the request (its fields), as an HTTP client reads the refusal too.
    """
    if policy == "error":
        raise UnsupportedFieldError(f"{reason}; {remedy}", where=where)
    warnings.warn(f"{where}: {reason}; left out", UnsupportedWarning, stacklevel=4)


def _number(body: JSONObject, key: str, kinds: tuple[type, ...] = (int, float)) -> Any:
    value = body.get(key)
    if value is not None and (type(value) not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        raise InvalidRequestError(f"must be {names}", where=key)
    if type(value) is float and not math.isfinite(value):  # JSON has no NaN or Infinity
        raise InvalidRequestError("must be a finite number", where=key)
    return value


def read_generation(body: JSONObject, settings: Settings) -> None:
    """A Chat Completions request's sampling, limits, stop sequences and modalities."""
    limits = {
        k: body[k] for k in ("max_completion_tokens", "max_tokens") if body.get(k) is not None
    }
    for key, value in limits.items():
        if type(value) is not int or value < 1:
            raise InvalidRequestError("must be a positive integer", where=key)
    if len(set(limits.values())) > 1:
        raise InvalidRequestError(
            "max_tokens and max_completion_tokens disagree; send one", where="max_tokens"
        )
    if limits:
        settings.max_output_tokens = next(iter(limits.values()))
    settings.temperature = _number(body, "temperature")
    settings.top_p = _number(body, "top_p")
    settings.presence_penalty = _number(body, "presence_penalty")
    settings.frequency_penalty = _number(body, "frequency_penalty")
    n = settings.candidates = _number(body, "n", (int,))
    settings.seed = _number(body, "seed", (int,))
    settings.top_logprobs = _number(body, "top_logprobs", (int,))
    if n is not None and not 1 <= n <= MAX_CANDIDATES:
        # each candidate is a whole answer held and converted: Gemini's own bound, checked
        # before asking (the value is not repeated: it may be thousands of digits)
        raise InvalidRequestError(
            f"must be from 1 to {MAX_CANDIDATES}: Gemini makes at most {MAX_CANDIDATES}"
            " candidates per request",
            where="n",
        )
    if body.get("logprobs") is not None:
        if type(body["logprobs"]) is not bool:
            raise InvalidRequestError("must be a boolean", where="logprobs")
        settings.logprobs = body["logprobs"]
    stop = body.get("stop")
    if stop is not None:
        sequences = [stop] if type(stop) is str else stop
        if type(sequences) is not list or not all(type(s) is str for s in sequences):
            raise InvalidRequestError("must be a string or a list of strings", where="stop")
        if len(sequences) > 5:
            raise InvalidRequestError("Gemini takes at most 5 stop sequences", where="stop")
        settings.stop = sequences
    modalities = body.get("modalities")
    if modalities is not None:
        if type(modalities) is not list or not all(m in ("text", "audio") for m in modalities):
            raise InvalidRequestError('must list "text" and/or "audio"', where="modalities")
        settings.modalities = modalities


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
                warnings.warn(
                    "reasoning_effort: Gemini 3 cannot stop thinking; sent its lowest level,"
                    f" {levels[0]!r}",
                    UnsupportedWarning,
                    stacklevel=3,
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
                    warnings.warn(
                        "reasoning_effort: Gemini 2.5 Pro cannot stop thinking; sent its"
                        " smallest budget, 128 tokens",
                        UnsupportedWarning,
                        stacklevel=3,
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


def read_tools(body: JSONObject, *, schema_target: SchemaTarget, policy: Unsupported) -> Tools:
    """The functions a Chat Completions request declares (those ``tool_choice`` allows), and
    whether it asks for web search."""
    declared = body.get("tools")
    if declared is None:
        declared = []
    if type(declared) is not list:
        raise InvalidRequestError("must be a list", where="tools")
    allowed = _allowed_tools(body.get("tool_choice"))
    functions: list[Function] = []
    for i, tool in enumerate(declared):
        where = f"tools[{i}]"
        kind = tool.get("type") if type(tool) is dict else None
        if kind != "function":
            unsupported(
                policy,
                f"tool type {quoted(kind)} has no Gemini counterpart",
                f"{where}.type",
                f"drop {where} from the request",
            )
            continue
        function = tool.get("function")
        if type(function) is not dict:
            raise InvalidRequestError("a function tool needs a function", where=f"{where}.function")
        name = check_function_name(function.get("name"), f"{where}.function.name")
        if allowed is not None and name not in allowed:
            continue  # tool_choice allowed_tools: the others are not offered
        functions.append(read_function(name, function, f"{where}.function", schema_target))
    return Tools(functions, search=body.get("web_search_options") is not None)


def _allowed_tools(choice: Any) -> set[str] | None:
    if type(choice) is dict and choice.get("type") == "allowed_tools":
        spec = choice.get("allowed_tools")
        listed = spec.get("tools") if type(spec) is dict else None
        if type(listed) is not list:
            raise InvalidRequestError("must list tools", where="tool_choice.allowed_tools.tools")
        names = set()
        for i, tool in enumerate(listed):
            function = tool.get("function") if type(tool) is dict else None
            name = function.get("name") if type(function) is dict else None
            if type(name) is not str:
                raise InvalidRequestError(
                    "must name a function", where=f"tool_choice.allowed_tools.tools[{i}]"
                )
            names.add(name)
        return names
    return None


_MODES: Final = MappingProxyType({"auto": "auto", "none": "none", "required": "any"})


def read_tool_choice(body: JSONObject, tools: Tools, policy: Unsupported) -> None:
    """``tool_choice`` and ``parallel_tool_calls`` of a Chat Completions request, into
    ``tools`` (its functions read)."""
    choice = body.get("tool_choice")
    names = [function.name for function in tools.functions]
    if choice is None:
        pass
    elif type(choice) is str and choice in _MODES:
        tools.mode = _MODES[choice]  # type: ignore[assignment]
    elif type(choice) is dict and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if type(function) is dict else None
        if name not in names:
            raise InvalidRequestError(
                f"names a function the request does not declare: {quoted(name)}",
                where="tool_choice.function.name",
            )
        tools.mode, tools.only = "any", [name]
    elif type(choice) is dict and choice.get("type") == "allowed_tools":
        mode = (choice.get("allowed_tools") or {}).get("mode", "auto")
        if mode not in ("auto", "required"):
            raise InvalidRequestError(
                'must be "auto" or "required"', where="tool_choice.allowed_tools.mode"
            )
        tools.mode = "auto" if mode == "auto" else "any"
    else:
        raise InvalidRequestError(
            'must be "auto", "none", "required", a function or allowed_tools', where="tool_choice"
        )
    if body.get("parallel_tool_calls") is False and len(names) > 1:
        unsupported(
            policy,
            "Gemini cannot be kept from calling several functions at once",
            "parallel_tool_calls",
            "drop parallel_tool_calls: false from the request, or declare one tool",
        )


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
