"""An operator over the core of one of the pipeline's stages, as the stage declares it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from reactivex import Observable

from ..core.pipeline import (
    INTERACTIONS_RESPONSES_STAGES,
    RESPONSES_STAGES,
    STAGES,
    Stage,
    options_doc,
)
from ._own_operator import core_operator

__all__ = ["documented", "over_core", "stage_operator"]

_STAGES = {
    stage.name: stage for stage in (*STAGES, *RESPONSES_STAGES, *INTERACTIONS_RESPONSES_STAGES)
}


def stage_operator(
    name: str, options: Mapping[str, Any]
) -> Callable[[Observable[Any]], Observable[Any]]:
    """The operator of stage ``name`` with its core's ``options``, checked now.

    Every subscription gets a fresh core; the stage says whether its core batches and
    whether it can end the stream early.
    """
    stage = _STAGES[name]
    return over_core(stage, stage.maker(options))


def over_core(
    stage: Stage[Any], make: Callable[[], Any]
) -> Callable[[Observable[Any]], Observable[Any]]:
    """The operator of ``stage`` over the cores ``make()`` makes (options already checked)."""
    return core_operator(make, batched=stage.batched, ends_early=stage.ends, name=stage.name)()


F = TypeVar("F", bound=Callable[..., Any])


def documented(options: Any) -> Callable[[F], F]:
    """Write the options of the ``TypedDict`` ``options`` into the docstring's ``Args``,
    from their declaration (before ``Returns:``)."""

    def decorate(function: F) -> F:
        section = (
            "    Args:\n        **options: checked at call time (a bad one raises"
            " ``TypeError`` or ``ValueError``):\n" + options_doc(options, indent="            ")
        )
        doc = function.__doc__ or ""
        head, returns, tail = doc.partition("\n    Returns:")
        function.__doc__ = f"{head.rstrip()}\n\n{section}\n{returns}{tail}"
        return function

    return decorate
