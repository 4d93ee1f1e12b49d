"""The outputs a failed stream still owed, carried on its error (``error.chunks``)."""

from __future__ import annotations

from contextlib import suppress
from typing import Any, TypeVar

__all__ = ["owed", "owing"]

Out = TypeVar("Out")


def owing(error: Exception, chunks: list[Out]) -> Exception:
    """``error`` carrying ``chunks`` (chat chunks or Responses events): what the call that
    raises it still owed.

    :class:`~rxgem.RxGemError` declares ``chunks``; another exception gets it too
    unless its type takes no attributes.
    """
    with suppress(AttributeError, TypeError):  # a type that takes no attributes
        setattr(error, "chunks", chunks)  # noqa: B010 (not declared on every exception type)
    return error


def owed(error: BaseException) -> list[Any]:
    """The outputs ``error`` carries (``[]`` for an error that carries none)."""
    return list(getattr(error, "chunks", ()))
