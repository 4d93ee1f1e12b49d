"""What a translation does with what it cannot send, and the options every one reads.

A field with no counterpart upstream that would keep the request's meaning is
*unsupported*: an :class:`UnsupportedFieldError` (an :class:`~rxgem.InvalidRequestError`)
by default, dropped with an :class:`UnsupportedWarning` with ``unsupported="warn"``; a
schema keyword approximated is a :class:`SchemaWarning`. ``api`` chooses the schema
dialect (:func:`schema_target`); :func:`with_warnings` collects what a translation warned
about.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from types import MappingProxyType
from typing import Final, Literal, TypeAlias, TypeVar

from ..core import InvalidRequestError
from .schema._convert import SchemaTarget

__all__ = [
    "SchemaWarning",
    "Unsupported",
    "UnsupportedFieldError",
    "UnsupportedWarning",
    "schema_target",
    "unsupported",
    "warn",
    "with_warnings",
]

T = TypeVar("T")

Unsupported: TypeAlias = Literal["error", "warn"]


class UnsupportedWarning(UserWarning):
    """A request field had no Gemini counterpart and was left out (``unsupported="warn"``)."""


class UnsupportedFieldError(InvalidRequestError):
    """A request field with no Gemini counterpart, refused (``unsupported="error"``).

    :attr:`reason` speaks to whoever wrote the request, in the request's own terms: what
    Gemini lacks and which field to change. ``rxgem serve`` sends it to HTTP clients as the
    400's message, so it never names this library's arguments. The exception's text
    (``str()``, a traceback) adds what only a Python caller can do: pass
    ``unsupported="warn"`` to have the field left out with a warning.
    """

    def __init__(self, reason: str, *, where: str = "") -> None:
        super().__init__(reason, where=where)
        self.args = (f'{self.args[0]} (unsupported="warn" drops it with a warning)',)


class SchemaWarning(UserWarning):
    """A JSON Schema keyword Gemini lacks was approximated or left out (the message says how)."""


_SCHEMA_TARGETS: Final = MappingProxyType({"gemini": "json_schema", "vertex": "openapi"})
"""The schema dialect of each ``api``: the Gemini API takes full JSON Schema
(``parametersJsonSchema``, ``responseJsonSchema``), Vertex AI the OpenAPI subset
(``parameters``, ``responseSchema``)."""


def schema_target(api: object) -> SchemaTarget:
    """The schema dialect a request for ``api`` is written in (the translations' ``api``
    option, read once; raises ``ValueError`` for an API that is neither)."""
    target = _SCHEMA_TARGETS.get(api) if isinstance(api, str) else None
    if target is None:
        raise ValueError(f"api must be 'gemini' or 'vertex', not {api!r}")
    return target  # type: ignore[return-value]


def unsupported(policy: Unsupported, reason: str, where: str, remedy: str) -> None:
    """Refuse (``"error"``) or warn about (``"warn"``) a field Gemini cannot honour.

    ``reason`` says what Gemini lacks; ``remedy`` what to change in the request, in the
    words of the request (its fields), as an HTTP client reads the refusal too.
    """
    if policy == "error":
        raise UnsupportedFieldError(f"{reason}; {remedy}", where=where)
    warn(f"{where}: {reason}; left out", UnsupportedWarning)


_HOME: Final = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
"""rxgem's own folder."""


def warn(message: str, category: type[Warning]) -> None:
    """Warn at the line of the first caller outside rxgem (the request's author), however
    deep in the translation the warning arose: a fixed ``stacklevel`` points inside
    rxgem as soon as a reader or a writer moves a call deeper."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_HOME):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    warnings.warn(message, category, stacklevel=level)


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
