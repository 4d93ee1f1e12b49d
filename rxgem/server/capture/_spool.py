"""The inspector's spool: the recent exchanges of every worker of one server, on disk.

``rxgem serve`` runs a worker process per core, and a browser reaches any of them; so
each worker writes the exchanges it captures here, redacted, and every worker's page,
feed and downloads read them from here. A private directory (mode 0700): ``rxgem
serve`` makes it and removes it when it exits (``inspect_spool``); an app made without
one makes its own, removed when the app stops. In it:

- ``key``: the random key signing the inspector's sessions (made by the first worker);
- ``N.json``: exchange N's summary (what the event feed sends), rewritten as it streams;
- ``N.bin``: a JSON line (what a download and a diagram need), then the request body and
  the response bytes, both already redacted.

Each file is written whole under another name and renamed, so a reader sees one version
or the next, never half of one. Numbers are taken with ``O_EXCL``, so two workers never
take the same; whoever starts an exchange removes those older than the newest
``requests``. The spool holds at most ``requests`` exchanges (and, for a moment, one more
per worker), each of ``inspect_kb`` KiB of request body and of response at most.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import msgspec

from ...transport import cassette_json
from ..settings import SettingsError

__all__ = ["Kept", "Spool"]

_KEY: Final = "key"
_KEY_BYTES: Final = 32


@dataclass(frozen=True)
class Kept:
    """One exchange as the spool holds it: its header, and its redacted bytes."""

    number: int
    header: dict[str, Any]
    request: bytes
    response: bytes

    def pieces(self) -> list[bytes]:
        """The response's first pieces as received (as many as the header has cuts)."""
        found: list[bytes] = []
        start = 0
        for end in self.header.get("cuts", []):
            found.append(self.response[start:end])
            start = end
        return found

    def cassette(self, secrets: Iterable[str]) -> dict[str, Any]:
        """The exchange as a cassette (:func:`rxgem.transport.cassette_json`: the format
        ``rxgem convert`` and ``FakeGemini`` replay read), with what the inspector knows
        besides under ``"inspector"``."""
        header = self.header
        ended = header["ended"]
        cassette = cassette_json(
            upstream=header["upstream"],
            method=header["method"],
            url=header["url"],
            request_body=self.request or None,
            status=header["status"] or 0,
            content_type=header["content_type"] or None,
            response=self.response,
            started_at=_iso(header["started"]),
            finished_at=None if ended is None else _iso(ended),
            complete=header["complete"],
            secrets=secrets,
        )
        cassette["inspector"] = {
            name: header[name] for name in ("route", "request_id", "model", "truncated", "error")
        }
        return cassette


def _iso(moment: float) -> str:
    return (
        datetime.fromtimestamp(moment, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def _number(name: str) -> int | None:
    stem = name.partition(".")[0]
    return int(stem) if stem.isascii() and stem.isdigit() and len(stem) <= 12 else None


class Spool:
    """A spool directory (made here when ``path`` is ``None``).

    Raises:
        SettingsError: ``path`` is not a directory of this user that only it can read.
    """

    def __init__(self, path: str | None, requests: int) -> None:
        self._made: tempfile.TemporaryDirectory[str] | None = None
        if path is None:
            self._made = tempfile.TemporaryDirectory(prefix="rxgem-inspect-")
            path = self._made.name
        else:
            _check_private(path)
        self.path = path
        self.requests = requests
        self.key = self._key()
        self._cache: dict[int, tuple[tuple[int, int, int], dict[str, Any]]] = {}

    def close(self) -> None:
        """Remove the directory, if this spool made it."""
        if self._made is not None:
            self._made.cleanup()

    def _file(self, number: int, kind: str) -> str:
        return os.path.join(self.path, f"{number}.{kind}")

    def _key(self) -> bytes:
        """The session key: read, or made by the first worker to get here."""
        path = os.path.join(self.path, _KEY)
        if not os.path.exists(path):
            made = self._write_new(secrets.token_bytes(_KEY_BYTES))
            try:
                os.link(made, path)  # whoever links first wins: the others read theirs
            except FileExistsError:
                pass
            finally:
                os.unlink(made)
        with open(path, "rb") as file:
            key = file.read()
        if len(key) != _KEY_BYTES:
            raise SettingsError(f"the inspector's spool {self.path} has a damaged key")
        return key

    def _write_new(self, data: bytes, name: str | None = None) -> str:
        """``data`` in a new private file (under ``name``'s directory); its path."""
        made = f"{name or os.path.join(self.path, '.new')}.{os.getpid()}.{secrets.token_hex(6)}"
        descriptor = os.open(made, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        return made

    def _replace(self, path: str, data: bytes) -> None:
        os.replace(self._write_new(data, path), path)

    def _all(self) -> list[int]:
        return sorted({n for name in os.listdir(self.path) if (n := _number(name)) is not None})

    def numbers(self) -> list[int]:
        """The numbers of the exchanges kept, oldest first."""
        found = [
            n
            for name in os.listdir(self.path)
            if name.endswith(".json") and (n := _number(name)) is not None
        ]
        return sorted(found)[-self.requests :]

    def reserve(self) -> int:
        """A number no worker has taken: one past the newest."""
        taken = self._all()
        number = (taken[-1] if taken else 0) + 1
        while True:
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
                os.close(os.open(self._file(number, "json"), flags, 0o600))
            except FileExistsError:
                number += 1
            else:
                return number

    def prune(self) -> None:
        """Remove every file of the exchanges older than the newest ``requests``."""
        taken = self._all()
        if len(taken) <= self.requests:
            return
        oldest = taken[-self.requests]
        for name in os.listdir(self.path):
            number = _number(name)
            if number is not None and number < oldest:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(os.path.join(self.path, name))

    def write(
        self, number: int, summary: dict[str, Any], kept: tuple[dict[str, Any], bytes, bytes] | None
    ) -> bool:
        """Write exchange ``number``'s summary and (``kept``: header, request, response) its
        bytes; false if it was dropped meanwhile (nothing is written then)."""
        path = self._file(number, "json")
        if not os.path.exists(path):
            return False
        if kept is not None:
            header, request, response = kept
            data = msgspec.json.encode(header) + b"\n" + request + response
            self._replace(self._file(number, "bin"), data)
        self._replace(path, msgspec.json.encode(summary))
        return True

    def summaries(self) -> list[dict[str, Any]]:
        """The summaries of the exchanges kept, oldest first (each read again only when
        its file changed)."""
        found: list[dict[str, Any]] = []
        cache: dict[int, tuple[tuple[int, int, int], dict[str, Any]]] = {}
        for number in self.numbers():
            try:
                status = os.stat(self._file(number, "json"))
            except FileNotFoundError:
                continue
            token = (status.st_ino, status.st_mtime_ns, status.st_size)
            known = self._cache.get(number)
            summary = known[1] if known is not None and known[0] == token else None
            if summary is None and (summary := self._read_summary(number)) is None:
                continue
            cache[number] = (token, summary)
            found.append(summary)
        self._cache = cache
        return found

    def _read_summary(self, number: int) -> dict[str, Any] | None:
        try:
            with open(self._file(number, "json"), "rb") as file:
                summary = msgspec.json.decode(file.read())
        except (FileNotFoundError, msgspec.DecodeError):  # dropped, or just taken
            return None
        return summary if isinstance(summary, dict) else None

    def read(self, number: int) -> Kept | None:
        """Exchange ``number``'s header and bytes, if it is kept."""
        if number not in self.numbers():
            return None
        try:
            with open(self._file(number, "bin"), "rb") as file:
                data = file.read()
        except FileNotFoundError:
            return None
        line, _, rest = data.partition(b"\n")
        try:
            header = msgspec.json.decode(line)
        except msgspec.DecodeError:
            return None
        size = header["request_size"]
        return Kept(number, header, rest[:size], rest[size:])


def _check_private(path: str) -> None:
    try:
        status = os.stat(path)
    except OSError as exc:
        raise SettingsError(f"inspect_spool {path!r}: {exc.strerror}") from None
    if not stat.S_ISDIR(status.st_mode):
        raise SettingsError(f"inspect_spool {path!r} is not a directory")
    if status.st_uid != os.getuid() or status.st_mode & 0o077:
        raise SettingsError(
            f"inspect_spool {path!r} must be this user's, readable by no one else (chmod 700):"
            " it holds what clients sent"
        )
