"""The fields of a Responses request: those mapped, those for the server, those refused
(or dropped with a warning); the continuation it names; what the Response object repeats;
and its settings (tools, then the rest)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject, at
from ..._model_families import ModelFamily
from ..._policy import Unsupported, unsupported
from ...form import Settings
from ...schema._convert import SchemaTarget
from ._params import read_generation
from ._tools import responses_tools

__all__ = ["check_continuation", "check_fields", "echo_of", "read_settings"]


_MAPPED = frozenset(
    {
        "model",
        "input",
        "instructions",
        "previous_response_id",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "reasoning",
        "text",
        "max_output_tokens",
        "temperature",
        "top_p",
        "top_logprobs",
        "include",
        "background",
    }
)
# for the server, or without effect on the answer: not sent to Gemini
_IGNORED = frozenset(
    {
        "stream",
        "stream_options",
        "store",
        "metadata",
        "truncation",
        "prompt_cache_key",
        "prompt_cache_retention",
        "client_metadata",
        "user",
        "safety_identifier",
        "service_tier",
    }
)
_UNSUPPORTED: dict[str, str] = {
    "conversation": "rxgem keeps no conversations objects; continue with previous_response_id",
    "prompt": "rxgem has no stored prompt templates; send the instructions and input",
    "max_tool_calls": "Gemini cannot limit the number of tool calls",
    "n": "a Responses request has one answer (n is Chat Completions');"
    " send several requests, or n to /v1/chat/completions",
}
_UNKNOWN = "rxgem knows no such Responses field"

# What the Response object repeats of the request, and OpenAI's values when it is not sent.
_ECHO_DEFAULTS: dict[str, Any] = {
    "instructions": None,
    "max_output_tokens": None,
    "metadata": {},
    "parallel_tool_calls": True,
    "previous_response_id": None,
    "prompt_cache_key": None,
    "reasoning": {"effort": None, "summary": None},
    "safety_identifier": None,
    "service_tier": None,
    "temperature": None,
    "text": {"format": {"type": "text"}},
    "tool_choice": "auto",
    "tools": [],
    "top_logprobs": None,
    "top_p": None,
    "truncation": "disabled",
    "user": None,
}


def check_fields(body: Mapping[str, Any], policy: Unsupported) -> None:
    """Refuse (or warn about) the fields of a Responses request that nothing maps."""
    for key in body:
        if key in _MAPPED or key in _IGNORED:
            continue
        reason = _UNSUPPORTED.get(key, _UNKNOWN)
        unsupported(policy, reason, key, f"drop the field {at('', key)} from the request")


def check_continuation(body: Mapping[str, Any], continued: bool) -> str | None:
    """The request's ``previous_response_id`` (checked; ``continued``: the caller has
    what it names), after checking ``metadata``."""
    previous = body.get("previous_response_id")
    if previous is not None and (type(previous) is not str or not previous):
        raise InvalidRequestError("must be a response id", where="previous_response_id")
    if previous is not None and not continued:
        raise InvalidRequestError(
            "this server keeps no responses to continue", where="previous_response_id"
        )
    metadata = body.get("metadata")
    if metadata is not None and type(metadata) is not dict:
        raise InvalidRequestError("must be an object", where="metadata")
    return previous


def echo_of(body: Mapping[str, Any]) -> JSONObject:
    """The request's fields the Response object repeats, OpenAI's defaults for the rest."""
    return {
        key: body[key] if body.get(key) is not None else copy.deepcopy(default)
        for key, default in _ECHO_DEFAULTS.items()
    }


def read_settings(
    body: Mapping[str, Any],
    family: ModelFamily,
    target: SchemaTarget,
    include: list[str],
    policy: Unsupported,
) -> tuple[Settings, dict[str, tuple[str, str]]]:
    """Everything of a Responses request but its input (schemas in ``target``'s dialect),
    and the namespaced functions' names (Gemini name → ``(namespace, name)``)."""
    request = dict(body)
    tools = responses_tools(request, family, target=target, policy=policy)
    settings = Settings(tools.tools)
    read_generation(request, settings, family, target=target, include=include, policy=policy)
    return settings, tools.namespaced
