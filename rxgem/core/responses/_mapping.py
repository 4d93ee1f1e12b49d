"""Gemini → OpenAI Responses field mapping: pure functions, no state.

The finish of candidate 0 → the response's ``status`` and ``incomplete_details``;
``usageMetadata`` → ``usage`` (through Chat Completions' :func:`map_usage`, so that
both outputs count alike); an error → ``error {code, message, param, type}``; chat's
``url_citation`` annotations → Responses' flat ones; the request's echo fields → the
response's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from ..chat import map_finish_reason, map_usage
from ..gemini import UsageMetadata
from ..openai import MetadataMerger, Scrub, openai_error
from ..slots import End
from ._models import ResponseError, ResponseStatus, ResponseUsage

__all__ = [
    "ECHOED",
    "blocked_error",
    "check_namespaced",
    "check_request",
    "check_response_id",
    "echo",
    "error_of",
    "flat_citations",
    "google_extra",
    "response_usage",
    "status_of",
]

ECHOED: Final = (
    "instructions",
    "metadata",
    "max_output_tokens",
    "temperature",
    "top_p",
    "previous_response_id",
    "text",
    "reasoning",
    "store",
    "truncation",
    "background",
)
"""The request fields a response repeats as sent (beside ``tools``, ``tool_choice`` and
``parallel_tool_calls``, which have OpenAI's defaults when absent)."""


def check_request(request: object) -> None:
    """``request`` is a mapping (the Responses request, or its echoed fields) or ``None``."""
    if request is not None and not isinstance(request, Mapping):
        raise TypeError(f"request must be a mapping or None, not {type(request).__name__}")


def check_namespaced(namespaced: object) -> None:
    """``namespaced``: a mapping of Gemini function names → ``(namespace, name)``, or ``None``."""
    if namespaced is None:
        return
    if not isinstance(namespaced, Mapping):
        raise TypeError(f"namespaced must be a mapping or None, not {type(namespaced).__name__}")
    for full, pair in namespaced.items():
        if (
            type(full) is not str
            or type(pair) is not tuple
            or len(pair) != 2
            or not all(type(part) is str and part for part in pair)
        ):
            raise ValueError(
                "namespaced maps a Gemini function name to (namespace, name),"
                f" not {full!r} to {pair!r}"
            )


def check_response_id(response_id: object) -> None:
    """``response_id``: a non-empty string, or ``None``."""
    if response_id is None:
        return
    if type(response_id) is not str:
        raise TypeError(f"response_id must be a string or None, not {type(response_id).__name__}")
    if not response_id:
        raise ValueError("response_id must not be empty")


def echo(request: Mapping[str, Any] | None) -> dict[str, Any]:
    """The response's fields that repeat the request, OpenAI's defaults for the absent."""
    request = request or {}
    fields: dict[str, Any] = {
        "tools": list(request.get("tools") or ()),
        "tool_choice": request.get("tool_choice", "auto"),
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
    }
    for name in ECHOED:
        if request.get(name) is not None:
            fields[name] = request[name]
    return fields


def status_of(
    native: str | None, *, blocked: bool = False
) -> tuple[ResponseStatus, dict[str, Any] | None]:
    """Candidate 0's finish → the response's ``status`` and ``incomplete_details``.

    ``MAX_TOKENS`` → ``incomplete`` (``max_output_tokens``); the safety family →
    ``incomplete`` (``content_filter``); a blocked prompt → ``failed`` (the caller
    sets ``error``); anything else → ``completed``.
    """
    if blocked:
        return "failed", None
    finish = map_finish_reason(native)
    if finish == "length":
        return "incomplete", {"reason": "max_output_tokens"}
    if finish == "content_filter":
        return "incomplete", {"reason": "content_filter"}
    return "completed", None


def response_usage(usage: UsageMetadata) -> ResponseUsage:
    """``usageMetadata`` → ``usage``: the counts of :func:`map_usage`, in Responses' names.

    ``input_tokens`` = prompt + tool-use prompt, ``output_tokens`` = candidates +
    thoughts, ``cached_tokens`` and ``reasoning_tokens`` (0 when Gemini sent none),
    and Gemini's snapshot in ``extra_content.google.usage_metadata`` when it holds more.
    """
    mapped = map_usage(usage)
    prompt = mapped.prompt_tokens_details or {}
    completion = mapped.completion_tokens_details or {}
    return ResponseUsage(
        input_tokens=mapped.prompt_tokens,
        input_tokens_details={
            "cached_tokens": prompt.get("cached_tokens", 0),
            "cache_write_tokens": 0,
        },
        output_tokens=mapped.completion_tokens,
        output_tokens_details={"reasoning_tokens": completion.get("reasoning_tokens", 0)},
        total_tokens=mapped.total_tokens,
        extra_content=mapped.extra_content,
    )


def error_of(error: BaseException, scrub: Scrub | None = None) -> ResponseError:
    """A stream's error → a failed response's ``error``, in the one vocabulary of
    :func:`~rxgem.core.openai_error` (what Gemini said goes through ``scrub``): its
    ``message``, ``type`` and ``param``, and a ``code`` of the Responses API's set
    (``rate_limit_exceeded`` for a 429, else ``server_error``)."""
    mapped = openai_error(error, scrub)
    return ResponseError(
        code=mapped.responses_code, message=mapped.message, param=mapped.param, type=mapped.type
    )


def blocked_error(reason: str | None, message: str | None, scrub: Scrub) -> ResponseError:
    """A blocked prompt's ``error``: ``invalid_prompt``, with Gemini's reason and message
    (through ``scrub``)."""
    text = f"the prompt was blocked ({reason})"
    return ResponseError(
        code="invalid_prompt", message=f"{text}: {scrub(message)}" if message else text
    )


def flat_citations(annotations: list[dict[str, Any]], start: int, end: int) -> list[dict[str, Any]]:
    """Chat's ``{"type": "url_citation", "url_citation": {...}}`` of the content's
    characters ``start``..``end`` (one message's text) → Responses' flat form, placed in
    that text; the others belong to another message."""
    flat: list[dict[str, Any]] = []
    for annotation in annotations:
        cited = annotation["url_citation"]
        first, last = cited["start_index"], cited["end_index"]
        if start <= first and last <= end:
            placed = {"start_index": first - start, "end_index": last - start}
            flat.append({"type": "url_citation", **cited, **placed})
    return flat


def google_extra(
    end: End | None,
    model_status: Any,
    grounding: MetadataMerger | None,
    citation: MetadataMerger | None,
    urls: MetadataMerger | None,
) -> dict[str, Any] | None:
    """What a response's ``extra_content.google`` carries: the native finish reason, its
    details (safety ratings, prompt feedback…), the model status, the grounding metadata."""
    google: dict[str, Any] = {}
    if end is not None:
        if end.reason is not None:
            google["finish_reason"] = end.reason
        if end.details:
            google.update(end.details)
    if model_status is not None:
        google["model_status"] = model_status
    if grounding is not None:
        google["grounding_metadata"] = grounding.value
    if citation is not None:
        google["citation_metadata"] = citation.value
    if urls is not None:
        google["url_context_metadata"] = urls.value
    return {"google": google} if google else None
