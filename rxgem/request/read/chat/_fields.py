"""The fields of a Chat Completions request: those mapped, those without effect, those
refused (or dropped with a warning), and its model."""

from __future__ import annotations

from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject, at
from ..._policy import Unsupported
from ..._policy import unsupported as unsupported_field

__all__ = ["check_fields", "checked_model"]


_MAPPED = frozenset(
    {
        "model",
        "messages",
        "max_tokens",
        "max_completion_tokens",
        "temperature",
        "top_p",
        "n",
        "stop",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "logprobs",
        "top_logprobs",
        "response_format",
        "reasoning_effort",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "modalities",
        "web_search_options",
    }
)
# OpenAI fields that do not change the answer (or that the caller's transport reads)
_IGNORED = frozenset(
    {
        "stream",
        "stream_options",
        "user",
        "metadata",
        "store",
        "service_tier",
        "prompt_cache_key",
        "safety_identifier",
        "prediction",
    }
)
# OpenAI fields with no Gemini counterpart: why, and what to send instead (None: nothing)
_UNSUPPORTED: dict[str, tuple[str, str | None]] = {
    "logit_bias": ("Gemini has no logit bias", None),
    "audio": ("OpenAI's voices and audio formats have no Gemini counterparts", None),
    "functions": (
        "the deprecated functions field is not translated",
        "declare the functions in tools",
    ),
    "function_call": ("the deprecated function_call field is not translated", "send tool_choice"),
    "verbosity": ("Gemini has no verbosity setting", None),
}
_UNKNOWN = ("rxgem knows no such Chat Completions field", None)


def checked_model(body: Any, policy: Unsupported) -> str:
    """The model of a Chat Completions request, once its fields are checked."""
    if type(body) is not dict:
        raise InvalidRequestError("the request must be a JSON object")
    if policy not in ("error", "warn"):
        raise ValueError(f"unsupported must be 'error' or 'warn', not {policy!r}")
    model = body.get("model")
    if type(model) is not str or not model:
        raise InvalidRequestError("must name a Gemini model", where="model")
    check_fields(body, policy)
    return model


def check_fields(body: JSONObject, policy: Unsupported) -> None:
    """Refuse (or warn about) the fields of a Chat Completions request that nothing maps."""
    for key in body:
        if key in _MAPPED or key in _IGNORED:
            continue
        reason, instead = _UNSUPPORTED.get(key, _UNKNOWN)
        remedy = (
            f"{instead} instead" if instead else f"drop the field {at('', key)} from the request"
        )
        unsupported_field(policy, reason, key, remedy)
