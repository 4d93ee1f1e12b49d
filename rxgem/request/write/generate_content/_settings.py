"""The writer of :class:`~rxgem.request.form.Settings` for ``generateContent``: ``tools``,
``toolConfig`` and ``generationConfig`` (camelCase, as on the wire)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from ..._json import JSONObject
from ...form import Settings, Thinking, Tools
from ...schema._convert import SchemaTarget

__all__ = ["write_settings"]

_PARAMETERS: Final = MappingProxyType(
    {"json_schema": "parametersJsonSchema", "openapi": "parameters"}
)
_RESPONSE_SCHEMA: Final = MappingProxyType(
    {"json_schema": "responseJsonSchema", "openapi": "responseSchema"}
)
"""Where a schema goes in each dialect: the Gemini API takes full JSON Schema
(``parametersJsonSchema``, ``responseJsonSchema``), Vertex AI the OpenAPI subset
(``parameters``, ``responseSchema``)."""


def _tools(tools: Tools, target: SchemaTarget) -> list[JSONObject]:
    out: list[JSONObject] = []
    if tools.functions:
        key = _PARAMETERS[target]
        declarations: list[JSONObject] = []
        for function in tools.functions:
            declaration: JSONObject = {"name": function.name}
            if function.description is not None:
                declaration["description"] = function.description
            if function.parameters is not None:
                declaration[key] = function.parameters
            declarations.append(declaration)
        out.append({"functionDeclarations": declarations})
    if tools.search:
        out.append({"googleSearch": {}})
    return out


def _tool_config(tools: Tools, generation: float) -> JSONObject:
    config: JSONObject = {}
    if tools.mode is not None:
        calling: JSONObject = {"mode": tools.mode.upper()}
        if tools.only is not None:
            calling["allowedFunctionNames"] = list(tools.only)
        config["functionCallingConfig"] = calling
    if tools.search and tools.functions and generation >= 3:
        config["includeServerSideToolInvocations"] = True  # built-in tools beside functions
    return config


def _thinking(thinking: Thinking) -> JSONObject:
    config: JSONObject = {}
    if thinking.level is not None:
        config["thinkingLevel"] = thinking.level
    elif thinking.budget is not None:
        config["thinkingBudget"] = thinking.budget
    if thinking.include_thoughts is not None:
        config["includeThoughts"] = thinking.include_thoughts
    return config


def _generation_config(settings: Settings, target: SchemaTarget) -> JSONObject:
    config: JSONObject = {}
    for wire, value in (
        ("maxOutputTokens", settings.max_output_tokens),
        ("temperature", settings.temperature),
        ("topP", settings.top_p),
        ("presencePenalty", settings.presence_penalty),
        ("frequencyPenalty", settings.frequency_penalty),
        ("candidateCount", settings.candidates),
        ("seed", settings.seed),
        ("logprobs", settings.top_logprobs),
        ("responseLogprobs", settings.logprobs),
        ("stopSequences", settings.stop),
    ):
        if value is not None:
            config[wire] = value
    if settings.modalities is not None:
        config["responseModalities"] = [m.upper() for m in settings.modalities]
    if settings.json:
        config["responseMimeType"] = "application/json"
        if settings.schema is not None:
            config[_RESPONSE_SCHEMA[target]] = settings.schema
    if settings.thinking is not None:
        config["thinkingConfig"] = _thinking(settings.thinking)
    return config


def write_settings(
    request: JSONObject, settings: Settings, *, target: SchemaTarget, generation: float
) -> None:
    """``settings`` into a ``generateContent`` request: each of ``tools``, ``toolConfig``
    and ``generationConfig`` that is not empty (``generation``: the model's Gemini
    generation, 3 and up told of built-in tools beside functions)."""
    tools = _tools(settings.tools, target)
    if tools:
        request["tools"] = tools
    toolcfg = _tool_config(settings.tools, generation)
    if toolcfg:
        request["toolConfig"] = toolcfg
    config = _generation_config(settings, target)
    if config:
        request["generationConfig"] = config
