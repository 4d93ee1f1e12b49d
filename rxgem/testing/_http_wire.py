"""HTTP/1.1 on the wire, without sockets: chunk framing, response heads, parsed requests.

Shared by the loopback server (:mod:`._loopback_http`), which has h11 parse each
request into a :class:`Request`, and FakeGemini, which frames its responses here as
raw bytes, not with h11, so that it can also send them broken the way a failing
upstream does (h11 would refuse to write a chunk shorter than its size line).
"""

from __future__ import annotations

import dataclasses
import http
import re
from collections.abc import Mapping
from typing import Final

__all__ = [
    "LAST_CHUNK",
    "TOKEN",
    "BadRequest",
    "Request",
    "chunk",
    "chunk_head",
    "response_head",
]

TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
"""An HTTP token, e.g. a valid header name."""
LAST_CHUNK: Final = b"0\r\n\r\n"
"""The zero-length chunk (no trailers) that ends a chunked body."""


class BadRequest(Exception):
    """A request the server cannot parse; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclasses.dataclass
class Request:
    """One parsed request; header names lower-cased, repeats joined with ``", "``."""

    method: str
    target: str
    version: str
    headers: dict[str, str]
    body: bytes


def chunk_head(data: bytes) -> bytes:
    """The size line of an HTTP chunk carrying ``data``."""
    return f"{len(data):x}\r\n".encode()


def chunk(data: bytes) -> bytes:
    """``data`` framed as one complete HTTP chunk."""
    return chunk_head(data) + data + b"\r\n"


def response_head(status: int, headers: Mapping[str, str]) -> bytes:
    """The status line and header block of a response (framing headers included by caller)."""
    lines = [f"HTTP/1.1 {status} {_phrase(status)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _phrase(status: int) -> str:
    if status == 499:  # not in http.HTTPStatus, but Google's "client closed request"
        return "Client Closed Request"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"
