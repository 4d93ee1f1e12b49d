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
import difflib
import sys
from typing import NoReturn

from .. import __version__
from ..core import RxGemError
from ._common import UsageError, fail, silence_broken_pipe
from .chat import add_chat_parser
from .convert import add_convert_parser
from .demo import add_demo_parser
from .serve import add_serve_parser

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors are the error line first, then where the
    options are (argparse prints the whole usage first, 30 lines for ``serve``, and the
    line that matters last)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\nRun '{self.prog} --help' for its options.\n")


def _parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The ``rxgem`` parser, and each command's own parser by name (the same class)."""
    parser = _Parser(
        prog="rxgem",
        description="Gemini's streams as OpenAI's: convert a capture, try the offline demo,"
        " chat with Gemini, or serve an OpenAI-compatible endpoint in front of it.",
        epilog="Run 'rxgem COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"rxgem {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    add_convert_parser(commands)
    add_demo_parser(commands)
    add_serve_parser(commands)
    add_chat_parser(commands)
    return parser, dict(commands.choices)


def _unknown(command: argparse.ArgumentParser, extras: list[str]) -> str:
    """The message for arguments ``command`` does not take, with the nearest flag it has."""
    flags = [flag for action in command._actions for flag in action.option_strings]
    message = f"unrecognized arguments: {' '.join(extras)}"
    for extra in extras:
        name = extra.partition("=")[0]
        if not name.startswith("-"):
            continue
        word = name.lstrip("-")
        # a flag with the word given as one of its parts (--token: --client-token) first
        near = [flag for flag in flags if word and word in flag.lstrip("-").split("-")]
        near = near[:3] or difflib.get_close_matches(name, flags, n=3, cutoff=0.6)
        if near:
            message += f" (did you mean {' or '.join(near)}?)"
            break
    return message


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rxgem`` command."""
    parser, commands = _parser()
    args, extras = parser.parse_known_args(argv)
    if args.command is None:
        if extras:
            parser.error(_unknown(parser, extras))
        parser.print_help(sys.stderr)
        return 2
    if extras:
        commands[args.command].error(_unknown(commands[args.command], extras))
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
