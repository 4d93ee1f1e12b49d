"""``to_gemini_request``: an OpenAI Chat Completions request body → a Gemini request body."""

from __future__ import annotations

from typing import Any

from ..core import InvalidRequestError
from ..core.gemini import GeminiApi
from ._contents import gemini_contents
from ._json import JSONObject, at
from ._messages import read_messages
from ._model_families import ModelFamily, model_family
from ._params import (
    Unsupported,
    converted_schema,
    read_generation,
    read_thinking,
    read_tool_choice,
    read_tools,
    schema_target,
)
from ._params import unsupported as unsupported_field
from ._settings import Settings
from ._settings_gc import write_settings
from .schema._convert import SchemaTarget

__all__ = ["check_fields", "checked_model", "read_settings", "to_gemini_request"]


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


def to_gemini_request(
    body: JSONObject,
    *,
    api: GeminiApi = "gemini",
    include_thoughts: bool | None = None,
    unsupported: Unsupported = "error",
) -> JSONObject:
    """An OpenAI Chat Completions request body → Gemini's ``GenerateContentRequest`` JSON.

    ``body`` is the request as the ``openai`` SDK sends it (a plain dict); the result
    is camelCase, as on the wire. The model stays in ``body["model"]`` (it goes in
    the URL); ``stream`` and ``stream_options`` are the caller's business.

    Args:
        api: ``"gemini"`` (the Gemini API: tool schemas as full JSON Schema in
            ``parametersJsonSchema``) or ``"vertex"`` (the OpenAPI subset in
            ``parameters``).
        include_thoughts: ask Gemini for thought summaries (``None``: leave
            Gemini's default, no summaries).
        unsupported: what to do with a field that has no Gemini counterpart (an
            unknown field, ``logit_bias``, ``parallel_tool_calls: false`` with
            several tools, ...): ``"error"`` (default) raises, ``"warn"`` leaves it
            out with an :class:`UnsupportedWarning`.

    Raises:
        InvalidRequestError: the request cannot be translated; ``where`` names the
            field (``messages[3].tool_calls[0].function.arguments``).
    """
    target = schema_target(api)
    model = checked_model(body, unsupported)
    family = model_family(model)
    conversation = read_messages(body.get("messages"), media_results=family.call_ids)
    system, contents = gemini_contents(
        conversation, call_ids=family.call_ids, strict_signatures=family.strict_signatures
    )
    request: JSONObject = {"contents": contents}
    if system is not None:
        request["systemInstruction"] = system
    settings = read_settings(body, family, target, include_thoughts, unsupported)
    write_settings(request, settings, target=target, generation=family.generation)
    return request


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
    _response_format(
        body.get("response_format"), settings, target, family.generation, bool(tools.functions)
    )
    settings.thinking = read_thinking(
        body.get("reasoning_effort"), family, include_thoughts, policy
    )
    return settings


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


def _response_format(
    spec: Any, settings: Settings, target: SchemaTarget, generation: float, has_functions: bool
) -> None:
    if spec is None:
        return
    kind = spec.get("type") if type(spec) is dict else None
    if kind == "text":
        return
    if kind not in ("json_object", "json_schema"):
        raise InvalidRequestError(
            'must be {"type": "text" | "json_object" | "json_schema", ...}', where="response_format"
        )
    if has_functions and generation < 3:
        raise InvalidRequestError(
            "Gemini before 3 refuses a JSON response format together with function calling",
            where="response_format",
        )
    settings.json = True
    if kind == "json_schema":
        wrapper = spec.get("json_schema")
        schema = wrapper.get("schema") if type(wrapper) is dict else None
        where = "response_format.json_schema.schema"
        if type(schema) is not dict:
            raise InvalidRequestError("must be a JSON Schema object", where=where)
        settings.schema = converted_schema(schema, where, target)
