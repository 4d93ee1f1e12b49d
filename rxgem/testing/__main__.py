"""``python -m rxgem.testing``: FakeGemini alone, for trying a client without a key.

Prints the base URL (``http://127.0.0.1:PORT/v1beta``) and serves until Ctrl-C: every
``streamGenerateContent`` request gets the sample capture named by ``--sample`` (the
``text`` answer by default), and ``GET /v1beta/models`` lists a few model ids.
"""

from __future__ import annotations

import argparse
import sys
import threading

from .. import samples
from ._fake_gemini import FakeGemini


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rxgem.testing",
        description="Serve FakeGemini on 127.0.0.1 until Ctrl-C; print its base URL.",
    )
    parser.add_argument(
        "--sample",
        default="text",
        metavar="NAME",
        choices=[name.removesuffix(".sse") for name in samples.names()],
        help="the sample capture every streamed request gets (default text; see"
        " rxgem.samples.names())",
    )
    args = parser.parse_args(argv)
    with FakeGemini(samples.read(args.sample)) as fake:
        print(fake.base_url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
