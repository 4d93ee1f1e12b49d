"""What a diagram shows of each value: :class:`Labeller`, extensible with your own types."""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType
from typing import Any, TypeVar

from ._describe import _ITEMS, CATEGORIES, Kinds, _ItemKind, category, describe, label, short

__all__ = ["Labeller", "default_labeller"]

T = TypeVar("T")


class Labeller:
    """A marble's label, a value's one-line description and its colour, for every value
    of the pipeline; :meth:`extend` teaches it item types of your own.

    Call it for a marble's few words (cut to ``limit`` characters with ``…``); a
    diagram drawn with it (``recorder.diagram(label=labeller)``) also takes from it
    the legend's and the hover text's descriptions and the marbles' colours. An item of
    your type is shown as you say alone and inside a batch (a ``list`` of items), beside
    rxgem's own.

    .. code::

        labeller = viz.label.extend(
            Redacted, lambda item: f"redacted#{item.slot}", category="text",
            describe=lambda item: f"Redacted({item.count} addresses)",
        )
        recorder.diagram(label=labeller)

    A labeller never changes: :meth:`extend` returns a new one.
    """

    def __init__(self, *, limit: int = 18) -> None:
        self.limit = limit
        self._kinds: Kinds = MappingProxyType(dict(_ITEMS))

    def extend(
        self,
        kind: type[T],
        label: Callable[[T], str],
        *,
        describe: Callable[[T], str] | None = None,
        category: str | Callable[[T], str | None] | None = None,
    ) -> Labeller:
        """A labeller that also knows ``kind`` (replacing what it knew of it).

        Args:
            kind: the exact type of the values (subclasses are not matched).
            label: a marble's few words for one value; in a batch, labels that end in
                ``#<n>`` are joined into runs as rxgem's own are (``tool#0-3``).
            describe: the one-line description (legend, hover text); default: its
                ``repr``, cut.
            category: the colour: one of ``"text"``, ``"thought"``, ``"call"``,
                ``"finish"``, ``"usage"``, ``"raw"``, ``"error"``, ``"other"``, or a
                function choosing one per value (``None``: no colour of its own).
        """
        if isinstance(category, str) and category not in CATEGORIES:
            raise ValueError(f"no category {category!r}; categories: {', '.join(CATEGORIES)}")
        choose: Callable[[T], str | None]
        if category is None or isinstance(category, str):
            fixed = category

            def choose(_: T) -> str | None:
                return fixed

        else:
            choose = category
        entry = _ItemKind[T](
            describe=describe or (lambda value: short(value, 60)), label=label, category=choose
        )
        extended = Labeller(limit=self.limit)
        extended._kinds = MappingProxyType({**self._kinds, kind: entry})
        return extended

    def __call__(self, value: Any) -> str:
        return label(value, self.limit, self._kinds)

    def describe(self, value: Any) -> str:
        """``value`` (any pipeline value, or an exception) as one line."""
        return describe(value, self._kinds)

    def category(self, value: Any) -> str:
        """The colour of ``value``'s marble: one of :data:`CATEGORIES`."""
        return category(value, self._kinds)

    def __repr__(self) -> str:
        own = [t.__name__ for t in self._kinds if t not in _ITEMS]
        return f"<Labeller limit={self.limit} own={own}>"


default_labeller = Labeller()
"""The labeller diagrams use unless given another (``rxgem.viz.label``)."""
