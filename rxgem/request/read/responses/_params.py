"""Responses parameters → Gemini ``generationConfig`` (with ``thinkingConfig``).

- ``max_output_tokens``, ``temperature``, ``top_p`` → ``maxOutputTokens``,
  ``temperature``, ``topP``;
- ``include: ["message.output_text.logprobs"]`` → ``responseLogprobs``, with
  ``top_logprobs`` → ``logprobs`` (Responses returns log probabilities only when
  ``include`` asks for them, so ``top_logprobs`` alone sends nothing);
- ``reasoning.effort`` → ``thinkingConfig`` by model family (as Chat Completions'
  ``reasoning_effort``); ``reasoning.summary`` (``auto``, ``concise``, ``detailed``) →
  ``includeThoughts: true``, ``null`` → ``false``;
- ``text.format``: ``json_object`` → ``responseMimeType: application/json``,
  ``json_schema`` → plus the schema (``responseJsonSchema``, or ``responseSchema`` on
  Vertex), ``text`` → nothing; ``text.verbosity``: Gemini has no such setting, so
  ``medium`` (OpenAI's default) is accepted and ``low``/``high`` are unsupported.
"""

from __future__ import annotations

import math
from typing import Any

from ....core import InvalidRequestError
from ..._json import JSONObject
from ..._model_families import ModelFamily
from ..._policy import Unsupported, unsupported
from ...form import Settings, Thinking
from ...schema._convert import SchemaTarget
from .._shared import read_answer_format, read_thinking

__all__ = ["LOGPROBS", "include_list", "read_generation"]


LOGPROBS = "message.output_text.logprobs"
"""The ``include`` entry that asks for log probabilities."""

_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
_SUMMARIES = (None, "auto", "concise", "detailed")


def include_list(body: JSONObject) -> list[str]:
    """The request's ``include``, checked: a list of strings."""
    include = body.get("include")
    if include is None:
        return []
    if type(include) is not list or not all(type(entry) is str for entry in include):
        raise InvalidRequestError("must be a list of strings", where="include")
    return include


def _number(body: JSONObject, key: str) -> Any:
    value = body.get(key)
    if value is not None and type(value) not in (int, float):
        raise InvalidRequestError("must be a number", where=key)
    if type(value) is float and not math.isfinite(value):  # JSON has no NaN or Infinity
        raise InvalidRequestError("must be a finite number", where=key)
    return value


def _object(body: JSONObject, key: str) -> JSONObject:
    value = body.get(key)
    if value is None:
        return {}
    if type(value) is not dict:
        raise InvalidRequestError("must be an object", where=key)
    return value


def _thinking(body: JSONObject, family: ModelFamily, policy: Unsupported) -> Thinking | None:
    if body.get("reasoning") is None:
        return None
    reasoning = _object(body, "reasoning")
    effort = reasoning.get("effort")
    if effort is not None and effort not in _EFFORTS:
        raise InvalidRequestError(
            "must be none, minimal, low, medium, high or xhigh", where="reasoning.effort"
        )
    key = "summary" if reasoning.get("summary") is not None else "generate_summary"
    summary = reasoning.get(key)
    if summary not in _SUMMARIES:
        raise InvalidRequestError(
            'must be "auto", "concise", "detailed" or null', where=f"reasoning.{key}"
        )
    thinks = family.thinks_in_levels or family.thinks_in_budget
    if effort is not None and not thinks:
        unsupported(
            policy,
            "this model does not think",
            "reasoning.effort",
            "leave out the reasoning effort, or ask a Gemini 2.5 or later model",
        )
        effort = None
    return read_thinking(effort, family, summary is not None, policy, "reasoning.effort")


def _text_format(
    body: JSONObject,
    settings: Settings,
    target: SchemaTarget,
    family: ModelFamily,
    has_functions: bool,
    policy: Unsupported,
) -> None:
    text = _object(body, "text")
    verbosity = text.get("verbosity")
    if verbosity not in (None, "low", "medium", "high"):
        raise InvalidRequestError('must be "low", "medium" or "high"', where="text.verbosity")
    if verbosity in ("low", "high"):
        unsupported(
            policy,
            "Gemini has no verbosity setting",
            "text.verbosity",
            'ask for the length in the instructions, and send "medium" or no verbosity',
        )
    read_answer_format(
        text.get("format"),
        "text.format",
        settings,
        target,
        generation=family.generation,
        has_functions=has_functions,
    )


def read_generation(
    body: JSONObject,
    settings: Settings,
    family: ModelFamily,
    *,
    target: SchemaTarget,
    include: list[str],
    policy: Unsupported,
) -> None:
    """A Responses request's limits, sampling, log probabilities, answer format and
    reasoning, into ``settings`` (its tools read)."""
    limit = body.get("max_output_tokens")
    if limit is not None:
        if type(limit) is not int or limit < 1:
            raise InvalidRequestError("must be a positive integer", where="max_output_tokens")
        settings.max_output_tokens = limit
    settings.temperature = _number(body, "temperature")
    settings.top_p = _number(body, "top_p")
    top = body.get("top_logprobs")
    if top is not None and (type(top) is not int or not 0 <= top <= 20):
        raise InvalidRequestError("must be an integer from 0 to 20", where="top_logprobs")
    if LOGPROBS in include:
        settings.logprobs = True
        settings.top_logprobs = top
    _text_format(body, settings, target, family, bool(settings.tools.functions), policy)
    settings.thinking = _thinking(body, family, policy)
