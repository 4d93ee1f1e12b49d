"""``rxgem serve``'s live-inspector flags, and the spool its workers share.

The serve command makes a private directory for the run (mode 0700, removed when it
exits) where every worker writes what its inspector captures and reads what the others
did (``inspect_spool``), unless ``--inspect-spool`` (``RXGEM_INSPECT_SPOOL``) names
one: that one is checked once here, rather than by each worker failing to start.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import Any, Final

from ..server import ENV

__all__ = ["add_inspect_flags", "prepare_spool", "spool_problem"]

_ON: Final = frozenset({"1", "true", "yes", "on"})
_LIMITS: Final[tuple[tuple[str, type[int] | type[float], str], ...]] = (
    ("inspect_requests", int, "how many requests /inspect keeps"),
    ("inspect_kb", int, "KiB of each request's body and response /inspect keeps"),
)


def add_inspect_flags(parser: argparse.ArgumentParser, add_limits: Callable[..., None]) -> None:
    """The ``live inspector`` group: ``--inspect``, its limits (by ``add_limits``, as the
    serve command's other limits) and ``--inspect-spool``."""
    group = parser.add_argument_group("live inspector")
    group.add_argument(
        "--inspect",
        action="store_true",
        default=None,
        help="show the recent requests, stage by stage as they stream, at /inspect"
        " (with --client-token, open /inspect?token=TOKEN once)",
    )
    add_limits(group, _LIMITS)
    group.add_argument(
        "--inspect-spool",
        metavar="DIR",
        default=None,
        help="the directory where the workers share what /inspect shows (yours, mode 0700;"
        " default: a new one for the run, removed at exit)",
    )


def spool_problem(path: str) -> str:
    """What keeps ``path`` from being the inspector's spool, else ``""`` (the app checks
    it too)."""
    try:
        status = os.stat(path)
    except OSError as exc:
        return str(exc.strerror)
    if not stat.S_ISDIR(status.st_mode):
        return "not a directory"
    if status.st_uid != os.getuid() or status.st_mode & 0o077:
        return "must be yours, readable by no one else (chmod 700): it holds what clients sent"
    return ""


def prepare_spool(args: Any, stack: contextlib.ExitStack) -> str:
    """Check the spool named, or, with the inspector on, make one for the run (removed
    when ``stack`` closes) and name it in ``args``; what is wrong with the one named, else
    ``""``."""
    named = args.inspect_spool or os.environ.get(ENV["inspect_spool"])
    if named:
        problem = spool_problem(named)
        return f"--inspect-spool {named}: {problem}" if problem else ""
    if args.inspect or os.environ.get(ENV["inspect"], "").strip().lower() in _ON:
        made = stack.enter_context(tempfile.TemporaryDirectory(prefix="rxgem-inspect-"))
        args.inspect_spool = made
    return ""
