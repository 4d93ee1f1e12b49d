"""Signature memory's limits, and the checks a store applies before it touches a backend.

A store remembers Gemini's thought signatures under opaque keys of the server's making
(``call:<model>:<tool call id>``, ``text:<model>:<hash>``...), so that a client that
echoes an id without its signature gets it back. Nothing here fails a request: a key or
value out of bounds is left out, as a signature that was never kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import islice

__all__ = [
    "DEFAULT_MAX_SIGNATURES",
    "DEFAULT_SIGNATURE_TTL",
    "MAX_RECALL",
    "MAX_SIGNATURE_BYTES",
    "MAX_SIGNATURE_KEY",
    "check_signature_options",
    "keys_to_recall",
    "signatures_to_keep",
]

DEFAULT_SIGNATURE_TTL = 86_400.0
"""Seconds a signature is kept after it was remembered, by default: a day, long enough
for a conversation a client resumes the same day."""

DEFAULT_MAX_SIGNATURES = 10_000
"""The most signatures one owner keeps by default (the oldest go beyond). A signature is
remembered under up to two keys (a Responses item id and its ``call_id``), so this is some
5,000 tool calls a day for one bearer token, more than an agent busy all day makes. A
signature is typically 0.5-6 KiB of base64 (at most :data:`MAX_SIGNATURE_BYTES`), so an
owner holds some 10-60 MiB at the bound; lower it when many tokens share a store."""

MAX_SIGNATURE_KEY = 256
"""The longest key (characters) a store keeps a signature under; longer ones are skipped."""

MAX_SIGNATURE_BYTES = 64 * 1024
"""The largest signature (UTF-8 bytes) a store keeps; larger ones are skipped."""

MAX_RECALL = 4096
"""The most keys one ``recall_signatures`` call reads: the first ones, the rest are
treated as not found."""


def check_signature_options(signature_ttl: float, max_signatures: int) -> None:
    """Raise ``ValueError`` unless the stores' signature options are in bounds."""
    if not signature_ttl > 0:
        raise ValueError("signature_ttl is a positive number of seconds")
    if isinstance(max_signatures, bool) or not isinstance(max_signatures, int):
        raise ValueError("max_signatures is a positive integer")
    if max_signatures < 1:
        raise ValueError("max_signatures is a positive integer")


def _fits(text: object, most: int, *, in_bytes: bool) -> bool:
    if not isinstance(text, str) or not text or len(text) > most:
        return False
    try:
        # A lone surrogate (valid in JSON, not in UTF-8) cannot reach a backend.
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return False
    return size <= most if in_bytes else True


def signatures_to_keep(signatures: Mapping[str, str], most: int) -> dict[str, str]:
    """The entries of ``signatures`` a store keeps, in their order: non-empty strings
    within :data:`MAX_SIGNATURE_KEY` and :data:`MAX_SIGNATURE_BYTES`, and of those the
    last ``most`` (the earlier ones would be evicted at once)."""
    kept = {
        key: value
        for key, value in signatures.items()
        if _fits(key, MAX_SIGNATURE_KEY, in_bytes=False)
        and _fits(value, MAX_SIGNATURE_BYTES, in_bytes=True)
    }
    if len(kept) > most:
        kept = dict(list(kept.items())[-most:])
    return kept


def keys_to_recall(keys: Sequence[str] | Iterable[str]) -> list[str]:
    """The keys a store looks up: of the first :data:`MAX_RECALL`, each one that could
    have been kept, once."""
    return [
        key
        for key in dict.fromkeys(islice(keys, MAX_RECALL))
        if _fits(key, MAX_SIGNATURE_KEY, in_bytes=False)
    ]
