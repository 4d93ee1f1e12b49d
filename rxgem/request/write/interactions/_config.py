"""The writer of :class:`~rxgem.request.form.Settings` for Interactions: a create body's ``tools``,
``generation_config`` and ``response_format``.

- functions → flat ``{type: "function", name, description, parameters}`` tools (the
  schema translated as for ``generateContent``'s ``parametersJsonSchema``); search →
  ``{type: "google_search"}``;
- the choice among them → ``generation_config.tool_choice``: ``auto``, ``none``, ``any``;
  one function → ``{allowed_tools: {mode, tools}}``;
- the output limit, ``temperature``, ``top_p``, ``seed``, stop sequences → their
  snake_case names; a thinking level → ``thinking_level``; thought summaries →
  ``thinking_summaries`` (``auto`` / ``none``);
- a JSON answer (and its schema) → ``response_format: {type: "text", mime_type:
  "application/json", schema}``.

What Interactions has no field for (several candidates, penalties, log probabilities, an
audio answer, a thinking *budget*) is named by the OpenAI field the client sent.
"""

from __future__ import annotations

from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject
from ..._policy import Unsupported, UnsupportedWarning, unsupported, warn
from ...form import Settings, Tools

__all__ = [
    "LEVELS",
    "interaction_config",
    "interaction_tools",
    "response_format",
    "settings_fields",
    "thinking_level",
]


LEVELS = ("minimal", "low", "medium", "high", "xhigh")
"""Interactions' ``thinking_level`` values."""


def interaction_tools(tools: Tools) -> list[JSONObject]:
    """Interactions ``tools`` of the request's tools."""
    out: list[JSONObject] = []
    for function in tools.functions:
        flat: JSONObject = {"type": "function", "name": function.name}
        if function.description is not None:
            flat["description"] = function.description
        if function.parameters is not None:
            flat["parameters"] = function.parameters
        out.append(flat)
    if tools.search:
        out.append({"type": "google_search"})
    return out


def _tool_choice(tools: Tools) -> Any:
    if tools.mode is None:
        return None
    if tools.only:
        return {"allowed_tools": {"mode": tools.mode, "tools": list(tools.only)}}
    return tools.mode


def thinking_level(level: str, where: str) -> str:
    if level not in LEVELS:
        raise InvalidRequestError(f"Interactions has no thinking level {level!r}", where=where)
    return level


def _no_field(policy: Unsupported, field: str, reason: str) -> None:
    unsupported(policy, reason, field, f"drop {field} from the request")


def interaction_config(
    settings: Settings, *, include_thoughts: bool | None, policy: Unsupported
) -> JSONObject:
    """``generation_config`` of a request's settings (``include_thoughts``: the caller's
    choice of thought summaries, over the request's)."""
    config: JSONObject = {}
    for key, value in (
        ("max_output_tokens", settings.max_output_tokens),
        ("temperature", settings.temperature),
        ("top_p", settings.top_p),
    ):
        if value is not None:
            config[key] = value
    if settings.presence_penalty is not None:
        _no_field(policy, "presence_penalty", "Interactions has no presence penalty")
    if settings.frequency_penalty is not None:
        _no_field(policy, "frequency_penalty", "Interactions has no frequency penalty")
    if settings.candidates is not None and settings.candidates != 1:
        raise InvalidRequestError(
            "Interactions makes one answer per request; send n: 1 (or leave it out)"
            " and make several requests for several answers",
            where="n",
        )
    if settings.seed is not None:
        config["seed"] = settings.seed
    if settings.top_logprobs is not None:
        _no_field(policy, "top_logprobs", "Interactions returns no log probabilities")
    if settings.logprobs is not None:
        _no_field(policy, "logprobs", "Interactions returns no log probabilities")
    if settings.stop is not None:
        config["stop_sequences"] = settings.stop
    if settings.modalities is not None and settings.modalities != ["text"]:
        unsupported(
            policy,
            "rxgem asks Interactions for text answers only",
            "modalities",
            'send modalities ["text"] or leave it out',
        )
    thinking = settings.thinking
    if thinking is not None and thinking.level is not None:
        config["thinking_level"] = thinking_level(thinking.level, thinking.where)
    elif thinking is not None and thinking.budget is not None:
        warn(
            f"{thinking.where}: Interactions thinks in levels, not budgets; left out (the"
            " model's default level)",
            UnsupportedWarning,
        )
    if include_thoughts is None and thinking is not None:
        include_thoughts = thinking.include_thoughts
    if include_thoughts is not None:
        config["thinking_summaries"] = "auto" if include_thoughts else "none"
    choice = _tool_choice(settings.tools)
    if choice is not None:
        config["tool_choice"] = choice
    return config


def response_format(settings: Settings) -> JSONObject | None:
    """``response_format`` for a request's JSON answer, or ``None``."""
    if not settings.json:
        return None
    spec: JSONObject = {"type": "text", "mime_type": "application/json"}
    if settings.schema is not None:
        spec["schema"] = settings.schema
    return spec


def settings_fields(
    settings: Settings, *, include_thoughts: bool | None, policy: Unsupported
) -> JSONObject:
    """A create body's ``tools``, ``generation_config`` and ``response_format`` (those
    that say something, in that order) for a request's settings."""
    fields: JSONObject = {}
    flat = interaction_tools(settings.tools)
    if flat:
        fields["tools"] = flat
    config = interaction_config(settings, include_thoughts=include_thoughts, policy=policy)
    if config:
        fields["generation_config"] = config
    spec = response_format(settings)
    if spec is not None:
        fields["response_format"] = spec
    return fields
