"""The Gemini request's settings (as the ``generateContent`` translation makes them) → an
Interactions create body's ``tools``, ``generation_config`` and ``response_format``.

- ``functionDeclarations`` → flat ``{type: "function", name, description, parameters}``
  tools (the schema already cleaned as for ``generateContent``'s
  ``parametersJsonSchema``); ``googleSearch`` → ``{type: "google_search"}``;
- ``toolConfig.functionCallingConfig`` → ``generation_config.tool_choice``: ``AUTO``,
  ``NONE``, ``ANY`` → ``auto``, ``none``, ``any``; allowed names →
  ``{allowed_tools: {mode, tools}}``;
- ``maxOutputTokens``, ``temperature``, ``topP``, ``seed``, ``stopSequences`` → their
  snake_case names; ``thinkingLevel`` → ``thinking_level``; ``includeThoughts`` →
  ``thinking_summaries`` (``auto`` / ``none``);
- ``responseMimeType`` with ``responseJsonSchema`` → ``response_format: {type: "text",
  mime_type: "application/json", schema}``.

What Interactions has no field for (several candidates, penalties, log probabilities, an
audio answer, a thinking *budget*) is named by the OpenAI field the client sent.
"""

from __future__ import annotations

import warnings
from typing import Any

from ...core import InvalidRequestError
from .._json import JSONObject
from .._params import Unsupported, UnsupportedWarning, unsupported

__all__ = [
    "LEVELS",
    "interaction_config",
    "interaction_tools",
    "response_format",
    "thinking_level",
]


_RENAMED = {
    "maxOutputTokens": "max_output_tokens",
    "temperature": "temperature",
    "topP": "top_p",
    "seed": "seed",
    "stopSequences": "stop_sequences",
}
# Gemini field → (the OpenAI field that asked for it, why Interactions cannot)
_NO_FIELD = {
    "presencePenalty": ("presence_penalty", "Interactions has no presence penalty"),
    "frequencyPenalty": ("frequency_penalty", "Interactions has no frequency penalty"),
    "responseLogprobs": ("logprobs", "Interactions returns no log probabilities"),
    "logprobs": ("top_logprobs", "Interactions returns no log probabilities"),
}
LEVELS = ("minimal", "low", "medium", "high", "xhigh")
"""Interactions' ``thinking_level`` values."""


def interaction_tools(tools: list[JSONObject]) -> list[JSONObject]:
    """Interactions ``tools`` of Gemini's ``tools``."""
    out: list[JSONObject] = []
    for tool in tools:
        for declaration in tool.get("functionDeclarations", []):
            flat: JSONObject = {"type": "function", "name": declaration["name"]}
            if "description" in declaration:
                flat["description"] = declaration["description"]
            schema = declaration.get("parametersJsonSchema")
            if schema is not None:
                flat["parameters"] = schema
            out.append(flat)
        if "googleSearch" in tool:
            out.append({"type": "google_search"})
    return out


def _tool_choice(tool_config: JSONObject | None) -> Any:
    calling = (tool_config or {}).get("functionCallingConfig")
    if not calling or "mode" not in calling:
        return None
    mode = str(calling["mode"]).lower()
    names = calling.get("allowedFunctionNames")
    if names:
        return {"allowed_tools": {"mode": mode, "tools": list(names)}}
    return mode


def thinking_level(level: str, where: str) -> str:
    if level not in LEVELS:
        raise InvalidRequestError(f"Interactions has no thinking level {level!r}", where=where)
    return level


def interaction_config(
    gemini: JSONObject,
    *,
    effort_field: str,
    include_thoughts: bool | None,
    policy: Unsupported,
) -> JSONObject:
    """``generation_config`` of a Gemini request (``effort_field``: where the OpenAI
    request asked for the thinking)."""
    source = gemini.get("generationConfig", {})
    config: JSONObject = {}
    for key, value in source.items():
        if key in _RENAMED:
            config[_RENAMED[key]] = value
        elif key in _NO_FIELD:
            field, reason = _NO_FIELD[key]
            unsupported(policy, reason, field, f"drop {field} from the request")
        elif key == "candidateCount":
            if value != 1:
                raise InvalidRequestError(
                    "Interactions makes one answer per request; send n: 1 (or leave it out)"
                    " and make several requests for several answers",
                    where="n",
                )
        elif key == "responseModalities" and value != ["TEXT"]:
            unsupported(
                policy,
                "rxgem asks Interactions for text answers only",
                "modalities",
                'send modalities ["text"] or leave it out',
            )
    thinking = source.get("thinkingConfig") or {}
    if "thinkingLevel" in thinking:
        config["thinking_level"] = thinking_level(thinking["thinkingLevel"], effort_field)
    elif "thinkingBudget" in thinking:
        warnings.warn(
            f"{effort_field}: Interactions thinks in levels, not budgets; left out (the"
            " model's default level)",
            UnsupportedWarning,
            stacklevel=4,
        )
    if include_thoughts is None:
        include_thoughts = thinking.get("includeThoughts")
    if include_thoughts is not None:
        config["thinking_summaries"] = "auto" if include_thoughts else "none"
    choice = _tool_choice(gemini.get("toolConfig"))
    if choice is not None:
        config["tool_choice"] = choice
    return config


def response_format(gemini: JSONObject) -> JSONObject | None:
    """``response_format`` for a Gemini request's JSON answer, or ``None``."""
    source = gemini.get("generationConfig", {})
    if source.get("responseMimeType") != "application/json":
        return None
    spec: JSONObject = {"type": "text", "mime_type": "application/json"}
    schema = source.get("responseJsonSchema")
    if schema is not None:
        spec["schema"] = schema
    return spec
