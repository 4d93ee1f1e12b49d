"""What one schema conversion carries, whichever its target: budgets, notes, the ``$ref`` chain.

``to_gemini_schema`` makes one :class:`Walk` per call and hands it
down. It counts what is written against the budgets (:data:`MAX_SCHEMA_NODES` schema nodes,
:data:`MAX_SCHEMA_DEPTH` levels, and for the ``openapi`` target :data:`MAX_SCHEMA_SIZE`, about
the characters it reads and writes): inlining ``$ref`` and distributing a union's keywords
into its branches copy content, and can grow a schema exponentially; a deep one would
otherwise end in a ``RecursionError``. It gathers the notes (the first
:data:`MAX_SCHEMA_NOTES`) and holds the ``$ref`` chain that led to the current node.
:func:`resolve_pointer` finds what a same-document ``$ref`` points to, for both targets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import unquote

from ...core import InvalidRequestError
from .._json import JSONObject

__all__ = [
    "MAX_SCHEMA_DEPTH",
    "MAX_SCHEMA_NODES",
    "MAX_SCHEMA_NOTES",
    "MAX_SCHEMA_SIZE",
    "JSONObject",
    "Walk",
    "is_pointer",
    "resolve_pointer",
]

MAX_SCHEMA_NODES: Final = 4096
"""Most schema nodes one conversion may write (after ``$ref`` inlining)."""
MAX_SCHEMA_DEPTH: Final = 64
"""Deepest nesting of schemas (``properties``, ``items``, ``anyOf`` ... levels)."""
MAX_SCHEMA_NOTES: Final = 100
"""Most notes one conversion lists (then one line says more were left out): a schema with
thousands of approximations (or a ``$ref`` inlined thousands of times) would otherwise
bury the reader, and cost a warning each."""
MAX_SCHEMA_SIZE: Final = 1 << 21
"""Most the ``openapi`` walk may read and write, about in characters: every keyword of every
node it writes (after ``$ref`` inlining), the length of its strings and names, the size of its
``enum``, ``default`` and ``example`` values."""


@dataclass
class Walk:
    """One conversion's state: the document (for ``$ref``), the notes, the budgets, and the
    ``$ref`` chain that led to the current node (for the ``openapi`` target's cycle check:
    pushed and popped as the walk goes down and back up, so a lookup costs no scan)."""

    root: JSONObject
    max_nodes: int
    max_depth: int
    max_size: int
    nodes: int = 0
    size: int = 0
    notes: dict[str, None] = field(default_factory=dict)  # an ordered set
    full: bool = False  # MAX_SCHEMA_NOTES reached
    refs: dict[str, None] = field(default_factory=dict)  # an ordered set, used as a stack

    def enter(self, where: str, depth: int) -> None:
        """Count one more schema node, within the budget."""
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise InvalidRequestError(
                f"schema too large for Gemini: more than {self.max_nodes} nodes"
                " (after inlining $ref)",
                where=where,
            )
        if depth > self.max_depth:
            raise InvalidRequestError(
                f"schema nested deeper than {self.max_depth} levels", where=where
            )

    def spend(self, where: str, size: int) -> None:
        """Count ``size`` more against the size budget (the ``openapi`` walk)."""
        self.size += size
        if self.size > self.max_size:
            raise InvalidRequestError(
                f"schema too large for Gemini: more than {self.max_size} characters"
                " (after inlining $ref)",
                where=where,
            )

    def note(self, where: str, what: str) -> None:
        if len(self.notes) >= MAX_SCHEMA_NOTES:
            self.full = True
            return
        self.notes[f"{where}: {what}" if where else what] = None


def resolve_pointer(root: JSONObject, ref: str) -> tuple[bool, Any]:
    """Resolve a same-document JSON-pointer ``$ref`` (``#``, ``#/$defs/A``): (found, value)."""
    fragment = unquote(ref[1:])
    value: Any = root
    for token in fragment.split("/")[1:] if fragment else []:
        token = token.replace("~1", "/").replace("~0", "~")
        if type(value) is dict and token in value:
            value = value[token]
        elif type(value) is list and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value


def is_pointer(ref: str) -> bool:
    return ref == "#" or ref.startswith("#/")
