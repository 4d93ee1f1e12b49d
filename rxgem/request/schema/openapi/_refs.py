"""Target ``openapi``: ``$ref`` inlined, as Gemini's ``Schema`` has none the Gemini API takes.

Each use of a same-document ``$ref`` is replaced by what it points to, its siblings winning.
A ref already in the chain that led to the node (``Walk.refs``) is a recursion, which
inlining cannot end: it is refused, as is a ref outside the document or to nothing. What
inlining copies is counted against the walk's size budget.
"""

from __future__ import annotations

from ....core import InvalidRequestError
from ..._json import at as _at
from ..._json import quoted
from .._walk import JSONObject, Walk, is_pointer, resolve_pointer
from ._vocabulary import SILENT, as_schema

__all__ = ["inline_ref", "pop_refs"]


def pop_refs(walk: Walk, keep: int) -> None:
    """Leave the ``$ref`` chain as it was when it held ``keep`` refs."""
    while len(walk.refs) > keep:
        walk.refs.popitem()


def inline_ref(walk: Walk, raw: JSONObject, where: str) -> JSONObject:
    """Replace ``$ref`` by what it points to; its siblings win (they describe this use).

    Gemini's ``Schema`` has no ``$ref`` the Gemini API takes, so each use is inlined. A ref
    already in the chain that led here is a recursion, which inlining cannot end. Each ref
    inlined joins the chain (``walk.refs``); the caller takes it off again.
    """
    while "$ref" in raw:
        ref = raw["$ref"]
        at = _at(where, "$ref")
        if type(ref) is not str:
            raise InvalidRequestError("must be a string", where=at)
        walk.spend(at, len(raw) + len(ref))
        if not is_pointer(ref):
            raise InvalidRequestError(
                f"$ref {quoted(ref)} cannot be inlined: only same-document refs ('#/...') can",
                where=at,
            )
        if ref in walk.refs:
            chain = list(walk.refs)
            shown = " → ".join((*chain[chain.index(ref) :], ref))
            raise InvalidRequestError(
                f"recursive $ref {quoted(ref)} ({shown}) cannot be inlined into Gemini's Schema",
                where=at,
            )
        found, target = resolve_pointer(walk.root, ref)
        if not found:
            raise InvalidRequestError(
                f"$ref {quoted(ref)} points to nothing in this schema", where=at
            )
        siblings = {k: v for k, v in raw.items() if k != "$ref" and k not in SILENT}
        raw = {**as_schema(target, at), **siblings}
        walk.refs[ref] = None
    return raw
