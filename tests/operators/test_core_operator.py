"""Tests of ``core_operator``'s ties to reactivex: what its fast path on ``from_body`` restates.

On a :func:`~rxgem.operators.from_body` source the operator's ``subscribe`` is reactivex's
``Observable.subscribe`` without its first trampoline item, with reactivex's own
``AutoDetachObserver`` (``rxgem/operators/_core_operator.py``, ``_OnBody``). Its behaviour is
compared with the plain path in ``test_op_from_body.py``; the tests here fail as soon as
reactivex changes the code it restates, and keep rxgem off reactivex's internal package.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from reactivex import Observable
from reactivex.observer import AutoDetachObserver

import rxgem

RESTATED: dict[str, tuple[Callable[..., Any], str]] = {
    "reactivex.Observable.subscribe": (
        Observable.subscribe,
        "a0f8a37a981bc82e120e403d8468b89b6481ea35902d77fb284aa549018b10c9",
    ),
    "reactivex.observer.AutoDetachObserver": (
        AutoDetachObserver,
        "eb0ab12a181df52c0422037d7102c7f0c0cbae06392d03bc31239573af481ac9",
    ),
}
"""What ``_OnBody.subscribe`` restates or relies on, with the SHA-256 of its source in
reactivex 6.1.0."""


@pytest.mark.parametrize("name", RESTATED)
def test_the_reactivex_code_the_fast_path_restates_is_unchanged(name: str) -> None:
    code, recorded = RESTATED[name]
    digest = hashlib.sha256(inspect.getsource(code).encode()).hexdigest()
    assert digest == recorded, (
        f"{name} changed in this reactivex: re-check _OnBody.subscribe in "
        "rxgem/operators/_core_operator.py against it (the observer-or-callbacks "
        "arguments, the AutoDetachObserver, an error while subscribing sent to fail(), "
        "the disposable returned; only the trampoline item is left out on purpose), "
        f"then record the new digest here: {digest}"
    )


def test_no_module_of_rxgem_imports_reactivex_internals() -> None:
    package = Path(rxgem.__file__).parent
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [
                f"{path.relative_to(package)}: {name}"
                for name in names
                if name == "reactivex.internal" or name.startswith("reactivex.internal.")
            ]
    assert found == []
