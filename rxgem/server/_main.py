"""The ``rxgem serve`` command: its arguments, and uvicorn.

``add_serve_parser(subparsers)`` adds the ``serve`` sub-command (its ``run`` default is
:func:`run_serve`). Starlette and uvicorn are imported only when the command runs,
so the ``rxgem`` command works without the ``server`` extra.

Arguments become the environment variables of
:func:`~rxgem.server.settings_from_env` laid over the process environment, and the
settings are made from that, so one process (``--workers 1``, the default) and
worker processes (``--workers N``: uvicorn starts ``rxgem.server:app_from_env`` in
each, with those variables exported) get the same settings. A startup error (bad
settings, a port in use, the extra missing) is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import copy
import ipaddress
import os
import socket
import sys
from typing import Any, Final

from ._settings import ENV, SettingsError, settings_from_env

__all__ = ["add_serve_parser", "run_serve"]

_LEVELS: Final = ("critical", "error", "warning", "info", "debug")
_LOCAL_NAMES: Final = frozenset({"localhost", "ip6-localhost"})


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``serve`` to an ``argparse`` sub-parsers object; returns its parser.

    The parser's default ``run`` is :func:`run_serve` (``args.run(args)`` runs it).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="serve an OpenAI-compatible endpoint (/v1/chat/completions) in front of Gemini",
        description="Serve POST /v1/chat/completions (streaming and not), GET /v1/models and"
        " GET /healthz, answered by Gemini through rxgem. Needs the server extra:"
        " pip install 'rxgem[server]'. Clients authenticate with a bearer token from"
        " --client-token (or RXGEM_CLIENT_TOKENS), or, with --pass-through-auth, send their"
        " own Gemini key as the bearer token.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes (default 1); above 1 they share the socket",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="the Gemini API base URL (default Google AI Studio v1beta; a Vertex AI"
        " .../publishers/google base with --access-token)",
    )
    parser.add_argument(
        "--api-key",
        metavar="KEY",
        help="the server's Gemini key (default: RXGEM_API_KEY, GEMINI_API_KEY, GOOGLE_API_KEY;"
        " prefer the environment: arguments are visible to other local users)",
    )
    parser.add_argument(
        "--access-token", metavar="TOKEN", help="an OAuth access token instead of a key (Vertex)"
    )
    parser.add_argument(
        "--client-token",
        metavar="TOKEN",
        action="append",
        help="a bearer token clients must send (repeatable; default: RXGEM_CLIENT_TOKENS,"
        " comma-separated); none: the server is open to anyone who can reach it",
    )
    parser.add_argument(
        "--pass-through-auth",
        action="store_true",
        help="use each client's bearer token as its Gemini key (the server holds no key)",
    )
    parser.add_argument(
        "--keep-alive",
        metavar="SECONDS",
        type=float,
        help="seconds of upstream silence before an SSE keep-alive comment (default 15)",
    )
    parser.add_argument(
        "--log-level", choices=_LEVELS, help="default info (one access line per request)"
    )
    parser.set_defaults(run=run_serve)
    return parser


def _fail(message: str) -> int:
    print(f"rxgem serve: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The settings' environment variables the arguments set."""
    env: dict[str, str] = {}
    given = {
        "upstream": args.upstream,
        "api_key": args.api_key,
        "access_token": args.access_token,
        "log_level": args.log_level,
        "keep_alive": None if args.keep_alive is None else repr(args.keep_alive),
    }
    for name, value in given.items():
        if value is not None:
            env[ENV[name]] = value
    if args.client_token:
        if any("," in token for token in args.client_token):
            raise SettingsError("a client token cannot contain a comma")
        env[ENV["client_tokens"]] = ",".join(args.client_token)
    if args.pass_through_auth:
        env[ENV["pass_through_auth"]] = "1"
    return env


def _is_loopback(host: str) -> bool:
    if host in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _check_bind(host: str, port: int) -> None:
    """Raise ``OSError`` now if ``host:port`` cannot be bound (uvicorn binds it next)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))


def _log_config(level: str) -> dict[str, Any]:
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["rxgem.server"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    return config


def run_serve(args: argparse.Namespace) -> int:
    """Run the server until it is stopped (Ctrl-C, SIGTERM); the exit code."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        return _fail("rxgem serve needs the server extra: pip install 'rxgem[server]'")
    from ._app import create_app

    try:
        overlay = _environment(args)
        settings = settings_from_env({**os.environ, **overlay})
    except SettingsError as exc:
        return _fail(str(exc))
    if args.workers < 1:
        return _fail("--workers must be at least 1")
    if not 0 <= args.port <= 65535:
        return _fail("--port must be between 0 and 65535")
    try:
        _check_bind(args.host, args.port)
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    if settings.auth_mode == "open" and not _is_loopback(args.host):
        print(
            f"rxgem serve: warning: no client tokens: anyone who can reach {args.host}"
            " uses the server's Gemini credentials (pass --client-token)",
            file=sys.stderr,
        )
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_level": settings.log_level,
        "log_config": _log_config(settings.log_level),
        "access_log": False,  # rxgem.server logs one line per request itself
        "server_header": False,
        "timeout_graceful_shutdown": 10,
    }
    try:
        if args.workers == 1:
            uvicorn.run(create_app(settings), **options)
        else:
            os.environ.update(overlay)  # what app_from_env reads in each worker
            uvicorn.run("rxgem.server:app_from_env", factory=True, workers=args.workers, **options)
    except SystemExit as exc:  # uvicorn's startup failure (it logged why)
        return 2 if exc.code not in (0, None) else 0
    except KeyboardInterrupt:
        return 130
    return 0
