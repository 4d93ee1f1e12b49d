"""FakeGemini for ``rxgem serve --fake`` and ``rxgem chat --fake``, and its --fake-scenario."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ._common import UsageError

if TYPE_CHECKING:
    from ..testing import FakeGemini

__all__ = ["add_fake_scenario", "fake_gemini"]


def add_fake_scenario(parser: Any) -> None:
    """Add ``--fake-scenario NAME|FILE`` to ``parser``."""
    parser.add_argument(
        "--fake-scenario",
        metavar="NAME|FILE",
        help="with --fake, answer every request from one scenario: text, thinking, tool-call,"
        " parallel-calls, tool-answer, code-execution, blocked, error-mid-stream, truncated;"
        " or a file: a .sse capture, or Gemini response objects as JSON or JSONL (without"
        " it, the fake answers as Gemini would: a call to an offered tool, an answer once"
        " the tool's result comes back, text otherwise)",
    )


def fake_gemini(args: argparse.Namespace) -> FakeGemini | None:
    """The FakeGemini ``--fake`` asks for (not started), or None without ``--fake``."""
    if args.fake_scenario is not None and not args.fake:
        raise UsageError("--fake-scenario needs --fake")
    if not args.fake:
        return None
    from ..testing import FakeGemini

    try:
        return FakeGemini(scenario=args.fake_scenario)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--fake-scenario: {exc}") from None
