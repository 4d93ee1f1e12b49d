"""FakeGemini for ``rxgem serve --fake`` and ``rxgem chat --fake``, and its switches.

The fake is strict: it refuses what Gemini refuses (Google's 400 for a request Gemini
would not take, thought signatures judged as Gemini 3 judges them), so that trying a
client against it shows what Gemini would answer; ``--fake-lenient`` answers anyway.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from typing import TYPE_CHECKING, Any

from ._common import UsageError

if TYPE_CHECKING:
    from ..testing import FakeGemini

__all__ = ["add_fake_scenario", "fake_gemini", "serve_fake_upstream"]


def add_fake_scenario(parser: Any) -> None:
    """Add ``--fake-scenario NAME|FILE`` and ``--fake-lenient`` to ``parser``."""
    parser.add_argument(
        "--fake-scenario",
        metavar="NAME|FILE",
        help="with --fake, answer every request from one scenario: text, thinking, tool-call,"
        " parallel-calls, tool-answer, json, code-execution, blocked, error-mid-stream,"
        " truncated; or a file: a .sse capture, or Gemini response objects as JSON or JSONL"
        " (on the Interactions upstream, translated into steps: text, thoughts with their"
        " signatures, function calls) (without it, the fake answers as Gemini would: a call"
        " to an offered tool, an answer once the tool's result comes back, JSON valid"
        " against the schema when JSON is asked for, text otherwise)",
    )
    parser.add_argument(
        "--fake-lenient",
        action="store_true",
        help="with --fake, answer requests Gemini would refuse (a missing or wrong thought"
        " signature, a schema keyword Gemini does not take, ...) instead of Google's 400",
    )


def fake_gemini(args: argparse.Namespace) -> FakeGemini | None:
    """The FakeGemini ``--fake`` asks for (not started), or None without ``--fake``."""
    if args.fake_scenario is not None and not args.fake:
        raise UsageError("--fake-scenario needs --fake")
    if args.fake_lenient and not args.fake:
        raise UsageError("--fake-lenient needs --fake")
    if not args.fake:
        return None
    from ..testing import FakeGemini

    try:
        return FakeGemini(scenario=args.fake_scenario, strict=not args.fake_lenient)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--fake-scenario: {exc}") from None


def serve_fake_upstream(args: argparse.Namespace, stack: contextlib.ExitStack) -> None:
    """For ``rxgem serve --fake``: start FakeGemini in ``stack`` and make it the upstream,
    with a key of its own unless one is given, and a temporary store unless one is named
    (a fake's answers are no conversation to keep in the user's own store)."""
    fake = fake_gemini(args)  # a bad --fake-scenario: rxgem: error: ...
    if fake is None:
        return
    if args.upstream:
        raise UsageError("--fake is the upstream: leave out --upstream")
    stack.enter_context(fake)
    args.upstream = fake.base_url
    if not (args.pass_through_auth or args.api_key or args.access_token):
        args.api_key = "fake-gemini-key"
    if not (args.store or args.no_store or os.environ.get("RXGEM_STORE")):
        scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="rxgem-fake-"))
        args.store = os.path.join(scratch, "responses.sqlite3")
        args.temporary_store = True
    print(f"rxgem serve: answering from FakeGemini at {fake.base_url}", file=sys.stderr)
