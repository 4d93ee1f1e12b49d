"""A FakeGemini serving a generated text capture, run as a child process.

``python -m benchmarks._server --events 200 --pause 0`` starts
``rxgem.testing.FakeGemini`` on an ephemeral loopback port, prints the port on one
line, and serves (every request gets the same capture, one HTTP chunk per event,
``--pause`` seconds between events; with ``--whole``, the whole answer in one write and
one HTTP chunk) until its standard input is closed, with a listen
backlog of ``--backlog``: its accept thread competes for the GIL with one thread per open
connection, so with the default of 128 some of 1000 simultaneous connects are dropped.
It answers ``POST /v1beta/interactions`` too, with the same answer as an Interactions stream
(``captures.interactions_answer``: the same text, one piece per ``generateContent`` event,
sent as prepared bytes as the ``generateContent`` answer is), for ``rxgem serve
--upstream-api interactions``.
With ``--http2`` it speaks cleartext HTTP/2 with prior knowledge instead
(``FakeGemini(http2=True)``, which needs the ``h2`` package): one asyncio thread, many
streams per connection. With ``--plain`` it is Python's ``http.server`` instead
(``benchmarks._plain``: Nagle's algorithm on, the head and the body in separate writes,
as a plain HTTP/1.1 server writes them; ``--whole``: a ``Content-Length`` body in one
write), with the same answers and counts.

A line ``stats`` on its standard input makes it print one JSON line on stdout: the
requests it has received (``requests``; by ``"METHOD path"`` in ``paths``; with the key
``--key`` in the ``x-goog-api-key`` header or the ``key`` query parameter in ``keyed``; whose
body holds the benchmark's prompt in ``prompted``; asking for a stream in ``sse``: ``alt=sse``,
or ``"stream": true`` in an Interactions create body), the
responses sent completely (``completed``) and cut short by the client (``disconnects``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from typing import Any

from rxgem.testing import FakeGemini, FakeResponse

from ._plain import PlainGemini, streamed
from .captures import Capture, interactions_answer, text_answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._server")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--backlog", type=int, default=1024)
    parser.add_argument("--http2", action="store_true")
    parser.add_argument(
        "--whole", action="store_true", help="write each answer at once (one HTTP chunk)"
    )
    parser.add_argument("--key", default="", help="the API key the stats look for")
    parser.add_argument(
        "--plain",
        action="store_true",
        help="serve with Python's http.server (Nagle on) instead of FakeGemini",
    )
    args = parser.parse_args(argv)
    capture = text_answer(args.events)
    if args.plain:
        if args.http2:
            parser.error("--plain speaks HTTP/1.1 only")
        plain = PlainGemini(
            list(capture.events),
            list(interactions_answer(capture).events),
            pause=args.pause,
            whole=args.whole,
            backlog=args.backlog,
            key=args.key,
        )
        try:
            print(plain.port, flush=True)
            for line in sys.stdin:
                if line.strip() == "stats":
                    print(json.dumps(plain.stats()), flush=True)
        finally:
            plain.close()
        return 0

    def response(capture: Capture) -> FakeResponse:
        bounds = list(itertools.accumulate(len(event) for event in capture.events))[:-1]
        split = [] if args.whole else bounds
        return FakeResponse(body=capture.body, split_at=split, pause=args.pause)

    with FakeGemini(
        response(capture),
        backlog=args.backlog,
        http2=args.http2,
        interactions=[response(interactions_answer(capture))],
    ) as fake:
        print(fake.port, flush=True)
        for line in sys.stdin:  # until the parent closes our stdin
            if line.strip() == "stats":
                print(json.dumps(_stats(fake, args.key)), flush=True)
    return 0


def _stats(fake: FakeGemini, key: str) -> dict[str, Any]:
    requests = fake.requests
    paths = Counter(f"{r.method} {r.path}" for r in requests)
    headers = [{k.lower(): v for k, v in r.headers.items()} for r in requests]
    keyed = sum(
        1
        for r, h in zip(requests, headers, strict=True)
        if key and key in (h.get("x-goog-api-key"), r.query.get("key"))
    )
    return {
        "requests": len(requests),
        "paths": dict(paths),
        "keyed": keyed,
        "prompted": sum(1 for r in requests if b"Write a long answer." in r.body),
        "sse": sum(1 for r in requests if r.query.get("alt") == "sse" or streamed(r.body)),
        "completed": fake.completed,
        "disconnects": fake.disconnects,
    }


if __name__ == "__main__":
    sys.exit(main())
