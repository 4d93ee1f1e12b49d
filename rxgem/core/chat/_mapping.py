"""Gemini → OpenAI field mapping: pure functions from Gemini values to OpenAI ones.

Each takes a Gemini field (a finish or block reason, ``usageMetadata``,
``logprobsResult``, ``createTime``) and returns the OpenAI value
:class:`~rxgem.core.ChunkBuilder` puts in a chunk (``ResponsesBuilder`` maps through it);
:func:`random_id` is both outputs' default id factory. No state: the builders keep what
a stream needs.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

import msgspec

from ..gemini import ModalityTokenCount, UsageMetadata
from ._models import CompletionUsage, FinishReason

__all__ = [
    "created_seconds",
    "map_finish_reason",
    "map_logprobs",
    "map_usage",
    "random_id",
]

# Gemini's finish reasons, and the final statuses of Google's Interactions API
_LENGTH = frozenset({"MAX_TOKENS", "CONTINUATION", "incomplete", "budget_exceeded"})
_TOOL_CALLS = frozenset({"requires_action"})
_CONTENT_FILTER = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "MODEL_ARMOR",
        "PUP_LIMITED_DISABLED",
    }
)
_UNSPECIFIED_BLOCK = frozenset({"BLOCKED_REASON_UNSPECIFIED", "BLOCK_REASON_UNSPECIFIED"})


def map_finish_reason(
    native: str | None, *, has_calls: bool = False, blocked: bool = False
) -> FinishReason:
    """Gemini ``finishReason`` (or prompt ``blockReason``) → one of OpenAI's values.

    ``MAX_TOKENS``/``CONTINUATION`` → ``length``; the safety family → ``content_filter``;
    anything else (``STOP``, ``OTHER``, unknown values, ``None``) → ``stop``, which
    becomes ``tool_calls`` when the choice made calls. A blocked prompt is
    ``content_filter`` unless its reason is unspecified. An Interactions status:
    ``incomplete`` and ``budget_exceeded`` → ``length``, ``requires_action`` →
    ``tool_calls``, ``completed`` → ``stop`` (``tool_calls`` with calls).
    """
    if blocked:
        return "stop" if native in _UNSPECIFIED_BLOCK else "content_filter"
    if native in _LENGTH:
        return "length"
    if native in _CONTENT_FILTER:
        return "content_filter"
    return "tool_calls" if has_calls or native in _TOOL_CALLS else "stop"


def map_usage(usage: UsageMetadata) -> CompletionUsage:
    """Gemini ``usageMetadata`` → OpenAI ``usage``.

    ``prompt_tokens`` = prompt + toolUsePrompt; ``completion_tokens`` = candidates +
    thoughts (OpenAI counts reasoning inside completion tokens); ``total_tokens`` =
    Gemini's total (or the sum when Gemini sent none); reasoning, cached and audio
    token details only when Gemini sent those counts. When the snapshot holds more
    than these fields show (per-modality details, tool-use prompt tokens, traffic
    type), all of it, as sent, is in ``extra_content.google.usage_metadata``.
    """
    prompt = (usage.prompt_token_count or 0) + (usage.tool_use_prompt_token_count or 0)
    completion = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
    total = usage.total_token_count
    completion_details: dict[str, int] = {}
    if usage.thoughts_token_count is not None:
        completion_details["reasoning_tokens"] = usage.thoughts_token_count
    prompt_details: dict[str, int] = {}
    if usage.cached_content_token_count is not None:
        prompt_details["cached_tokens"] = usage.cached_content_token_count
    audio = _audio_tokens(usage.prompt_tokens_details)
    if audio is not None:
        prompt_details["audio_tokens"] = audio
    audio = _audio_tokens(usage.candidates_tokens_details)
    if audio is not None:
        completion_details["audio_tokens"] = audio
    return CompletionUsage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total if total is not None else prompt + completion,
        completion_tokens_details=completion_details or None,
        prompt_tokens_details=prompt_details or None,
        extra_content=(
            {"google": {"usage_metadata": msgspec.to_builtins(usage)}} if _has_more(usage) else None
        ),
    )


def _has_more(usage: UsageMetadata) -> bool:
    """Whether a snapshot holds more than OpenAI's usage fields show."""
    return (
        usage.tool_use_prompt_token_count is not None
        or usage.prompt_tokens_details is not None
        or usage.candidates_tokens_details is not None
        or usage.cache_tokens_details is not None
        or usage.tool_use_prompt_tokens_details is not None
        or usage.traffic_type is not None
    )


def _audio_tokens(details: list[ModalityTokenCount] | None) -> int | None:
    if not details:
        return None
    counts = [d.token_count or 0 for d in details if d.modality == "AUDIO"]
    return sum(counts) if counts else None


def _token(entry: Any) -> dict[str, Any]:
    token = entry.get("token") if type(entry) is dict else None
    token = token if type(token) is str else ""
    logprob = entry.get("logProbability", 0.0) if type(entry) is dict else 0.0
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}


def map_logprobs(result: dict[str, Any]) -> dict[str, Any]:
    """Gemini ``logprobsResult`` → OpenAI ``choices[].logprobs`` (``content`` entries).

    ``chosenCandidates[i]`` is the token chosen at step ``i`` and
    ``topCandidates[i].candidates`` its alternatives; ``tokenId`` has no OpenAI
    field (``bytes`` are given instead).
    """
    chosen = result.get("chosenCandidates")
    top = result.get("topCandidates")
    top = top if type(top) is list else []
    content = []
    for step, entry in enumerate(chosen if type(chosen) is list else []):
        token = _token(entry)
        options = top[step] if step < len(top) else None
        alternatives = options.get("candidates") if type(options) is dict else None
        token["top_logprobs"] = (
            [_token(alt) for alt in alternatives] if type(alternatives) is list else []
        )
        content.append(token)
    return {"content": content, "refusal": None}


def created_seconds(create_time: str | None) -> int | None:
    """Vertex's ``createTime`` (RFC 3339) in seconds, ``None`` if absent or unreadable."""
    if not create_time:
        return None
    text = create_time.replace("Z", "+00:00")
    head, dot, tail = text.partition(".")
    if dot:  # Python reads at most 6 fractional digits; Google may send 9
        digits = len(tail) - len(tail.lstrip("0123456789"))
        text = f"{head}.{tail[: min(digits, 6)]}{tail[digits:]}" if digits else head + tail
    try:
        return int(datetime.fromisoformat(text).timestamp())
    except ValueError:
        return None


def random_id() -> str:
    """The default id factory: 24 random hex digits (96 bits from ``os.urandom``)."""
    return os.urandom(12).hex()
