"""The public API is documented and does not grow by accident (the exact ``__all__`` of
``rxgem`` and ``rxgem.core`` is pinned in ``test_public_surface.py``)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import rxgem
import rxgem.items
import rxgem.operators

OPERATORS = {
    "from_body",
    "decode_sse",
    "parse",
    "group_by_slot",
    "latest_args",
    "flush_on_finish",
    "to_openai",
    "sse_encode",
    "gemini_to_openai",
    "pipeline_stages",
    "to_responses",
    "responses_sse_encode",
    "gemini_to_responses",
    # the Interactions API's reader stages, and the whole pipeline for it
    "parse_interactions",
    "read_steps",
    "interactions_to_openai",
    "interactions_to_responses",
    # the maker of every operator above that has a core, public for operators of your own
    "core_operator",
}


def test_operators_module() -> None:
    assert set(rxgem.operators.__all__) == OPERATORS
    for name in OPERATORS - {"pipeline_stages", "NamedOperator"}:
        operator = getattr(rxgem.operators, name)
        assert operator.__doc__, name
        assert "[" in operator.__doc__, f"{name} needs a marble diagram"


def _docstring(value: Any) -> str | None:
    """``value.__doc__``, read from the source when ``value`` was compiled (mypyc drops it)."""
    module = sys.modules[value.__module__]
    if not module.__spec__ or not str(module.__spec__.origin).endswith((".so", ".pyd")):
        return value.__doc__  # type: ignore[no-any-return]
    source = Path(rxgem._build.source_path(module.__name__)).read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef) and node.name == value.__name__:
            return ast.get_docstring(node)
    return None


def test_every_public_name_is_documented() -> None:
    for name in rxgem.__all__:
        value = getattr(rxgem, name)
        if callable(value):
            assert _docstring(value), f"rxgem.{name} has no docstring"


def _is_error(value: object) -> bool:
    return (
        isinstance(value, type) and issubclass(value, Exception) and not issubclass(value, Warning)
    )


def test_error_tree() -> None:
    errors = [value for value in map(rxgem.__dict__.get, rxgem.__all__) if _is_error(value)]
    assert len(errors) > 1
    for error in errors:
        assert issubclass(error, rxgem.RxGemError), error


def test_items_module_lists_every_item() -> None:
    from rxgem.core.slots import _items

    assert "Batch" in rxgem.items.__all__
    every = set(_items.__all__)
    assert set(rxgem.items.__all__) == every
