"""The upstream is chosen once: outside option parsing and the upstream registry, no module
compares a value with an upstream's name.

Each upstream API is one object (:mod:`rxgem.upstreams`), chosen where the options are read
and passed along; what differs between upstreams is asked of that object (its reader, its
writers, its exchange, its credential), never decided by comparing a name. The check reads
every module's syntax tree for a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``)
with a string constant that names an upstream or its API, or a tuple, list or set of them.

Nor does a module keep its own list of upstreams: every list of the upstreams' names (the
server's ``UPSTREAM_APIS`` and ``--upstream-api`` choices, ``OpenAITransport``'s spellings)
is the registry's ``UPSTREAM_NAMES``, so that adding an upstream is a folder and a registry
entry (``tests/upstreams/test_new_upstream.py`` adds one). What is spelled out elsewhere
names a stream *format* (the core's readers, the transport's cassettes, a capture's kind)
or the ``api`` choice's enum tables, which upstreams share.
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
    "rxgem/cli/convert.py": "rxgem convert --from, matched with what the capture is",
    # not an upstream: a model's supportedGenerationMethods names Gemini's methods
    "rxgem/replies/_model_list.py": "a model that serves generateContent",
}
"""The modules that may compare with an upstream's name, and why."""

LISTS = {
    "rxgem/core/_option_checks.py": "the stream formats the core reads (its readers)",
    "rxgem/core/gemini/_enums.py": "the api choice: whose enum numbers a stream has",
    "rxgem/request/_policy.py": "the api choice: whose schema dialect a request takes",
    "rxgem/transport/_cassette.py": "a cassette's stream format, and its file tag",
    "rxgem/cli/_upstream_of.py": "the kinds of capture rxgem convert tells apart",
    "rxgem/cli/convert.py": "rxgem convert --from: a capture's stream format",
}
"""The modules that may spell out several upstream names together, and why: none lists
the upstreams themselves."""


def _names_in(node: ast.expr) -> list[str]:
    """The upstream names ``node`` spells: a string constant, or a collection of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in NAMES else []
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [name for element in node.elts for name in _names_in(element)]
    return []


def lists(source: str) -> list[tuple[int, list[str]]]:
    """(line, names) for each tuple, list, set or dict (its keys) in ``source`` that spells
    two upstream names or more (a ``Literal[...]``'s are a tuple)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            elements = node.elts
        elif isinstance(node, ast.Dict):
            elements = [key for key in node.keys if key is not None]
        else:
            continue
        names = sorted({name for element in elements for name in _names_in(element)})
        if len(names) > 1:
            found.append((node.lineno, names))
    return sorted(found)


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


def test_no_module_but_the_registry_lists_the_upstreams() -> None:
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {names}"
        for path in sorted((ROOT / "rxgem").rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in LISTS
        and path.relative_to(ROOT).as_posix() != "rxgem/upstreams/_registry.py"
        for line, names in lists(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "take the names from the registry (rxgem.upstreams.UPSTREAM_NAMES)"


def test_every_list_of_upstream_names_is_the_registrys() -> None:
    import argparse
    from typing import get_args

    from rxgem.cli.serve import add_serve_parser
    from rxgem.core import pipeline
    from rxgem.core.pipeline._stages import READERS
    from rxgem.inprocess import _options
    from rxgem.server import UPSTREAM_APIS, ServerSettings
    from rxgem.upstreams import UPSTREAM_NAMES
    from rxgem.upstreams._registry import UPSTREAMS

    assert tuple(dict.fromkeys(upstream.name for upstream in UPSTREAMS)) == UPSTREAM_NAMES
    assert UPSTREAM_APIS is UPSTREAM_NAMES
    assert ServerSettings(api_key="k").upstream_api == UPSTREAM_NAMES[0]
    parser = argparse.ArgumentParser()
    serve = add_serve_parser(parser.add_subparsers())
    (flag,) = (a for a in serve._actions if "--upstream-api" in a.option_strings)
    assert flag.choices is UPSTREAM_APIS
    assert tuple(_options._NAMES.values()) == UPSTREAM_NAMES
    # the core's list is of stream formats: its readers, each some upstream's
    assert get_args(pipeline.Upstream) == tuple(reader.name for reader in READERS)
    assert {id(upstream.reader) for upstream in UPSTREAMS} == {id(reader) for reader in READERS}


def test_the_allowed_modules_exist() -> None:
    # an entry whose module moved or went would let a new module of that name through
    assert all((ROOT / path).is_file() for path in (*ALLOWED, *LISTS))


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


def test_the_check_finds_every_kind_of_list() -> None:
    source = (
        'A = ("generate-content", "interactions")\n'
        'B = Literal["gemini", "vertex"]\n'
        'C = {"generateContent": 1, "interactions": 2}\n'
        'D = ["interactions"]\n'  # one name is not a list of upstreams
        'E = {"gemini", "chat"}\n'
    )
    assert lists(source) == [
        (1, ["generate-content", "interactions"]),
        (2, ["gemini", "vertex"]),
        (3, ["generateContent", "interactions"]),
    ]
