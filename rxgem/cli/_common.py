"""What every command shares: the usage error, the one-line error report, a quiet exit
when the reader of stdout went away."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

__all__ = ["UsageError", "fail", "silence_broken_pipe"]


class UsageError(Exception):
    """A bad argument or an input that cannot be read: ``rxgem: error: …``, exit code 2."""


def fail(message: str, code: int) -> int:
    """Print ``rxgem: error: MESSAGE`` (on one line) to stderr; return ``code``."""
    print(f"rxgem: error: {' '.join(message.split())}", file=sys.stderr)
    return code


def silence_broken_pipe() -> NoReturn:
    """Exit quietly, without a flush error, after the reader went away (e.g. ``| head``)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)
