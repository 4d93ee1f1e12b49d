"""The upstream is chosen once: outside option parsing and the upstream registry, no module
compares a value with an upstream's name.

Each upstream API is one object (:mod:`rxgem.upstreams`), chosen where the options are read
and passed along; what differs between upstreams is asked of that object (its reader, its
writers, its exchange, its credential), never decided by comparing a name. The check reads
every module's syntax tree for a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``)
with a string constant that names an upstream or its API, or a tuple, list or set of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NAMES = frozenset({"generate-content", "generateContent", "interactions", "gemini", "vertex"})
"""The values that name an upstream: the ``upstream`` option's (the in-process transport
spells ``generateContent``), and the ``api`` choice's."""

ALLOWED = {
    # the registry: the upstreams by the option values that choose them
    "rxgem/upstreams/_registry.py": "the registry",
    # option parsing: where a user's option value is checked and turned into the object
    "rxgem/core/_option_checks.py": "the pipeline's upstream and api options",
    "rxgem/inprocess/_options.py": "OpenAITransport(upstream=...)",
    "rxgem/cli/convert.py": "rxgem convert --from, matched with what the capture is",
    # not an upstream: a model's supportedGenerationMethods names Gemini's methods
    "rxgem/replies/_model_list.py": "a model that serves generateContent",
}
"""The modules that may compare with an upstream's name, and why."""


def _names_in(node: ast.expr) -> list[str]:
    """The upstream names ``node`` spells: a string constant, or a collection of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in NAMES else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [name for element in node.elts for name in _names_in(element)]
    return []


def comparisons(source: str) -> list[tuple[int, str]]:
    """(line, name) for each comparison in ``source`` with an upstream's name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += [(node.lineno, name) for name in _names_in(operand)]
    return found


def test_no_module_but_the_registry_and_option_parsing_compares_an_upstreams_name() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {name!r}"
        for path in sorted((ROOT / "rxgem").rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in ALLOWED
        for line, name in comparisons(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "ask the upstream object (rxgem.upstreams) instead of its name"


def test_the_allowed_modules_exist() -> None:
    # an entry whose module moved or went would let a new module of that name through
    assert all((ROOT / path).is_file() for path in ALLOWED)


def test_the_check_finds_every_kind_of_comparison() -> None:
    source = (
        'a == "interactions"\n'
        'if "vertex" != api: pass\n'
        'b = x in ("gemini", "vertex")\n'
        'c = y not in {"generateContent"}\n'
        'd = o.get("upstream", "generate-content") == "generate-content"\n'
        'e = z is "gemini"\n'
        'f = {"upstream": "interactions"}\n'  # a value, not a comparison
        'g = "interactions" if h else "generate-content"\n'
        'i = j == "chat"\n'
    )
    assert comparisons(source) == [
        (1, "interactions"),
        (2, "vertex"),
        (3, "gemini"),
        (3, "vertex"),
        (4, "generateContent"),
        (5, "generate-content"),
        (6, "gemini"),
    ]
