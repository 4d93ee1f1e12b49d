"""``rxgem serve``: its arguments, and uvicorn in front of :mod:`rxgem.server`'s app.

:func:`add_serve_parser` adds the ``serve`` sub-command (its ``run`` default is
:func:`run_serve`). Starlette and uvicorn are imported only when the command runs,
so the ``rxgem`` command works without the ``server`` extra.

Arguments become the environment variables of
:func:`~rxgem.server.settings_from_env` laid over the process environment, and the
settings are made from that, so one process (``--workers 1``) and worker processes
(``--workers N``, by default one per core: uvicorn starts
``rxgem.server:app_from_env`` in each, with every setting exported by
:meth:`~rxgem.server.ServerSettings.to_env`) get the same settings. A startup error (bad
settings, a port in use, the extra missing) is one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import ipaddress
import os
import socket
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import fields
from typing import Any, Final

from ..server import (
    ENV,
    PIPELINE_OPTIONS,
    RECORD_COUNT_ENV,
    UPSTREAM_APIS,
    UPSTREAM_CLIENTS,
    ServerSettings,
    SettingsError,
    settings_env,
    settings_from_env,
)
from ._fake import add_fake_scenario, serve_fake_upstream
from ._inspect_flags import add_inspect_flags, prepare_spool
from ._pipeline_flags import add_pipeline_flags, pipeline_options
from ._vertex_flags import add_vertex_flag, check_own_credentials, vertex_upstream

__all__ = ["add_serve_parser", "run_serve"]

_LEVELS: Final = ("critical", "error", "warning", "info", "debug")
_LOCAL_NAMES: Final = frozenset({"localhost", "ip6-localhost"})
_PROMETHEUS_DIR: Final = "PROMETHEUS_MULTIPROC_DIR"


def add_serve_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``serve`` to an ``argparse`` sub-parsers object; returns its parser.

    The parser's default ``run`` is :func:`run_serve` (``args.run(args)`` runs it).
    """
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="serve an OpenAI-compatible endpoint (/v1/chat/completions, /v1/responses) in"
        " front of Gemini",
        description="Serve POST /v1/chat/completions and POST /v1/responses (streaming and"
        " not, responses stored), GET /v1/models and GET /healthz, answered by Gemini"
        " through rxgem. Needs the server extra:"
        " pip install 'rxgem[server]'. Clients authenticate with a bearer token from"
        " --client-token (or RXGEM_CLIENT_TOKENS), or, with --pass-through-auth, send their"
        " own Gemini key as the bearer token.",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; a loopback address answers only loopback"
        " Host names unless --allowed-host names others)",
    )
    parser.add_argument(
        "--port", metavar="N", type=int, default=8000, help="port to bind (default 8000)"
    )
    parser.add_argument(
        "--workers",
        metavar="N",
        type=int,
        default=None,
        help=f"worker processes sharing the socket (default: the cores, here {cpu_count()})",
    )
    parser.add_argument(
        "--upstream",
        metavar="URL",
        help="the Gemini API base URL (default Google AI Studio v1beta; a Vertex AI"
        " .../publishers/google base with --access-token)",
    )
    parser.add_argument(
        "--upstream-api",
        choices=UPSTREAM_APIS,
        help="which of Gemini's APIs answers: generate-content (streamGenerateContent) or"
        " interactions (POST /v1beta/interactions: background runs, agents, state kept at"
        " Google with --interactions-store) (default: RXGEM_UPSTREAM_API, else"
        " generate-content)",
    )
    parser.add_argument(
        "--interactions-store",
        action="store_true",
        default=None,
        help="on the interactions upstream, let Google keep the turns of stored responses"
        " (its store: true): previous_response_id then sends only the new input, and"
        " background: true works; off by default: Google keeps nothing (default:"
        " RXGEM_INTERACTIONS_STORE)",
    )
    parser.add_argument(
        "--fake",
        action="store_true",
        help="answer from FakeGemini, started in this process, instead of Gemini (no key"
        " needed: try the server and its clients offline)",
    )
    add_fake_scenario(parser)
    add_vertex_flag(parser)
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
        "--loop",
        choices=("auto", "asyncio", "uvloop"),
        default="auto",
        help="the event loop (default auto: uvloop where it is installed)",
    )
    parser.add_argument(
        "--http",
        choices=("auto", "h11", "httptools"),
        default="auto",
        help="the HTTP/1.1 parser (default auto: httptools where it is installed)",
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
    parser.add_argument(
        "--upstream-client",
        choices=UPSTREAM_CLIENTS,
        help="the HTTP client toward Gemini: aiohttp's (C parser) or httpx's own"
        " (default: RXGEM_UPSTREAM_CLIENT, else auto: aiohttp's when installed)",
    )
    parser.add_argument(
        "--cors-origin",
        metavar="ORIGIN",
        action="append",
        help="a browser origin allowed to call the API, e.g. https://chat.example.com, or *"
        " (repeatable; default: RXGEM_CORS_ORIGINS, comma-separated; none: no CORS)",
    )
    parser.add_argument(
        "--allowed-host",
        metavar="HOST",
        action="append",
        help="a Host name the server answers (any port), e.g. api.example.com, or * for any"
        " (repeatable; default: RXGEM_ALLOWED_HOSTS, comma-separated; none: loopback names"
        " when --host is a loopback address, else any)",
    )
    parser.add_argument(
        "--metrics",
        action="store_true",
        default=None,
        help="serve Prometheus metrics at GET /metrics (without a client token)",
    )
    store = parser.add_argument_group(
        "stored responses",
        "What POST /v1/responses keeps for previous_response_id, item_reference and"
        " GET /v1/responses/{id}, per client token. Each also reads RXGEM_<NAME>.",
    )
    store.add_argument(
        "--store",
        metavar="PATH|URL",
        help="a SQLite file (a path or sqlite:///path; default: responses.sqlite3 under the"
        " user's data directory) or redis://host:port/db to share conversations between"
        " servers",
    )
    store.add_argument(
        "--no-store",
        action="store_true",
        default=None,
        help="keep no responses (previous_response_id and GET /v1/responses/{id} find none)"
        " and no thought signatures (a client that drops them loses them; see --signature-in-id)",
    )
    store.add_argument(
        "--store-ttl",
        metavar="SECONDS",
        type=_positive(float),
        help="seconds a stored response is kept (default: until deleted)",
    )
    _add_limits(store, _STORE_LIMITS)
    record = parser.add_argument_group(
        "recording",
        "Cassettes of what Gemini answered, for tests and rxgem convert (docs/testing.md).",
    )
    record.add_argument(
        "--record",
        metavar="DIR",
        help="write each exchange with Gemini to its own cassette file in DIR (the request"
        " and the bytes Gemini sent, never a key or token; default: RXGEM_RECORD; off)",
    )
    record.add_argument(
        "--record-max-files",
        metavar="N",
        type=_positive(int),
        help="stop recording after N cassettes (default 1000)",
    )
    add_inspect_flags(parser, _add_limits)
    limits = parser.add_argument_group(
        "limits and timeouts",
        "Each also reads RXGEM_<NAME> (e.g. RXGEM_MAX_REQUEST_BYTES); per worker process.",
    )
    _add_limits(limits, _LIMITS)
    add_pipeline_flags(
        parser,
        PIPELINE_OPTIONS,
        "how Gemini's answers are translated, for every request (default: RXGEM_PIPELINE,"
        " a JSON object of the options, which the flags replace)",
    )
    parser.set_defaults(run=run_serve, temporary_store=False)  # True: --fake without --store
    return parser


_LIMITS: Final[tuple[tuple[str, type[int] | type[float], str], ...]] = (
    ("max_request_bytes", int, "the largest request body, bytes (413 beyond)"),
    ("max_json_depth", int, "the deepest nesting of a request's JSON"),
    ("max_json_values", int, "the most JSON values in a request"),
    ("max_head_bytes", int, "the largest request head, bytes"),
    ("head_timeout", float, "seconds to receive a request's head"),
    ("body_timeout", float, "seconds to receive a request's body (408)"),
    ("idle_timeout", float, "seconds an idle keep-alive connection stays open"),
    ("send_timeout", float, "seconds a client may take to take in a part of an answer"),
    ("max_connections", int, "client connections; beyond, 503 at once"),
    ("max_concurrent_requests", int, "requests in progress; beyond, 503 with Retry-After"),
    (
        "max_bytes_in_flight",
        int,
        "request-body bytes of the requests in progress; beyond, 503 with Retry-After"
        " (auto: 4 x --max-request-bytes)",
    ),
    (
        "max_values_in_flight",
        int,
        "JSON values of the requests in progress; beyond, 503 with Retry-After"
        " (auto: 4 x --max-json-values)",
    ),
    ("connect_timeout", float, "seconds to connect to Gemini"),
    ("read_timeout", float, "seconds Gemini may stay silent"),
    ("max_upstream_connections", int, "connections to Gemini"),
    ("max_upstream_line_bytes", int, "the longest line of Gemini's stream, bytes (502)"),
    ("shutdown_grace", float, "seconds open requests get after SIGTERM"),
)
_STORE_LIMITS: Final[tuple[tuple[str, type[int] | type[float], str], ...]] = (
    ("store_max_items", int, "the most items, input and output, of a stored response"),
    ("store_max_chain", int, "the most responses of a previous_response_id conversation"),
    ("store_max_record_bytes", int, "the largest stored response, bytes"),
    ("store_max_conversation_bytes", int, "the most bytes of a conversation's stored responses"),
    ("store_timeout", float, "seconds a store operation may take (503 beyond)"),
    ("signature_ttl", float, "seconds a thought signature handed out is remembered"),
    ("max_signatures", int, "the most thought signatures remembered per client token"),
)
_DEFAULTS: Final = {f.name: f.default for f in fields(ServerSettings)}


def _add_limits(group: Any, table: tuple[tuple[str, type[int] | type[float], str], ...]) -> None:
    """A flag for each setting of ``table``: ``--name`` taking a positive number."""
    for name, kind, meaning in table:
        default = _DEFAULTS[name]
        group.add_argument(
            "--" + name.replace("_", "-"),
            metavar="SECONDS" if kind is float else "N",
            type=_positive(kind),
            help=f"{meaning} (default {'auto' if default is None else default})",
        )


def _positive(kind: type[int] | type[float]) -> Any:
    def parse(text: str) -> int | float:
        try:
            value = kind(text.replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def cpu_count() -> int:
    """The cores this process may run on (the default number of workers)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _fail(message: str) -> int:
    print(f"rxgem serve: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


_FLAG_OF: Final = {
    "client_tokens": "client_token",
    "cors_origins": "cors_origin",
    "allowed_hosts": "allowed_host",
}
"""The settings whose flag is named in the singular (each is repeatable)."""


def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The settings' environment variables the arguments set: each setting's flag (every
    setting has one, by its name), given or turned on, in its variable's form."""
    given: dict[str, Any] = {}
    for name in ENV:
        if name == "pipeline":
            value: Any = pipeline_options(args) or None
        else:
            value = getattr(args, _FLAG_OF.get(name, name))
        if value is not None and value is not False:
            given[name] = value
    return settings_env(given)


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


_AUTH: Final = {
    "open": "no client token: any client is let in (--client-token TOKEN requires one)",
    "tokens": "token required: clients send one of the --client-token tokens as their bearer token",
    "pass-through": "pass-through: each client's bearer token is its own Gemini key",
}


def _say_store_and_auth(settings: ServerSettings, temporary: bool) -> None:
    """The startup lines saying where responses are stored and how clients get in."""
    from ..store import store_location

    stored = "not stored (--no-store)" if settings.no_store else store_location(settings.store)
    if temporary:
        stored += " (temporary, removed on exit: --fake; --store PATH keeps them)"
    print(f"rxgem serve: responses: {stored}", file=sys.stderr)
    print(f"rxgem serve: auth: {_AUTH[settings.auth_mode]}", file=sys.stderr)


def run_serve(args: argparse.Namespace) -> int:
    """Run the server until it is stopped (Ctrl-C, SIGTERM); the exit code."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ImportError:
        return _fail("rxgem serve needs the server extra: pip install 'rxgem[server]'")
    from ..server import create_app

    with contextlib.ExitStack() as stack:
        if args.fake and args.upstream:
            return _fail("--fake is the upstream: leave out --upstream")
        serve_fake_upstream(args, stack)
        if problem := prepare_spool(args, stack):  # where the inspector's workers meet
            return _fail(problem)
        return _run(args, uvicorn, create_app)


def _run(args: argparse.Namespace, uvicorn: Any, create_app: Any) -> int:
    from ..server import uvicorn_options

    if problem := vertex_upstream(args):
        return _fail(problem)
    try:
        overlay = _environment(args)
        # the address bound is --host's (always in the overlay, whatever RXGEM_HOST says):
        # the Host check follows it
        settings = settings_from_env({**os.environ, **overlay})
    except SettingsError as exc:
        return _fail(str(exc))
    workers = cpu_count() if args.workers is None else args.workers
    if workers < 1:
        return _fail("--workers must be at least 1")
    if not 0 <= args.port <= 65535:
        return _fail("--port must be between 0 and 65535")
    try:
        _check_bind(args.host, args.port)
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    print(f"rxgem serve: upstream: {settings.upstream_summary}", file=sys.stderr)
    if problem := check_own_credentials(settings):
        return _fail(problem)
    _say_store_and_auth(settings, args.temporary_store)
    if settings.auth_mode == "open" and not _is_loopback(args.host):
        print(
            f"rxgem serve: warning: no client tokens: anyone who can reach {args.host}"
            " uses the server's Gemini credentials (pass --client-token)",
            file=sys.stderr,
        )
    try:
        protocol = uvicorn_options(settings, http=args.http, loop=args.loop)
    except ValueError as exc:
        return _fail(str(exc))
    options: dict[str, Any] = {
        **protocol,
        "host": args.host,
        "port": args.port,
        "log_level": settings.log_level,
        "log_config": _log_config(settings.log_level),
    }
    try:
        if workers == 1:
            uvicorn.run(create_app(settings), **options)
        else:
            # what app_from_env reads in each worker: every setting, not just the flags
            os.environ.update(settings.to_env())
            with _multiprocess_metrics(settings.metrics), _shared_record_count(settings.record):
                uvicorn.run("rxgem.server:app_from_env", factory=True, workers=workers, **options)
    except SystemExit as exc:  # uvicorn's startup failure (it logged why)
        return 2 if exc.code not in (0, None) else 0
    except KeyboardInterrupt:
        return 130
    return 0


@contextlib.contextmanager
def _multiprocess_metrics(enabled: bool) -> Iterator[None]:
    """With metrics and several workers, a fresh directory where they share their counts
    (prometheus-client's multiprocess mode), unless the environment names one."""
    if not enabled or os.environ.get(_PROMETHEUS_DIR):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="rxgem-metrics-") as path:
        os.environ[_PROMETHEUS_DIR] = path
        try:
            yield
        finally:
            del os.environ[_PROMETHEUS_DIR]


@contextlib.contextmanager
def _shared_record_count(record: str | None) -> Iterator[None]:
    """With ``--record`` and several workers, a fresh file where they keep one cassette
    count, so ``--record-max-files`` is the server's limit."""
    if record is None:
        yield
        return
    with tempfile.TemporaryDirectory(prefix="rxgem-record-") as path:
        os.environ[RECORD_COUNT_ENV] = os.path.join(path, "count")
        try:
            yield
        finally:
            del os.environ[RECORD_COUNT_ENV]
