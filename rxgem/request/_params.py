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
    "function_declaration",
    "generation_config",
    "response_schema_field",
    "schema_target",
    "thinking_config",
    "tool_config",
    "tools",
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

_RESPONSE_SCHEMA: Final = MappingProxyType(
    {"json_schema": "responseJsonSchema", "openapi": "responseSchema"}
)


def schema_target(api: object) -> SchemaTarget:
    """The schema dialect a request for ``api`` is written in (the translations' ``api``
    option, read once; raises ``ValueError`` for an API that is neither)."""
    target = _SCHEMA_TARGETS.get(api) if isinstance(api, str) else None
    if target is None:
        raise ValueError(f"api must be 'gemini' or 'vertex', not {api!r}")
    return target  # type: ignore[return-value]


def response_schema_field(target: SchemaTarget) -> str:
    """The ``generationConfig`` field a response format's schema goes in, in ``target``'s
    dialect."""
    return _RESPONSE_SCHEMA[target]


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


def generation_config(body: JSONObject, policy: Unsupported) -> JSONObject:
    """``generationConfig`` but thinking and the response format."""
    config: JSONObject = {}
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
        config["maxOutputTokens"] = next(iter(limits.values()))
    for key, wire in (
        ("temperature", "temperature"),
        ("top_p", "topP"),
        ("presence_penalty", "presencePenalty"),
        ("frequency_penalty", "frequencyPenalty"),
    ):
        value = _number(body, key)
        if value is not None:
            config[wire] = value
    for key, wire in (("n", "candidateCount"), ("seed", "seed"), ("top_logprobs", "logprobs")):
        value = _number(body, key, (int,))
        if value is not None:
            config[wire] = value
    n = config.get("candidateCount")
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
        config["responseLogprobs"] = body["logprobs"]
    stop = body.get("stop")
    if stop is not None:
        sequences = [stop] if type(stop) is str else stop
        if type(sequences) is not list or not all(type(s) is str for s in sequences):
            raise InvalidRequestError("must be a string or a list of strings", where="stop")
        if len(sequences) > 5:
            raise InvalidRequestError("Gemini takes at most 5 stop sequences", where="stop")
        config["stopSequences"] = sequences
    modalities = body.get("modalities")
    if modalities is not None:
        if type(modalities) is not list or not all(m in ("text", "audio") for m in modalities):
            raise InvalidRequestError('must list "text" and/or "audio"', where="modalities")
        config["responseModalities"] = [m.upper() for m in modalities]
    return config


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


def thinking_config(
    effort: Any, family: ModelFamily, include_thoughts: bool | None, policy: Unsupported
) -> JSONObject | None:
    """``thinkingConfig`` for ``reasoning_effort`` on the model's family."""
    config: JSONObject = {}
    if effort is not None:
        if effort not in ("none", "minimal", "low", "medium", "high", "xhigh"):
            raise InvalidRequestError(
                "must be none, minimal, low, medium, high or xhigh", where="reasoning_effort"
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
                config["thinkingLevel"] = levels[0]
            elif effort == "xhigh":
                config["thinkingLevel"] = levels[-1]
            else:  # the level, or the next one up that the model has
                wanted = _ORDER.index(effort)
                config["thinkingLevel"] = next(
                    (lvl for lvl in levels if _ORDER.index(lvl) >= wanted), levels[-1]
                )
        elif family.thinks_in_budget:
            if effort == "none":
                config["thinkingBudget"] = _MIN_BUDGET[family.tier]
                if family.tier == "pro":
                    warnings.warn(
                        "reasoning_effort: Gemini 2.5 Pro cannot stop thinking; sent its"
                        " smallest budget, 128 tokens",
                        UnsupportedWarning,
                        stacklevel=3,
                    )
            elif effort == "xhigh":
                config["thinkingBudget"] = _MAX_BUDGET[family.tier]
            else:
                config["thinkingBudget"] = max(BUDGETS[effort], _MIN_BUDGET[family.tier])
        else:
            unsupported(
                policy,
                "this model does not think",
                "reasoning_effort",
                "leave out the reasoning effort, or ask a Gemini 2.5 or later model",
            )
            return None
    if include_thoughts is not None and (family.thinks_in_levels or family.thinks_in_budget):
        config["includeThoughts"] = include_thoughts
    return config or None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}")


def tools(
    body: JSONObject, *, schema_target: SchemaTarget, policy: Unsupported
) -> tuple[list[JSONObject], list[str]]:
    """Gemini ``tools`` and the names of the declared functions, in order."""
    declared = body.get("tools")
    if declared is None:
        declared = []
    if type(declared) is not list:
        raise InvalidRequestError("must be a list", where="tools")
    allowed = _allowed_tools(body.get("tool_choice"))
    declarations: list[JSONObject] = []
    names: list[str] = []
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
        declaration = function_declaration(name, function, f"{where}.function", schema_target)
        declarations.append(declaration)
        names.append(name)
    out: list[JSONObject] = []
    if declarations:
        out.append({"functionDeclarations": declarations})
    if body.get("web_search_options") is not None:
        out.append({"googleSearch": {}})
    return out, names


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


def tool_config(
    body: JSONObject, names: list[str], family: ModelFamily, has_search: bool, policy: Unsupported
) -> JSONObject | None:
    """``toolConfig`` for ``tool_choice`` and ``parallel_tool_calls``."""
    choice = body.get("tool_choice")
    calling: JSONObject = {}
    if choice is None:
        pass
    elif choice in ("auto", "none", "required"):
        calling["mode"] = {"auto": "AUTO", "none": "NONE", "required": "ANY"}[choice]
    elif type(choice) is dict and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if type(function) is dict else None
        if name not in names:
            raise InvalidRequestError(
                f"names a function the request does not declare: {quoted(name)}",
                where="tool_choice.function.name",
            )
        calling = {"mode": "ANY", "allowedFunctionNames": [name]}
    elif type(choice) is dict and choice.get("type") == "allowed_tools":
        mode = (choice.get("allowed_tools") or {}).get("mode", "auto")
        if mode not in ("auto", "required"):
            raise InvalidRequestError(
                'must be "auto" or "required"', where="tool_choice.allowed_tools.mode"
            )
        calling["mode"] = "AUTO" if mode == "auto" else "ANY"
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
    config: JSONObject = {}
    if calling:
        config["functionCallingConfig"] = calling
    if has_search and names and family.generation >= 3:
        config["includeServerSideToolInvocations"] = True  # built-in tools beside functions
    return config or None


def check_function_name(name: object, where: str, hint: str = "") -> str:
    """``name``, if Gemini takes it as a function name (``where`` names the field)."""
    if type(name) is not str or not _NAME.fullmatch(name):
        raise InvalidRequestError(
            "a Gemini function name starts with a letter or _, has only letters, digits,"
            f" _ . : - and at most 64 characters{hint}",
            where=where,
        )
    return name


def function_declaration(
    name: str, function: JSONObject, where: str, target: SchemaTarget
) -> JSONObject:
    """Gemini's ``functionDeclaration`` of an OpenAI function (its ``description`` and
    ``parameters``, at ``where``), named ``name``."""
    declaration: JSONObject = {"name": name}
    description = function.get("description")
    if type(description) is str and description:
        declaration["description"] = description
    parameters = function.get("parameters")
    if parameters is not None and parameters != {}:
        at = f"{where}.parameters"
        if type(parameters) is not dict:
            raise InvalidRequestError("must be a JSON Schema object", where=at)
        converted = converted_schema(parameters, at, target)
        if converted.get("properties") or converted.get("type") not in ("object", "OBJECT"):
            key = "parametersJsonSchema" if target == "json_schema" else "parameters"
            declaration[key] = converted
    return declaration
