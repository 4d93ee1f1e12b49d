"""OpenAI requests → Gemini ``generateContent`` requests: a reader, then the writer.

:func:`to_gemini_request` reads a Chat Completions body, :func:`responses_to_gemini_request`
a Responses body (with the history the caller resolved), into the typed form; the
``generateContent`` writer makes the Gemini body of it. Sans-IO: what a Responses request
names but does not hold (the items of ``previous_response_id``, the targets of
``item_reference``) comes from the caller (``history``, ``resolve``); what is for the
server and not for Gemini (``stream``, ``store``, ``include``, ``metadata``, the fields the
Response object repeats) comes back in the :class:`ResponsesRequest` beside the Gemini body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...core import InvalidRequestError
from ...core.gemini import GeminiApi
from .._json import JSONObject
from .._model_families import model_family
from .._policy import Unsupported, schema_target, with_warnings
from ..read import chat
from ..read.responses import (
    Resolve,
    check_continuation,
    check_fields,
    echo_of,
    include_list,
    read_input,
    read_settings,
)
from ..schema._convert import SchemaTarget
from ..write.generate_content import gemini_contents, write_settings

__all__ = ["ResponsesRequest", "responses_to_gemini_request", "to_gemini_request"]


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
    model = chat.checked_model(body, unsupported)
    family = model_family(model)
    conversation = chat.read_messages(body.get("messages"), media_results=family.call_ids)
    system, contents = gemini_contents(
        conversation, call_ids=family.call_ids, strict_signatures=family.strict_signatures
    )
    request: JSONObject = {"contents": contents}
    if system is not None:
        request["systemInstruction"] = system
    settings = chat.read_settings(body, family, target, include_thoughts, unsupported)
    write_settings(request, settings, target=target, generation=family.generation)
    return request


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


def _fields(body: Mapping[str, Any], policy: Unsupported) -> None:
    if _flag(body, "background", False):
        raise InvalidRequestError(
            "rxgem answers in the foreground only; send background false or leave it out",
            where="background",
        )
    check_fields(body, policy)


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
