"""FakeResponse: what FakeGemini sends for one request, and the faults to inject.

It only describes the response and cuts its body into pieces; FakeGemini
(:mod:`._fake_gemini`) frames and sends them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any, Final, Literal

from ._http_wire import TOKEN

__all__ = ["FakeResponse", "as_responses", "response_fields"]

_SSE: Final = "text/event-stream"
_JSON: Final = "application/json; charset=UTF-8"
_FRAMING_HEADERS: Final = frozenset({"content-length", "transfer-encoding"})


@dataclasses.dataclass(frozen=True)
class FakeResponse:
    """What FakeGemini sends for one request.

    A status-200 response is an SSE stream sent with ``Transfer-Encoding: chunked``;
    every piece of the body is one HTTP chunk, written and flushed on its own. Any
    other response (``error`` set, or ``status != 200``) has a ``Content-Length``
    body. The pieces are the body cut at every offset in ``split_at``, every
    ``chunk_size`` bytes, and (with ``raw_error``) where the raw error begins.

    Attributes:
        body: The response body (an SSE capture) for status 200; for another
            status without ``error``, the error body sent as is (it may be non-JSON).
        status: The HTTP status.
        headers: Extra response headers, e.g. ``{"Retry-After": "2"}``; they replace
            default headers of the same name (not the framing headers).
        error: A Google error object ``{"code": …, "message": …, "status": …}``,
            sent as the pretty-printed JSON body ``{"error": error}``; the status is
            ``status``, or ``error["code"]`` (500 if absent) when ``status`` is 200.
            ``body`` is then ignored.
        delay: Seconds to wait before sending anything (before the status line).
        split_at: Body offsets where the body is split into separate writes.
        chunk_size: Alternatively (or also), write the body in pieces of this size.
        pause: Seconds to sleep between pieces.
        drop_after: Close the connection abruptly after this many body bytes,
            without the end of the body (for a chunked body: the chunk in progress
            is cut short and the zero-length chunk is never sent).
        raw_error: Append ``json.dumps({"error": raw_error}, indent=2) + "\\n"``
            (unframed, LF line ends) right after ``body``, as Gemini does for an
            error in the middle of a stream. It starts a new piece, and it counts
            as body bytes for ``split_at``/``chunk_size``/``drop_after``.
        keepalive: During a ``pause`` longer than this that falls between two
            events (the body so far ends with a blank line), send the SSE comment
            ``": keep-alive\\n\\n"`` every ``keepalive`` seconds, as a real server
            would (status 200 only; these bytes do not count for ``drop_after``).
        content_type: The ``Content-Type`` of a 200 stream. For any other status,
            when left at ``"text/event-stream"``, ``application/json; charset=UTF-8``
            is sent instead.
    """

    body: bytes = b""
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    error: Mapping[str, Any] | None = None
    delay: float = 0.0
    split_at: Sequence[int] = ()
    chunk_size: int | None = None
    pause: float = 0.0
    drop_after: int | None = None
    raw_error: Mapping[str, Any] | None = None
    keepalive: float | None = None
    content_type: str = _SSE

    def __post_init__(self) -> None:
        if not isinstance(self.body, bytes):
            raise TypeError(f"body must be bytes, not {type(self.body).__name__}")
        status = self._status()
        if not 200 <= status <= 599 or status in (204, 304):
            raise ValueError(f"status {status} cannot carry a body")
        for what, seconds in (("delay", self.delay), ("pause", self.pause)):
            if not seconds >= 0:
                raise ValueError(f"{what} must be >= 0, got {seconds!r}")
        if self.keepalive is not None and not self.keepalive > 0:
            raise ValueError(f"keepalive must be > 0, got {self.keepalive!r}")
        if self.chunk_size is not None and self.chunk_size <= 0:
            raise ValueError(f"chunk_size must be > 0, got {self.chunk_size!r}")
        if status != 200 and (self.raw_error is not None or self.keepalive is not None):
            raise ValueError("raw_error and keepalive only apply to status-200 streams")
        size = len(self._payload())
        for offset in self.split_at:
            if not 0 <= offset <= size:
                raise ValueError(f"split_at offset {offset} is outside the body (0..{size})")
        if self.drop_after is not None and not 0 <= self.drop_after <= size:
            raise ValueError(f"drop_after {self.drop_after} is outside the body (0..{size})")
        for name, value in self.headers.items():
            if not TOKEN.fullmatch(name) or any(c in value for c in "\r\n\0"):
                raise ValueError(f"invalid header {name!r}: {value!r}")
            if name.lower() in _FRAMING_HEADERS:
                raise ValueError(f"header {name!r} is set by FakeGemini itself")

    def _status(self) -> int:
        if self.error is not None and self.status == 200:
            code = self.error.get("code", 500)
            if not isinstance(code, int) or isinstance(code, bool):
                raise ValueError(f"error['code'] must be an int, got {code!r}")
            return code
        return self.status

    def _is_stream(self) -> bool:
        return self._status() == 200

    def _payload(self) -> bytes:
        if self.error is not None:
            text = json.dumps({"error": self.error}, indent=2, ensure_ascii=False) + "\n"
            return text.encode()
        return self.body + self._raw_error()

    def _raw_error(self) -> bytes:
        if self.raw_error is None:
            return b""
        return (json.dumps({"error": self.raw_error}, indent=2, ensure_ascii=False) + "\n").encode()

    def _content_type(self) -> str:
        if self._is_stream() or self.content_type != _SSE:
            return self.content_type
        return _JSON

    def _pieces(self) -> list[bytes]:
        payload = self._payload()
        size = len(payload)
        cuts = {offset for offset in self.split_at if 0 < offset < size}
        if self.chunk_size is not None:
            cuts.update(range(self.chunk_size, size, self.chunk_size))
        if self.raw_error is not None and self.error is None and 0 < len(self.body) < size:
            cuts.add(len(self.body))
        bounds = [0, *sorted(cuts), size]
        return [payload[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def response_fields(
    response: FakeResponse,
    framing: Literal["chunked", "length", "close"],
    size: int,
    keep_alive: bool,
) -> dict[str, str]:
    """The headers of ``response`` (framing and ``Connection`` as asked)."""
    headers = {"Content-Type": response._content_type(), "Server": "rxgem-FakeGemini"}
    if response._is_stream():
        headers["Cache-Control"] = "no-cache"
    defaults = {name.lower(): name for name in headers}
    for name, value in response.headers.items():
        if name.lower() != "connection":
            headers.pop(defaults.get(name.lower(), name), None)
            headers[name] = value
    if framing == "chunked":
        headers["Transfer-Encoding"] = "chunked"
    elif framing == "length":
        headers["Content-Length"] = str(size)
    if not keep_alive:
        headers["Connection"] = "close"
    return headers


def as_responses(responses: Sequence[FakeResponse | bytes]) -> tuple[FakeResponse, ...]:
    """FakeGemini's scripted ``responses``: bytes become ``FakeResponse(body=...)``."""
    items: list[FakeResponse] = []
    for response in responses:
        if isinstance(response, FakeResponse):
            items.append(response)
        elif isinstance(response, bytes | bytearray | memoryview):
            items.append(FakeResponse(body=bytes(response)))
        else:
            raise TypeError(f"expected FakeResponse or bytes, not {type(response).__name__}")
    return tuple(items)
