"""The ``rxgem`` command: ``convert`` a capture, run the offline ``demo``, ``chat``, ``serve``.

One module per command, each with its ``add_<command>_parser`` and ``run_<command>``:
``convert``, ``demo``, ``chat`` and ``serve`` (Starlette and uvicorn load only when
``serve`` runs, so the command works without the ``server`` extra); ``_common`` holds
what they share. This package imports :mod:`rxgem.server`, never the reverse.

Exit codes: 0 success, 1 the stream ended with an error (the OpenAI error frame
was written), 2 a usage error or an input that cannot be read. Errors are one
line on stderr (``rxgem: error: …``), never a traceback.
"""

from __future__ import annotations

import argparse

from .. import __version__
from ..core import RxGemError
from ._common import UsageError, fail, silence_broken_pipe
from .chat import add_chat_parser
from .convert import add_convert_parser
from .demo import add_demo_parser
from .serve import add_serve_parser

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rxgem",
        description="Turn Gemini streamGenerateContent SSE into OpenAI chat.completion.chunk SSE.",
    )
    parser.add_argument("--version", action="version", version=f"rxgem {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_convert_parser(commands)
    add_demo_parser(commands)
    add_serve_parser(commands)
    add_chat_parser(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rxgem`` command."""
    args = _parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except UsageError as exc:
        return fail(str(exc), 2)
    except BrokenPipeError:
        return silence_broken_pipe()
    except KeyboardInterrupt:
        return 130
    except RxGemError as exc:  # pragma: no cover - streams report errors through on_error
        return fail(str(exc), 1)
    return code
