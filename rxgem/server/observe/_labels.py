"""What the gateway's telemetry counts a request under: bounded label values.

A label value a client chooses (a path, a model name, a method) would make a new
series per request, so each is mapped onto a bounded set here: the route templates
of :data:`ROUTES`, the HTTP verbs, the statuses 100..599, model ids that look like
one (``[A-Za-z0-9._@-]{1,64}``, after ``agent:`` for an agent), the upstream error
kinds; anything else is :data:`OTHER`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

import httpx

from ...core import GeminiAPIError, GeminiTransportError, MalformedStreamError, TruncatedStreamError
from ...replies import error_reply

__all__ = [
    "CANCEL_ROUTE",
    "CHAT_ROUTE",
    "ERROR_KINDS",
    "HEALTHZ_ROUTE",
    "INPUT_ITEMS_ROUTE",
    "MAX_MODELS",
    "METHODS",
    "METRICS_ROUTE",
    "MODELS_ROUTE",
    "MODEL_ROUTE",
    "OTHER",
    "READYZ_ROUTE",
    "RESPONSES_ROUTE",
    "RESPONSE_ROUTE",
    "ROUTES",
    "TEMPLATE_PARAM",
    "count",
    "http_kind",
    "looks_like_error_type",
    "looks_like_model",
    "route_labels",
    "route_of",
    "status_label",
    "upstream_error_kind",
]

CHAT_ROUTE: Final = "/v1/chat/completions"
RESPONSES_ROUTE: Final = "/v1/responses"
RESPONSE_ROUTE: Final = "/v1/responses/{response_id}"
INPUT_ITEMS_ROUTE: Final = "/v1/responses/{response_id}/input_items"
CANCEL_ROUTE: Final = "/v1/responses/{response_id}/cancel"
MODELS_ROUTE: Final = "/v1/models"
MODEL_ROUTE: Final = "/v1/models/{model_id:path}"
HEALTHZ_ROUTE: Final = "/healthz"
READYZ_ROUTE: Final = "/readyz"
METRICS_ROUTE: Final = "/metrics"
ROUTES: Final = (
    CHAT_ROUTE,
    RESPONSES_ROUTE,
    RESPONSE_ROUTE,
    INPUT_ITEMS_ROUTE,
    CANCEL_ROUTE,
    MODELS_ROUTE,
    MODEL_ROUTE,
    HEALTHZ_ROUTE,
    READYZ_ROUTE,
    METRICS_ROUTE,
)
"""The server's route templates, the one list: the app serves them, the access log and
the telemetry label a request by them (``{model_id:path}`` as ``{model_id}``); any
other path is ``other``."""


MAX_MODELS: Final = 100
"""The most distinct ``model`` label values a process gives; beyond, ``other``."""

OTHER: Final = "other"

looks_like_model = re.compile(r"(?:agent:)?[A-Za-z0-9._@-]{1,64}").fullmatch
looks_like_error_type = re.compile(r"[A-Za-z0-9._:-]{1,64}").fullmatch
http_kind = re.compile(r"http_[1-5][0-9][0-9]").fullmatch
ERROR_KINDS: Final = frozenset({"timeout", "connect", "transport", "malformed", "truncated"})
METHODS: Final = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
TEMPLATE_PARAM: Final = re.compile(r"\{(\w+):\w+\}")


def _template_pattern(template: str) -> re.Pattern[str]:
    """What paths ``template`` matches: a ``{name}`` one segment, a ``{name:path}`` the rest."""
    parts = re.split(r"(\{\w+(?::\w+)?\})", template)
    pieces = [
        (".*" if part.endswith(":path}") else "[^/]*") if part.startswith("{") else re.escape(part)
        for part in parts
    ]
    return re.compile("".join(pieces))


_EXACT: Final = frozenset(t for t in ROUTES if "{" not in t)
_TEMPLATES: Final = tuple(
    (_template_pattern(t), TEMPLATE_PARAM.sub(r"{\1}", t)) for t in ROUTES if "{" in t
)


def route_of(path: str) -> str:
    """The route label of ``path`` (a path is the client's: never a metric label itself)."""
    if path in _EXACT:
        return path
    for pattern, label in _TEMPLATES:
        if pattern.fullmatch(path):
            return label
    return OTHER


def upstream_error_kind(error: BaseException) -> str | None:
    """The ``kind`` label of an upstream failure, or None for an error that is not one.

    ``http_<status>`` for Gemini's errors (the status the client is answered with,
    also for an error inside a 200 stream), ``timeout``, ``connect`` or
    ``transport`` for the connection, ``malformed`` or ``truncated`` for a stream
    that could not be read. A request refused before it left (``InvalidRequestError``,
    no credentials) and a bug are not upstream errors.
    """
    if isinstance(error, GeminiAPIError):
        return f"http_{error_reply(error).status}"
    if isinstance(error, GeminiTransportError):
        if isinstance(error.cause, httpx.TimeoutException):
            return "timeout"
        if isinstance(error.cause, httpx.ConnectError):
            return "connect"
        return "transport"
    if isinstance(error, TruncatedStreamError):
        return "truncated"
    if isinstance(error, MalformedStreamError):
        return "malformed"
    return None


def route_labels(routes: Iterable[str]) -> dict[str, str]:
    """Each template, and its form without converters (``{id:path}`` → ``{id}``), → its label."""
    labels: dict[str, str] = {}
    for route in routes:
        label = TEMPLATE_PARAM.sub(r"{\1}", route)
        labels[route] = labels[label] = label
    return labels


def status_label(status: int) -> str:
    return str(status) if 100 <= status <= 599 else OTHER


def count(value: object) -> int | None:
    """A token count, or None for anything that is not a whole number ≥ 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None
