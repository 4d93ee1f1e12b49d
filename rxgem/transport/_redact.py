"""Secrets out of what is kept: the one redaction of the recorder's cassettes and of the
server's inspector (which shows and downloads the same exchanges).

Redaction works on bytes, on a whole body once its pieces are joined: a secret the
network cut in two is found as well as one that came in a piece.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Final

__all__ = ["MIN_SECRET", "REDACTED", "redact", "secret_forms"]

REDACTED: Final = b"[redacted]"
MIN_SECRET: Final = 8
"""Secrets shorter than this are not searched for in bodies: they would match ordinary
text everywhere (a token ``t``); the headers that carry them are never kept anyway."""


def secret_forms(secrets: Iterable[str | bytes]) -> tuple[bytes, ...]:
    """What to search for to redact ``secrets``: each of :data:`MIN_SECRET` characters or
    more, as it is and as it reads inside a JSON string (escaped, ``\\u`` or not), the
    longer first (``Bearer t...`` before ``t...``)."""
    forms: set[bytes] = set()
    for secret in secrets:
        text = secret.decode("utf-8", "replace") if isinstance(secret, bytes) else secret
        if len(text) < MIN_SECRET:
            continue
        forms.add(secret if isinstance(secret, bytes) else secret.encode("utf-8"))
        for ascii_only in (False, True):
            forms.add(json.dumps(text, ensure_ascii=ascii_only)[1:-1].encode("utf-8"))
    return tuple(sorted(forms, key=len, reverse=True))


def redact(data: bytes, secrets: Iterable[bytes]) -> bytes:
    """``data`` with every occurrence of each secret replaced by ``[redacted]``."""
    for secret in secrets:
        if secret:
            data = data.replace(secret, REDACTED)
    return data
