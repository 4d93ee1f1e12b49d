"""``responses_to_gemini_request``: an OpenAI Responses request body → a Gemini request body.

Sans-IO: what a request names but does not hold (the items of ``previous_response_id``,
the targets of ``item_reference``) comes from the caller (``history``, ``resolve``);
what is for the server and not for Gemini (``stream``, ``store``, ``include``,
``metadata``, the fields the Response object repeats) comes back in the
:class:`ResponsesRequest` beside the Gemini body.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from ...core import InvalidRequestError
from ...core.gemini import GeminiApi
from .._contents import gemini_contents
from .._json import JSONObject, at
from .._model_families import ModelFamily, model_family
from .._params import Unsupported, schema_target, unsupported
from .._settings import Settings
from .._settings_gc import write_settings
from ..schema._convert import SchemaTarget
from ._input import Resolve, read_input
from ._params import include_list, read_generation
from ._tools import responses_tools

__all__ = [
    "ResponsesRequest",
    "check_continuation",
    "check_fields",
    "echo_of",
    "read_settings",
    "responses_to_gemini_request",
    "with_warnings",
]

T = TypeVar("T")

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


@dataclass(frozen=True, slots=True)
class ResponsesRequest:
    """A Responses request, translated: the Gemini body and what the server keeps.

    Attributes:
        gemini: Gemini's ``GenerateContentRequest`` (camelCase, as on the wire).
        model: the Gemini model (it goes in the URL).
        stream: whether the client asked for a stream of events.
        store: whether to keep the response (``store``, true unless sent false).
        include: the extras the client asked for (``reasoning.encrypted_content``, ...).
        previous_response_id: the response this one continues, or ``None``.
        metadata: the client's key-value pairs, to store and repeat.
        echo: the request's fields the Response object repeats (``tools`` as sent,
            ``tool_choice``, ``parallel_tool_calls``, ``instructions``, ``temperature``,
            ``top_p``, ``max_output_tokens``, ``text``, ``reasoning``, ``truncation``,
            ...), OpenAI's defaults for those not sent.
        namespaced: the Gemini name of each function of a ``namespace`` tool →
            ``(namespace, name)``, for the answer's ``function_call`` items.
        warnings: what the translation warned about (also issued as warnings):
            fields left out, schemas approximated, signatures replaced.
    """

    gemini: JSONObject
    model: str
    stream: bool = False
    store: bool = True
    include: tuple[str, ...] = ()
    previous_response_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    echo: JSONObject = field(default_factory=dict)
    namespaced: dict[str, tuple[str, str]] = field(default_factory=dict)
    warnings: tuple[Warning, ...] = ()


def _flag(body: Mapping[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if type(value) is not bool:
        raise InvalidRequestError("must be true or false", where=key)
    return value


def check_fields(body: Mapping[str, Any], policy: Unsupported) -> None:
    """Refuse (or warn about) the fields of a Responses request that nothing maps."""
    for key in body:
        if key in _MAPPED or key in _IGNORED:
            continue
        reason = _UNSUPPORTED.get(key, _UNKNOWN)
        unsupported(policy, reason, key, f"drop the field {at('', key)} from the request")


def _fields(body: Mapping[str, Any], policy: Unsupported) -> None:
    if _flag(body, "background", False):
        raise InvalidRequestError(
            "rxgem answers in the foreground only; send background false or leave it out",
            where="background",
        )
    check_fields(body, policy)


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


def with_warnings(translate: Callable[[], T]) -> tuple[T, tuple[Warning, ...]]:
    """``translate()`` and the warnings it issued (issued again, for the caller's filters)."""
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = translate()
    finally:
        for warning in caught:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return result, tuple(w.message for w in caught if isinstance(w.message, Warning))


def _translate(
    request: Mapping[str, Any],
    target: SchemaTarget,
    policy: Unsupported,
    history: Sequence[Any] | None,
    resolve: Resolve | None,
) -> ResponsesRequest:
    body = dict(request)
    model = body.get("model")
    if type(model) is not str or not model:
        raise InvalidRequestError("must name a Gemini model", where="model")
    _fields(body, policy)
    previous = check_continuation(body, history is not None)
    metadata = body.get("metadata")
    include = include_list(body)
    family = model_family(model)
    sources: list[tuple[str, Any]] = []
    if history is not None:
        sources.append(("history", list(history)))
    if body.get("input") is not None:
        sources.append(("input", body["input"]))
    conversation = read_input(
        body.get("instructions"),
        sources,
        media_results=family.call_ids,
        policy=policy,
        resolve=resolve,
    )
    system, contents = gemini_contents(
        conversation, call_ids=family.call_ids, strict_signatures=family.strict_signatures
    )
    gemini: JSONObject = {"contents": contents}
    if system is not None:
        gemini["systemInstruction"] = system
    settings, namespaced = read_settings(body, family, target, include, policy)
    write_settings(gemini, settings, target=target, generation=family.generation)
    return ResponsesRequest(
        gemini=gemini,
        model=model,
        stream=_flag(body, "stream", False),
        store=_flag(body, "store", True),
        include=tuple(include),
        previous_response_id=previous,
        metadata=dict(metadata or {}),
        echo=echo_of(body),
        namespaced=namespaced,
    )


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


def responses_to_gemini_request(
    body: Mapping[str, Any],
    *,
    api: GeminiApi = "gemini",
    unsupported: Unsupported = "error",
    history: Sequence[Mapping[str, Any]] | None = None,
    resolve: Resolve | None = None,
) -> ResponsesRequest:
    """An OpenAI Responses request body → Gemini's request, and what the server keeps.

    ``body`` is the request as clients send it to ``POST /v1/responses`` (a plain
    dict). Nothing is looked up here: the caller gives what the request refers to.

    Args:
        api: ``"gemini"`` (tool schemas as JSON Schema in ``parametersJsonSchema``)
            or ``"vertex"`` (the OpenAPI subset in ``parameters``).
        unsupported: what to do with a field Gemini has no counterpart for (an
            unknown field, a hosted tool, ``parallel_tool_calls: false`` with several
            functions, ...): ``"error"`` (default) raises, ``"warn"`` leaves it out
            with an :class:`UnsupportedWarning`. ``custom`` and ``tool_search`` tools
            are left out with a warning either way.
        history: for ``previous_response_id``: the items of the conversation so far,
            oldest first (each earlier turn's input items, then its output items, with
            the reasoning items' ``encrypted_content``); they come before ``input``.
        resolve: for ``item_reference``: the stored item of an id, or ``None``.
            :func:`item_references` lists the ids a request names, to fetch first.

    Warnings are issued, and also collected into :attr:`ResponsesRequest.warnings`
    (with :func:`warnings.catch_warnings`, which is process-wide: translate from one
    thread at a time). The ``"default"`` filter's memory does not outlive that, so each
    call issues its warnings again: a server logs ``.warnings`` and ignores the rest.

    Raises:
        InvalidRequestError: the request cannot be translated; ``where`` names the
            field (``input[3].content[0].image_url``; ``history[i]`` for an item of
            ``history``).
    """
    if not isinstance(body, Mapping):
        raise InvalidRequestError("the request must be a JSON object")
    target = schema_target(api)
    if unsupported not in ("error", "warn"):
        raise ValueError(f"unsupported must be 'error' or 'warn', not {unsupported!r}")
    result, found = with_warnings(lambda: _translate(body, target, unsupported, history, resolve))
    return replace(result, warnings=found)
