"""A Chat Completions request's settings: ``tools``, ``tool_choice``,
``parallel_tool_calls``, ``web_search_options``, the sampling and length parameters,
``stop``, ``modalities``, ``response_format`` and ``reasoning_effort``, into
:class:`~rxgem.request.form.Settings`.

Each OpenAI parameter maps to its Gemini counterpart, or is named as an approximation
(README, "Requests"), or is *unsupported* (:mod:`rxgem.request._policy`).
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Final

from ....core import InvalidRequestError
from ..._json import JSONObject, quoted
from ..._model_families import ModelFamily
from ..._policy import Unsupported, unsupported
from ...form import Function, Settings, Tools
from ...schema._convert import SchemaTarget
from .._shared import (
    MAX_CANDIDATES,
    check_function_name,
    read_answer_format,
    read_function,
    read_thinking,
)

__all__ = ["read_generation", "read_settings", "read_tool_choice", "read_tools"]


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


def read_settings(
    body: JSONObject,
    family: ModelFamily,
    target: SchemaTarget,
    include_thoughts: bool | None,
    policy: Unsupported,
) -> Settings:
    """Everything of a Chat Completions request but its messages (schemas in ``target``'s
    dialect)."""
    tools = read_tools(body, schema_target=target, policy=policy)
    read_tool_choice(body, tools, policy)
    settings = Settings(tools)
    read_generation(body, settings)
    read_answer_format(
        body.get("response_format"),
        "response_format",
        settings,
        target,
        generation=family.generation,
        has_functions=bool(tools.functions),
        holder="json_schema",
    )
    settings.thinking = read_thinking(
        body.get("reasoning_effort"), family, include_thoughts, policy
    )
    return settings
