"""A plain HTTP/1.1 upstream: Python's ``http.server`` answering as Gemini would, for the
serve benchmark's ``--serve-upstream plain``.

Unlike FakeGemini (which sets ``TCP_NODELAY`` on its connections), it is a
server as people write one: a ``ThreadingHTTPServer`` with Nagle's algorithm left on,
the response's head flushed by ``end_headers()`` and the body written after it, so
a body write waits in its kernel until the head is acknowledged. With ``whole`` each
answer is one ``Content-Length`` body in one write; otherwise it is chunked, one write
per event, ``pause`` seconds apart.

It keeps the counts that ``python -m benchmarks._server`` reports (``stats``).
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["PlainGemini", "streamed"]


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_GET(self) -> None:
        self._answer(b"")

    def do_POST(self) -> None:
        self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _answer(self, body: bytes) -> None:
        owner = self.server.owner
        split = urlsplit(self.path)
        owner.count(self.command, split.path, split.query, self.headers, body)
        if split.path.endswith(":streamGenerateContent"):
            events = owner.generate
        elif split.path == "/v1beta/interactions":
            events = owner.interactions
        else:
            self.send_error(404)
            return
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            if owner.whole:
                whole = b"".join(events)
                self.send_header("Content-Length", str(len(whole)))
                self.end_headers()
                self.wfile.write(whole)
            else:
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for number, event in enumerate(events):
                    if number and owner.pause > 0:
                        time.sleep(owner.pause)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.write(b"0\r\n\r\n")
        except OSError:  # the client went away
            owner.finished(completed=False)
            self.close_connection = True
            return
        owner.finished(completed=True)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    owner: PlainGemini


class PlainGemini:
    """``http.server`` on an ephemeral loopback port answering every
    ``streamGenerateContent`` with ``generate`` and ``POST /v1beta/interactions`` with
    ``interactions`` (each a list of SSE events as bytes), in a thread until :meth:`close`.
    """

    def __init__(
        self,
        generate: list[bytes],
        interactions: list[bytes],
        *,
        pause: float = 0.0,
        whole: bool = False,
        backlog: int = 1024,
        key: str = "",
    ) -> None:
        self.generate, self.interactions = generate, interactions
        self.pause, self.whole, self.key = pause, whole, key
        self._lock = threading.Lock()
        self._stats: dict[str, Any] = {
            "requests": 0,
            "keyed": 0,
            "prompted": 0,
            "sse": 0,
            "completed": 0,
            "disconnects": 0,
        }
        self._paths: Counter[str] = Counter()
        server_class = type("Server", (_Server,), {"request_queue_size": backlog})
        self._server = server_class(("127.0.0.1", 0), _Handler)
        self._server.owner = self
        self.port = int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.1,), name="plain-gemini", daemon=True
        )
        self._thread.start()

    def count(self, method: str, path: str, query: str, headers: Any, body: bytes) -> None:
        params = parse_qs(query)
        key = self.key
        keyed = bool(key) and key in (headers.get("x-goog-api-key"), *params.get("key", ()))
        sse = params.get("alt") == ["sse"] or streamed(body)
        with self._lock:
            self._stats["requests"] += 1
            self._paths[f"{method} {path}"] += 1
            self._stats["keyed"] += keyed
            self._stats["prompted"] += b"Write a long answer." in body
            self._stats["sse"] += sse

    def finished(self, *, completed: bool) -> None:
        with self._lock:
            self._stats["completed" if completed else "disconnects"] += 1

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {**self._stats, "paths": dict(self._paths)}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def streamed(body: bytes) -> bool:
    """An Interactions create body asking for a stream."""
    if b'"stream"' not in body:
        return False
    try:
        return json.loads(body).get("stream") is True
    except (ValueError, AttributeError):
        return False
