"""The operator factory of a sans-IO core: :func:`core_operator`, for operators of your own
and rxgem's own stages alike. The subscription machinery is compiled
(:mod:`._core_operator`); this face is not, so that ``help(core_operator)`` and its typed
overloads are there on the compiled build too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, ParamSpec, TypeVar, overload

from reactivex import Observable

from ..core import Core
from ._core_operator import core_stage

__all__ = ["core_operator"]

A = TypeVar("A")
B = TypeVar("B")
P = ParamSpec("P")


@overload
def core_operator(
    core: Callable[P, Core[A, B]],
    *,
    batched: Literal[False] = False,
    ends_early: bool = False,
    name: str | None = None,
) -> Callable[P, Callable[[Observable[A]], Observable[B]]]: ...


@overload
def core_operator(
    core: Callable[P, Core[A, B]],
    *,
    batched: Literal[True],
    ends_early: bool = False,
    name: str | None = None,
) -> Callable[P, Callable[[Observable[A]], Observable[list[B]]]]: ...


@overload
def core_operator(
    core: Callable[P, Core[A, Any]],
    *,
    batched: bool,
    ends_early: bool = False,
    name: str | None = None,
) -> Callable[P, Callable[[Observable[A]], Observable[Any]]]: ...


def core_operator(
    core: Callable[P, Core[A, Any]],
    *,
    batched: bool = False,
    ends_early: bool = False,
    name: str | None = None,
) -> Callable[P, Callable[[Observable[A]], Observable[Any]]]:
    """The operator factory of a sans-IO core: what rxgem's own operators are made with.

    .. code::

        redact = core_operator(Redactor, batched=True)   # Redactor: a Core of batches

        ---[Text("mail a@b.")]---[Text("c now")]---|
        [                 redact()                 ]
        ---[Text("mail ")]-------[Text("[email] ")]---[Text("now")]|

    ``core`` is a class (or any callable) making an object with the core protocol
    (:class:`rxgem.core.Core`): ``feed(value) -> list``, ``close(error=None) -> list``
    and an ``error`` attribute (``None`` unless it found an error after returning valid
    outputs). The factory takes ``core``'s own arguments; each subscription makes a
    fresh ``core(*args, **kwargs)``, so state never leaks between subscriptions. Each
    value is fed to the core and what ``feed`` returns is emitted, in order; at
    completion ``close()``'s outputs are emitted, then completion. On an error, from
    upstream or raised by the core, ``close(error)``'s outputs (what the core owes)
    are emitted first, then the error; one the core raised carries a note naming
    ``name`` (default: the core's class name).

    Args:
        core: makes one core per subscription, from the factory's arguments.
        batched: ``feed`` and ``close`` return one *batch* (a list of
            :mod:`rxgem.items`), emitted as one value unless empty, as the middle
            stages pass them; else each returned value is emitted.
        ends_early: once the core's ``done`` is true, the operator completes and lets
            go of its source (as ``decode_sse`` does at ``data: [DONE]``).
        name: the stage's name in error notes.

    Returns:
        A factory with ``core``'s parameters, returning an operator from
        ``Observable[A]`` to ``Observable[B]`` (``Observable[list[B]]``, batched).
    """

    def factory(*args: P.args, **kwargs: P.kwargs) -> Callable[[Observable[A]], Observable[Any]]:
        if not args and not kwargs:
            return core_stage(core, batched, ends_early, name)

        def make() -> Core[A, Any]:
            return core(*args, **kwargs)

        return core_stage(make, batched, ends_early, name)

    return factory
