"""Cassettes in tests: replayed by FakeGemini, or cut into marbles for an operator's test.

A cassette (docs/testing.md) is one recorded upstream exchange. :class:`CassetteShelf`
answers a request from a directory of them; :func:`cassette_events` and
:func:`cassette_marbles` turn one's response bytes into SSE events and a marble source.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..transport import CassetteError, cassette_bytes, read_cassette
from ._fake_response import FakeResponse

__all__ = ["CassetteShelf", "cassette_events", "cassette_marbles"]

_EVENT_END = re.compile(rb"\r\n\r\n|\n\n|\r\r")
_SECRET_PARAMS = frozenset({"key", "api_key", "access_token", "token"})


def cassette_events(cassette: str | os.PathLike[str] | bytes | Mapping[str, Any]) -> list[bytes]:
    """The response bytes of a cassette cut after each SSE event (each piece ends with its
    blank line; a tail without one, such as a JSON error, is the last piece). Joined, they
    are the recorded bytes."""
    raw = cassette_bytes(cassette)
    pieces: list[bytes] = []
    start = 0
    for match in _EVENT_END.finditer(raw):
        pieces.append(raw[start : match.end()])
        start = match.end()
    if start < len(raw):
        pieces.append(raw[start:])
    return pieces


def cassette_marbles(
    cassette: str | os.PathLike[str] | bytes | Mapping[str, Any],
) -> tuple[str, dict[str | float, bytes]]:
    """A marble source and its lookup for :func:`~rxgem.testing.run_marbles`: one event
    per marble (``e0``, ``e1``, ...), one frame apart, then completion:
    ``("-e0-e1-e2-|", {"e0": b"data: ...", ...})``."""
    events = cassette_events(cassette)
    lookup: dict[str | float, bytes] = {f"e{n}": event for n, event in enumerate(events)}
    return "".join(f"-{name}" for name in lookup) + "-|", lookup


def _canonical(body: Any) -> str:
    if isinstance(body, bytes | bytearray):
        try:
            body = json.loads(body) if body else None
        except ValueError:
            return bytes(body).decode("utf-8", "replace")
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _query(query: Mapping[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in sorted(query.items()) if k.lower() not in _SECRET_PARAMS)


class CassetteShelf:
    """The cassettes of a directory (``*.json``, by name), answering requests.

    A request matches a cassette by method, path, query (without credentials) and body
    (canonical JSON: keys sorted, no spaces); failing that, by method, path and body
    (any query). Several cassettes matching the same request answer in turn (by file
    name), the last one repeating. A miss is answered by FakeGemini with a 404 naming the
    request and the cassettes there are.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        files = sorted(self.directory.glob("*.json"))
        if not files:
            raise CassetteError(f"no cassettes (*.json) in {self.directory}")
        self._entries: list[tuple[str, str, str, str, FakeResponse]] = []
        for path in files:
            data = read_cassette(path)
            request, response = data["request"], data["response"]
            content_type = response.get("content_type") or "text/event-stream"
            answer = FakeResponse(
                body=cassette_bytes(data),
                status=response["status"],
                content_type=content_type,
            )
            self._entries.append(
                (
                    path.name,
                    f"{request['method']} {request['path']}",
                    _query(request.get("query") or {}),
                    _canonical(request.get("body")),
                    answer,
                )
            )
        self._used: dict[tuple[str, ...], int] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def answer(
        self, method: str, path: str, query: Mapping[str, str], body: bytes
    ) -> FakeResponse | None:
        """The recorded answer to a request, or None (not thread safe: FakeGemini locks)."""
        route, canonical, asked = f"{method} {path}", _canonical(body), _query(query)
        for exact in (True, False):
            found = [
                e
                for e in self._entries
                if e[1] == route and e[3] == canonical and (not exact or e[2] == asked)
            ]
            if found:
                key = (route, canonical, asked, str(exact))
                turn = self._used.get(key, 0)
                self._used[key] = turn + 1
                return found[min(turn, len(found) - 1)][4]
        return None

    def miss(self, method: str, path: str, body: bytes) -> str:
        """What a miss says: the request asked and the requests recorded."""
        known = "; ".join(f"{e[0]}: {e[1]}" for e in self._entries[:20])
        more = f" (and {len(self._entries) - 20} more)" if len(self._entries) > 20 else ""
        return (
            f"FakeGemini has no cassette for {method} {path} with this body"
            f" ({_canonical(body)[:200]}); the cassettes in {self.directory} are: {known}{more}"
        )
