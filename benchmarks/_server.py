"""A FakeGemini serving a generated text capture, run as a child process.

``python -m benchmarks._server --events 200 --pause 0`` starts
``rxgem.testing.FakeGemini`` on an ephemeral loopback port, prints the port on one
line, and serves (every request gets the same capture, one HTTP chunk per event,
``--pause`` seconds between events) until its standard input is closed, with a listen
backlog of ``--backlog``: its accept thread competes for the GIL with one thread per open
connection, so with the default of 128 some of 1000 simultaneous connects are dropped.
With ``--http2`` it speaks cleartext HTTP/2 with prior knowledge instead
(``FakeGemini(http2=True)``, which needs the ``h2`` package): one asyncio thread, many
streams per connection.
"""

from __future__ import annotations

import argparse
import itertools
import sys

from rxgem.testing import FakeGemini, FakeResponse

from .captures import text_answer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks._server")
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--backlog", type=int, default=1024)
    parser.add_argument("--http2", action="store_true")
    args = parser.parse_args(argv)
    capture = text_answer(args.events)
    bounds = list(itertools.accumulate(len(event) for event in capture.events))[:-1]
    response = FakeResponse(body=capture.body, split_at=bounds, pause=args.pause)
    with FakeGemini(response, backlog=args.backlog, http2=args.http2) as fake:
        print(fake.port, flush=True)
        sys.stdin.read()  # until the parent closes our stdin
    return 0


if __name__ == "__main__":
    sys.exit(main())
