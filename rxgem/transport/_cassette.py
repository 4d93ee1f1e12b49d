"""Cassettes: one upstream exchange (request and the response bytes as received) as JSON.

The format (``"format": "rxgem-cassette/1"``, documented in docs/testing.md) carries the
upstream API, the method, the path and query (never ``key=``), the request body, the
status, the content type and the response bytes (``body_text`` when they are UTF-8, else
``body_base64``), with timestamps. Never a credential: headers are not kept but the
content type, and every credential the request carried (and every secret the recorder
was given: a server's client tokens) is replaced by ``[redacted]`` wherever it appears
(body, response, URL), by :func:`~rxgem.transport._redact.redact` on the joined bytes.

:func:`cassette_json` builds one (the server's inspector uses it too); :class:`Tape`
records one connection of the transport; :class:`CassetteDir` writes each to its own
file in a directory, bounded; :func:`read_cassette` loads and checks one.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, Literal
from urllib.parse import parse_qsl, urlsplit

from ._redact import REDACTED, redact, secret_forms

try:
    import fcntl
except ImportError:  # not on POSIX: each process counts its own
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "CASSETTE_FORMAT",
    "CassetteDir",
    "CassetteError",
    "CassetteSink",
    "Tape",
    "cassette_bytes",
    "cassette_json",
    "read_cassette",
    "secrets_of",
    "sink_of",
    "sniff_cassette",
]

CASSETTE_FORMAT = "rxgem-cassette/1"
_SECRET_PARAMS = frozenset({"key", "api_key", "access_token", "token"})
_SECRET_HEADERS = ("x-goog-api-key", "authorization")
_log = logging.getLogger("rxgem.record")

Upstream = Literal["generate-content", "interactions"]

_FILE_TAGS: Final = MappingProxyType({"generate-content": "gc", "interactions": "interactions"})
"""The tag of each cassette's ``upstream`` in a file name of :class:`CassetteDir`."""
CassetteSink = str | os.PathLike[str] | Callable[[dict[str, Any]], None]
"""The ``record=`` option of the transport: a file path (each exchange overwrites it) or
a callable given each exchange's cassette dict."""


class CassetteError(ValueError):
    """A file that is not a cassette this version reads."""


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _scrub(text: str, forms: tuple[bytes, ...]) -> str:
    return redact(text.encode("utf-8"), forms).decode("utf-8") if forms else text


def secrets_of(headers: Mapping[str, str]) -> list[str]:
    """The credentials among request ``headers`` (the key, the bearer token and its header)."""
    out: list[str] = []
    for name in _SECRET_HEADERS:
        value = headers.get(name)
        if value:
            out.append(value)
            if value.lower().startswith("bearer "):
                out.append(value[7:])
    return sorted(out, key=len, reverse=True)  # the longer first: "Bearer t" before "t"


def cassette_json(
    *,
    upstream: Upstream,
    method: str,
    url: str,
    request_body: bytes | Mapping[str, Any] | None,
    status: int,
    content_type: str | None,
    response: bytes,
    started_at: str | None = None,
    finished_at: str | None = None,
    complete: bool = True,
    secrets: Iterable[str] = (),
) -> dict[str, Any]:
    """A cassette (a JSON-ready dict) of one exchange, with ``secrets`` (those of 8
    characters or more, also as they read in a JSON string) and any ``key=`` query
    parameter replaced by ``[redacted]``. ``json.dumps`` it to write it."""
    forms = secret_forms(secrets)
    parts = urlsplit(url)
    query = {
        name: (REDACTED.decode() if name.lower() in _SECRET_PARAMS else _scrub(value, forms))
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    }
    body: Any = None
    if isinstance(request_body, bytes | bytearray):
        text = redact(bytes(request_body), forms).decode("utf-8", "replace")
        try:
            body = json.loads(text)
        except ValueError:
            body = text
    elif request_body is not None:
        body = json.loads(_scrub(json.dumps(request_body), forms))
    raw = redact(response, forms)
    answer: dict[str, Any] = {"status": status, "content_type": content_type}
    try:
        answer["body_text"] = raw.decode("utf-8")
    except UnicodeDecodeError:
        answer["body_base64"] = base64.b64encode(raw).decode("ascii")
    return {
        "format": CASSETTE_FORMAT,
        "upstream": upstream,
        "request": {
            "method": method.upper(),
            "host": parts.hostname or "",
            "path": _scrub(parts.path, forms),
            "query": query,
            "body": body,
        },
        "response": answer,
        "complete": complete,
        "started_at": started_at or _now(),
        "finished_at": finished_at or _now(),
    }


def read_cassette(source: str | os.PathLike[str] | bytes | Mapping[str, Any]) -> dict[str, Any]:
    """A cassette from a file, its bytes or its dict, checked.

    Raises:
        CassetteError: not a cassette (no ``"format": "rxgem-cassette/1"``, or a part missing).
    """
    if isinstance(source, Mapping):
        data: Any = dict(source)
    else:
        raw = source if isinstance(source, bytes) else Path(source).read_bytes()
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise CassetteError(f"not a cassette: not JSON ({exc})") from None
        except RecursionError:
            raise CassetteError("not a cassette: JSON nested too deeply") from None
    if not isinstance(data, dict) or data.get("format") != CASSETTE_FORMAT:
        raise CassetteError(f'not a cassette: no "format": "{CASSETTE_FORMAT}"')
    request, response = data.get("request"), data.get("response")
    if not isinstance(request, dict) or not isinstance(response, dict):
        raise CassetteError("not a cassette: no request or response object")
    if not isinstance(response.get("status"), int) or not (
        isinstance(response.get("body_text"), str) or isinstance(response.get("body_base64"), str)
    ):
        raise CassetteError("not a cassette: the response has no status or no body")
    return data


def cassette_bytes(cassette: str | os.PathLike[str] | bytes | Mapping[str, Any]) -> bytes:
    """The response bytes of a cassette, exactly as they were received.

    Raises:
        CassetteError: as :func:`read_cassette`, and for a ``body_base64`` that is not
            base64 or a ``body_text`` that is not text (a lone surrogate).
    """
    response = read_cassette(cassette)["response"]
    text = response.get("body_text")
    try:
        if isinstance(text, str):
            return text.encode("utf-8")
        return base64.b64decode(response["body_base64"], validate=True)
    except UnicodeEncodeError as exc:
        raise CassetteError(f"the response's body_text is not text: {exc.reason}") from None
    except binascii.Error as exc:
        raise CassetteError(f"the response's body_base64 is not base64: {exc}") from None


def sniff_cassette(head: bytes) -> bool:
    """Whether a file starting with ``head`` looks like a cassette (for ``rxgem convert``)."""
    return head.lstrip().startswith(b"{") and CASSETTE_FORMAT.encode() in head[:4096]


class Tape:
    """One connection being recorded: opened with the response's status, fed its bytes,
    closed once (then handed to the sink; a sink that fails is logged, never raised).

    On a :class:`CassetteDir`, the tape asks first: a recorder at its file limit, or
    whose bytes left the response outgrows, gets nothing held, built or serialised.
    """

    __slots__ = (
        "_chunks",
        "_closed",
        "_request",
        "_room",
        "_sink",
        "_size",
        "_started",
        "complete",
        "content_type",
        "status",
    )

    def __init__(
        self,
        sink: Callable[[dict[str, Any]], None],
        upstream: Upstream,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
    ) -> None:
        self._sink = sink
        secrets = secrets_of(headers)
        self._room: int | None = None
        if isinstance(sink, CassetteDir):
            self._room = sink.room()
            secrets = [*secrets, *sink.secrets]
        self._request = (upstream, method, url, content, secrets)
        self._started = _now()
        self._chunks: list[bytes] = []
        self._size = 0
        self._closed = False
        self.status = 0
        self.content_type: str | None = None
        self.complete = False

    def open(self, status: int, headers: Mapping[str, str]) -> None:
        self.status = status
        self.content_type = headers.get("content-type")

    def add(self, chunk: bytes) -> None:
        if self._room is None:
            self._chunks.append(chunk)
            return
        self._size += len(chunk)
        if self._size <= self._room:
            self._chunks.append(chunk)
        elif self._chunks:
            self._chunks.clear()  # it cannot fit: hold nothing more

    def close(self) -> None:
        if self._closed or not self.status:
            return
        self._closed = True
        if self._room is not None and isinstance(self._sink, CassetteDir):
            if not self._room:
                return  # the recorder is full (it said so)
            if self._size > self._room:
                self._sink.too_large(self._size)
                return
        upstream, method, url, content, secrets = self._request
        try:
            self._sink(
                cassette_json(
                    upstream=upstream,
                    method=method,
                    url=url,
                    request_body=content,
                    status=self.status,
                    content_type=self.content_type,
                    response=b"".join(self._chunks),
                    started_at=self._started,
                    complete=self.complete,
                    secrets=secrets,
                )
            )
        except Exception as exc:  # a recording never breaks the request
            _log.warning("rxgem: a cassette was not recorded: %s", type(exc).__name__)


def _write_file(path: Path, cassette: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(cassette, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def sink_of(record: CassetteSink | None) -> Callable[[dict[str, Any]], None] | None:
    """The sink of a ``record=`` option: a callable as is, a path written each time."""
    if record is None or callable(record):
        return record
    path = Path(record)
    return lambda cassette: _write_file(path, cassette)


class CassetteDir:
    """A sink writing each cassette to its own new file in ``directory``.

    Names are the recorder's own (``{time}-{pid}-{n}-{upstream}-{status}.json``), never
    built from the request, so a client cannot steer where a file goes, and processes
    sharing the directory (a server's workers) never take each other's names. At most
    ``max_files`` files and ``max_bytes`` in all are written by this recorder (then it
    stops, saying so once; an exchange whose response alone outgrows the bytes left is
    left out, said once too); with ``shared``, a file where several processes keep one
    count (under a lock), the limits are theirs together. A write that fails
    (unwritable directory, disk full) is logged once and the request goes on.
    ``secrets`` (a server's client tokens, its key) are redacted from every cassette
    besides the credentials each request carried.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        max_files: int = 1000,
        max_bytes: int = 256 * 1024 * 1024,
        secrets: Iterable[str] = (),
        shared: str | os.PathLike[str] | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.secrets = tuple(s for s in secrets if s)
        self.shared = None if shared is None or fcntl is None else Path(shared)
        self.files = 0
        """The cassettes written (by every process sharing the count, when it is shared)."""
        self.bytes = 0
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def _warn_once(self, what: str, message: str) -> None:
        if what not in self._warned:
            self._warned.add(what)
            _log.warning(message)

    def _full(self) -> None:
        self._warn_once(
            "full",
            f"rxgem: recording stopped: {self.files} cassettes, {self.bytes} bytes"
            f" written to {self.directory} (the limit is {self.max_files} files,"
            f" {self.max_bytes} bytes)",
        )

    @contextlib.contextmanager
    def _counting(self) -> Iterator[None]:
        """``files`` and ``bytes`` current, and what the block adds to them kept: under this
        process's lock and, when shared, the count file's."""
        with self._lock:
            if self.shared is None:
                yield
                return
            try:
                fd = os.open(self.shared, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError as exc:
                self._warn_once(
                    "shared",
                    f"rxgem: cannot share the cassette count ({exc.strerror}): this process"
                    " counts its own",
                )
                self.shared = None
                yield
                return
            with open(fd, "r+b") as count:
                assert fcntl is not None
                fcntl.flock(count, fcntl.LOCK_EX)
                try:
                    self.files, self.bytes = (int(n) for n in count.read().split())
                except ValueError:  # new (empty)
                    self.files, self.bytes = 0, 0
                before = (self.files, self.bytes)
                yield
                if (self.files, self.bytes) != before:
                    count.seek(0)
                    count.truncate()
                    count.write(f"{self.files} {self.bytes}\n".encode())

    def room(self) -> int:
        """The bytes a next cassette may take; 0 once the limit is reached (said once),
        or when the shared count cannot be read (said once too)."""
        try:
            with self._counting():
                if self.files >= self.max_files or self.bytes >= self.max_bytes:
                    self._full()
                    return 0
                return self.max_bytes - self.bytes
        except OSError as exc:
            self._warn_once(
                "count",
                f"rxgem: cannot read the cassette count ({exc.strerror or type(exc).__name__});"
                " requests go on unrecorded",
            )
            return 0

    def too_large(self, size: int) -> None:
        """An exchange of ``size`` response bytes was left out: more than the bytes left."""
        with self._lock:
            self._warn_once(
                "large",
                f"rxgem: an exchange of {size} bytes was not recorded: more than the"
                f" {self.max_bytes - self.bytes} bytes left of the limit ({self.max_bytes})",
            )

    def __call__(self, cassette: Mapping[str, Any]) -> None:
        if not self.room():
            return  # before serialising: past the limit, a cassette costs nothing
        text = (json.dumps(cassette, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
        with self._counting():
            if self.files >= self.max_files or self.bytes + len(text) > self.max_bytes:
                self._full()
                return
            self.files += 1
            self.bytes += len(text)
            n = self.files  # shared: the server's sequence, unique across its workers
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        status = int(cassette.get("response", {}).get("status", 0))
        upstream = _FILE_TAGS.get(str(cassette.get("upstream")), "gc")
        name = f"{stamp}-{os.getpid()}-{n:06d}-{upstream}-{status}.json"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with open(self.directory / name, "xb") as out:
                out.write(text)
        except OSError as exc:
            self._warn_once(
                "write",
                f"rxgem: cannot write cassettes to {self.directory}"
                f" ({exc.strerror or type(exc).__name__}); requests go on unrecorded",
            )
