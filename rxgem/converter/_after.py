"""Your own cores inside a :class:`~rxgem.Converter`: ``after={"read_steps": Redactor}``.

A core placed after a stage is fed that stage's outputs, and what it returns goes on
to the next stage (or to the next core placed after the same stage), as
``pipe(*stages[:i + 1], core_operator(Core, batched=...)(), *stages[i + 1:])`` would
run it. Its values are the ones between those two stages, so it is batched exactly
when the stage before it is (:attr:`rxgem.core.Stage.batched`, what rxgem's own
operators are made with).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from ..core import Core
from ..core.pipeline import Stage

__all__ = ["After", "CoreMaker", "insert"]

CoreMaker: TypeAlias = Callable[[], Core[Any, Any]]
"""A core class, or a zero-argument factory: called once per converter (one stream)."""

After: TypeAlias = Mapping[str, CoreMaker | Sequence[CoreMaker]]
"""Stage name → the core (or cores, in order) fed that stage's outputs."""


def insert(
    stages: tuple[Stage[Any], ...], cores: tuple[Any, ...], after: After
) -> tuple[tuple[Any, ...], tuple[bool, ...], tuple[str | None, ...]]:
    """``cores`` (one per stage) with fresh user cores after the stages ``after`` names:
    the cores, each one's ``batched`` flag and name (``None`` for rxgem's own).

    Raises:
        ValueError: a name that is not one of ``stages`` but the last.
        TypeError: a value that is not a core class or factory (or a sequence of them).
    """
    names = [stage.name for stage in stages[:-1]]
    for name in after:
        if name not in names:
            raise ValueError(
                f"Converter(after=...) got an unknown stage {name!r}; expected one of "
                f"{', '.join(names)}"
            )
    out: list[Any] = []
    batched: list[bool] = []
    labels: list[str | None] = []
    for stage, core in zip(stages, cores, strict=True):
        out.append(core)
        batched.append(stage.batched)
        labels.append(None)
        given = after.get(stage.name, ())
        makers = (given,) if callable(given) else given
        for make in makers:
            if not callable(make):
                raise TypeError(
                    f"Converter(after={{{stage.name!r}: ...}}) takes a core class or a"
                    f" zero-argument factory, got {type(make).__name__}"
                )
            user = make()
            out.append(user)
            batched.append(stage.batched)
            labels.append(type(user).__name__)
    return tuple(out), tuple(batched), tuple(labels)
