"""The server's settings: one frozen dataclass, checked when it is made.

No I/O and no Starlette here: the ``serve`` command builds the settings from its
arguments, :func:`~rxgem.server.settings._env.settings_from_env` from environment
variables (what each worker process reads when ``--workers`` is above 1);
:meth:`ServerSettings.to_env` is the way back.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cached_property
from types import UnionType
from typing import Any, Final, Literal, TypeAlias, Union, get_args, get_origin, get_type_hints
from urllib.parse import urlsplit

from ...core.pipeline import STAGES, PipelineSettings
from ...store import (
    DEFAULT_MAX_CHAIN,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_RECORD_BYTES,
    DEFAULT_MAX_SIGNATURES,
    DEFAULT_SIGNATURE_TTL,
)
from ...store import DEFAULT_TIMEOUT as DEFAULT_STORE_TIMEOUT
from ...transport import DEFAULT_BASE_URL
from ...upstreams import UPSTREAM_NAMES, Upstream, upstream_of
from ..http import normalize_allowed_hosts
from ._checks import SettingsError, check_origin, check_store

__all__ = [
    "COUNTS",
    "ENV",
    "FORMS",
    "IN_FLIGHT_REQUESTS",
    "PIPELINE_OPTIONS",
    "RECORD_COUNT_ENV",
    "SECONDS",
    "UPSTREAM_APIS",
    "UPSTREAM_CLIENTS",
    "AuthMode",
    "ServerSettings",
    "SettingsError",
    "UpstreamAPI",
    "settings_env",
]

AuthMode: TypeAlias = Literal["tokens", "pass-through", "open"]
"""How clients are let in: ``"tokens"`` (a bearer token from ``client_tokens``, the
server's own Gemini credentials upstream), ``"pass-through"`` (the client's bearer
token *is* the Gemini key) or ``"open"`` (anyone, with the server's credentials)."""

UpstreamAPI: TypeAlias = str
"""Which of Gemini's APIs answers, one of :data:`UPSTREAM_APIS`: ``generate-content``
(``streamGenerateContent``) or ``interactions`` (``POST /v1beta/interactions``)."""

UPSTREAM_APIS: Final = UPSTREAM_NAMES
"""The values of :data:`UpstreamAPI`, the default first: the registry's
(:mod:`rxgem.upstreams`), so a new upstream needs no change here."""

_LEVELS: Final = ("critical", "error", "warning", "info", "debug")
_Form: TypeAlias = Literal["flag", "int", "float", "text", "list", "json"]
UPSTREAM_CLIENTS: Final = ("auto", "aiohttp", "httpx")
"""The HTTP clients toward Gemini: aiohttp's (``auto``: when it is installed) or httpx's."""

RECORD_COUNT_ENV: Final = "RXGEM_RECORD_COUNT_FILE"
"""Not a setting: the file where the worker processes of one ``rxgem serve`` keep their
one cassette count (the command makes it for each run), so ``record_max_files`` is the
server's limit, not each worker's."""

PIPELINE_OPTIONS: Final = frozenset(
    name
    for stage in STAGES
    for name, (_, option) in stage.declared.items()
    if name not in ("model", "include_usage") and not callable(option.default)
)
"""The pipeline options a server takes: all but ``model`` and ``include_usage`` (each
request says them) and the functions (``id_factory``, ``clock``: no environment form)."""


SECONDS: Final = (
    "keep_alive",
    "head_timeout",
    "body_timeout",
    "idle_timeout",
    "send_timeout",
    "connect_timeout",
    "read_timeout",
    "shutdown_grace",
    "store_timeout",
    "signature_ttl",
)
COUNTS: Final = (
    "max_request_bytes",
    "max_json_depth",
    "max_json_values",
    "max_upstream_line_bytes",
    "max_head_bytes",
    "max_upstream_connections",
    "max_connections",
    "max_concurrent_requests",
    "max_bytes_in_flight",
    "max_values_in_flight",
    "store_max_items",
    "store_max_chain",
    "store_max_record_bytes",
    "store_max_conversation_bytes",
    "max_signatures",
    "record_max_files",
    "inspect_requests",
    "inspect_kb",
)


IN_FLIGHT_REQUESTS: Final = 4
"""How many requests of the largest size the default in-flight budgets hold at once."""
_AUTOMATIC: Final = frozenset({"max_connections", "max_bytes_in_flight", "max_values_in_flight"})
_BUDGETS: Final = {
    "max_bytes_in_flight": "max_request_bytes",
    "max_values_in_flight": "max_json_values",
}


@dataclass(frozen=True, kw_only=True)
class ServerSettings:
    """Everything :func:`~rxgem.server.create_app` needs; checked at construction.

    Attributes:
        upstream: Gemini's API base URL, in the form ``base_url=`` of
            :func:`~rxgem.stream_chat` takes (default Google AI Studio ``v1beta``; a
            Vertex AI ``…/publishers/google`` base with ``access_token``).
        api_key: the server's Gemini API key (sent as ``x-goog-api-key``).
        access_token: an OAuth access token (Vertex AI), sent instead of a key.
        client_tokens: the bearer tokens clients must present (compared in constant
            time). Empty, and without ``pass_through_auth``: no client check at all.
        pass_through_auth: use each client's ``Authorization: Bearer`` value as the
            Gemini key (as the access token for a Vertex upstream); the server then
            holds no credentials of its own.
        keep_alive: seconds of upstream silence after which the client is sent a
            keep-alive: an SSE comment when streaming, a space before the JSON body
            when not (a JSON parser skips it); also the longest a client waits for
            the response headers. See :mod:`rxgem.server.stream`.
        log_level: the level of the ``rxgem.server`` logger.
        cors_origins: the browser origins allowed to call the API (CORS), e.g.
            ``("https://chat.example.com",)``; ``("*",)`` for any. Empty: no CORS.
        host: the address the server listens on (``rxgem serve --host``).
        allowed_hosts: the ``Host`` names the server answers (any port), ``("*",)``
            for any; empty: only loopback names if ``host`` is loopback, else any
            (``/healthz``, ``/readyz``: any). See ``HostCheck``.
        metrics: serve Prometheus metrics at ``GET /metrics`` (no client token:
            keep the port away from the internet or filter the path at the proxy).
        max_request_bytes: the largest request body accepted (HTTP 413 beyond).
        max_json_depth: the deepest nesting of arrays and objects in a request body.
        max_json_values: the most JSON values (objects, arrays, strings, numbers,
            literals) in a request body; with the byte cap it bounds the memory
            that decoding one request may take.
        max_upstream_line_bytes: the longest line Gemini's stream may send (an
            event is one line); a longer one ends the request with a 502.
        max_head_bytes: the largest request head (line and headers) accepted.
        head_timeout: seconds a client has to send a request's head (line and
            headers), from the connection or from the first byte of a next request.
        body_timeout: seconds a client has to send a whole request body (408).
        idle_timeout: seconds an idle keep-alive connection stays open.
        send_timeout: seconds a client may take to take in a part of an answer (its
            socket accepting more); a client that stops reading is cut off after it,
            and its upstream request cancelled.
        connect_timeout: seconds to connect to the upstream.
        read_timeout: seconds the upstream may stay silent before the request fails.
        max_upstream_connections: the connection pool's size toward Gemini.
        max_connections: client connections per process; a connection beyond it
            is closed at once. ``None``: from the descriptor limit (half of it,
            since each request also holds an upstream connection).
        max_concurrent_requests: requests in progress per process; beyond it, 503
            with ``Retry-After`` (``/healthz``, ``/readyz`` and ``/metrics`` are
            not counted).
        max_bytes_in_flight: the most body bytes a process's requests in progress
            hold at once (past it, 503 with ``Retry-After``; see ``InFlight``); at
            least ``max_request_bytes``. ``None``: 4 times ``max_request_bytes``.
        max_values_in_flight: the same for their decoded JSON values; at least
            ``max_json_values``. ``None``: 4 times ``max_json_values``.
        shutdown_grace: seconds open requests get to finish after SIGTERM; then
            each stream ends with an error frame.
        pipeline: pipeline options for every answer (see :data:`PIPELINE_OPTIONS`),
            e.g. ``{"signature_in_id": True}``; checked here.
        store: where ``POST /v1/responses`` keeps responses (see
            :func:`rxgem.store.open_store`): a file path or ``sqlite:///path``, or
            ``redis://host:port/db`` (``rediss://``, ``unix://``) for several servers
            sharing conversations; ``None``: the SQLite file under the user's data
            directory (made on first use).
        no_store: keep no responses (``store`` requests are answered but not kept;
            ``previous_response_id`` and ``GET /v1/responses/{id}`` find nothing).
        store_ttl: seconds a stored response is kept; ``None``: until deleted.
        store_max_items: the most items (input and output) a stored response may
            have; a request with that many input items and ``store`` is refused
            before Gemini is asked (400 ``store_limit_exceeded``).
        store_max_chain: the most responses a ``previous_response_id`` conversation
            may have: a request that would store one more is refused before Gemini is
            asked, and continuing a longer one (stored under a larger limit) is 400
            ``conversation_too_long``.
        store_max_record_bytes: the largest stored response (input items, output
            items and the response object), bytes; input items that take it all
            are refused before Gemini is asked.
        store_max_conversation_bytes: the most bytes the responses of one
            ``previous_response_id`` conversation may take (each request reads its
            whole conversation): a request that would store past it is refused before
            Gemini is asked.
        store_timeout: seconds a store operation may take (503 beyond).
        signature_ttl: seconds the store remembers a thought signature the server
            handed out, for a client that echoes its id without it (signature
            memory, on with the store; docs/server.md).
        max_signatures: the most signatures remembered per client token (the oldest
            go).
        upstream_client: the HTTP client toward Gemini: ``"aiohttp"`` (an httpx
            transport over aiohttp, whose parser is in C), ``"httpx"`` (httpx's own), or
            ``"auto"``: aiohttp's when it is installed (the ``server`` extra has it).
        upstream_api: which of Gemini's APIs answers (one of :data:`UPSTREAM_APIS`):
            ``"generate-content"`` (the default) or ``"interactions"``.
        interactions_store: on the Interactions upstream, whether Google keeps the
            turns of requests that ``store`` (its ``store: true``); off by default,
            so Google keeps nothing (``store: false`` is sent): then a
            ``previous_response_id`` replays the history from the local store, and
            ``background`` is refused (Google runs only stored interactions in the
            background). See docs/server.md on what Google keeps.
        record: a directory where each upstream exchange is written as a cassette
            (docs/testing.md), without credentials; off by default.
        record_max_files: the most cassettes one server process writes (then it
            stops recording, saying so once in the log).
        inspect: serve the live inspector at ``/inspect`` (off by default): the
            recent upstream exchanges, drawn stage by stage as they stream
            (:mod:`rxgem.server.capture._inspector`); not with pass-through auth.
        inspect_requests: how many exchanges the inspector keeps (the oldest go).
        inspect_kb: how many KiB of each exchange's request body and of its response
            the inspector keeps (the rest is counted, not kept).
        inspect_spool: the private directory its workers share (``None``: the app's own).

    The secrets are left out of ``repr()``.
    """

    upstream: str = DEFAULT_BASE_URL
    api_key: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)
    client_tokens: tuple[str, ...] = field(default=(), repr=False)
    pass_through_auth: bool = False
    keep_alive: float = 15.0
    log_level: str = "info"
    cors_origins: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    allowed_hosts: tuple[str, ...] = ()
    metrics: bool = False
    max_request_bytes: int = 32 * 1024 * 1024
    max_json_depth: int = 100
    max_json_values: int = 1_000_000
    max_upstream_line_bytes: int = 64 * 1024 * 1024
    max_head_bytes: int = 64 * 1024
    head_timeout: float = 10.0
    body_timeout: float = 60.0
    idle_timeout: float = 15.0
    send_timeout: float = 120.0
    connect_timeout: float = 10.0
    read_timeout: float = 300.0
    max_upstream_connections: int = 1000
    max_connections: int | None = None
    max_concurrent_requests: int = 1000
    max_bytes_in_flight: int | None = None
    max_values_in_flight: int | None = None
    shutdown_grace: float = 30.0
    pipeline: Mapping[str, Any] = field(default_factory=dict)
    store: str | None = None
    no_store: bool = False
    store_ttl: float | None = None
    store_max_items: int = DEFAULT_MAX_ITEMS
    store_max_chain: int = DEFAULT_MAX_CHAIN
    store_max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    store_max_conversation_bytes: int = 2 * DEFAULT_MAX_RECORD_BYTES
    store_timeout: float = DEFAULT_STORE_TIMEOUT
    signature_ttl: float = DEFAULT_SIGNATURE_TTL
    max_signatures: int = DEFAULT_MAX_SIGNATURES
    upstream_client: str = "auto"
    upstream_api: UpstreamAPI = UPSTREAM_NAMES[0]
    interactions_store: bool = False
    record: str | None = None
    record_max_files: int = 1000
    inspect: bool = False
    inspect_requests: int = 20
    inspect_kb: int = 256
    inspect_spool: str | None = None

    def __post_init__(self) -> None:
        split = urlsplit(self.upstream)
        if split.scheme not in ("http", "https") or not split.hostname:
            raise SettingsError(f"upstream must be an http(s) URL, not {self.upstream!r}")
        if split.query or split.fragment:
            raise SettingsError("upstream must be a base URL without a query or fragment")
        object.__setattr__(self, "client_tokens", tuple(self.client_tokens))
        if any(not token or token != token.strip() for token in self.client_tokens):
            raise SettingsError("client tokens must be non-empty, without surrounding spaces")
        if self.pass_through_auth:
            if self.client_tokens:
                raise SettingsError(
                    "pass-through auth uses each client's bearer token as its Gemini key:"
                    " it cannot be combined with client tokens"
                )
            if self.api_key or self.access_token:
                raise SettingsError(
                    "pass-through auth uses each client's key: give the server no"
                    " API key or access token of its own"
                )
        elif not (self.api_key or self.access_token or self.finds_credentials):
            raise SettingsError(
                "no Gemini API key: set GEMINI_API_KEY (or RXGEM_API_KEY, GOOGLE_API_KEY) or"
                " pass --api-key to rxgem serve; for Vertex AI an access token"
                " (RXGEM_ACCESS_TOKEN, --access-token) or Application Default Credentials"
                " (rxgem serve --vertex); or pass-through auth"
                " (RXGEM_PASS_THROUGH_AUTH=1, --pass-through-auth); or try it offline,"
                " without a key: rxgem serve --fake"
            )
        for name in SECONDS:
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, int | float) and value > 0):
                raise SettingsError(f"{name} must be a positive number of seconds, not {value!r}")
        if self.inspect and self.pass_through_auth:
            raise SettingsError(
                "the inspector shows every client's requests: it needs client tokens"
                " (--client-token) or open auth, not pass-through auth"
            )
        if self.upstream_client not in UPSTREAM_CLIENTS:
            raise SettingsError(
                f"upstream client must be one of {', '.join(UPSTREAM_CLIENTS)},"
                f" not {self.upstream_client!r}"
            )
        if self.upstream_api not in UPSTREAM_APIS:
            raise SettingsError(
                f"upstream API must be one of {', '.join(UPSTREAM_APIS)}, not {self.upstream_api!r}"
            )
        if self.log_level.lower() not in _LEVELS:
            raise SettingsError(f"log level must be one of {', '.join(_LEVELS)}")
        object.__setattr__(self, "log_level", self.log_level.lower())
        for name in COUNTS:
            value = getattr(self, name)
            if value is None and name in _AUTOMATIC:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingsError(f"{name} must be a whole number of at least 1, not {value!r}")
        for budget, limit in _BUDGETS.items():
            value, each = getattr(self, budget), getattr(self, limit)
            if value is not None and value < each:
                raise SettingsError(
                    f"{budget} must be at least {limit} ({each}), or a request the limits"
                    f" accept could never be admitted; not {value}"
                )
        object.__setattr__(self, "cors_origins", tuple(self.cors_origins))
        for origin in self.cors_origins:
            check_origin(origin)
        try:
            object.__setattr__(self, "allowed_hosts", normalize_allowed_hosts(self.allowed_hosts))
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        object.__setattr__(self, "pipeline", dict(self.pipeline))
        other = sorted(set(self.pipeline) - PIPELINE_OPTIONS)
        if other:
            raise SettingsError(
                f"{other[0]!r} is not a pipeline option a server takes; expected one of"
                f" {', '.join(sorted(PIPELINE_OPTIONS))}"
            )
        try:
            PipelineSettings(self.pipeline)
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"pipeline option: {exc}") from None
        if self.store is not None:
            check_store(self.store)
        ttl = self.store_ttl
        if ttl is not None and (
            isinstance(ttl, bool) or not isinstance(ttl, int | float) or not 0 < ttl < math.inf
        ):
            raise SettingsError(f"store_ttl must be a positive number of seconds, not {ttl!r}")

    @property
    def bytes_in_flight(self) -> int:
        """The budget of request-body bytes in progress (``max_bytes_in_flight``, or
        its default)."""
        return self.max_bytes_in_flight or IN_FLIGHT_REQUESTS * self.max_request_bytes

    @property
    def values_in_flight(self) -> int:
        """The budget of decoded JSON values in progress (``max_values_in_flight``, or
        its default)."""
        return self.max_values_in_flight or IN_FLIGHT_REQUESTS * self.max_json_values

    @property
    def auth_mode(self) -> AuthMode:
        """How clients are let in (see :data:`AuthMode`)."""
        if self.pass_through_auth:
            return "pass-through"
        return "tokens" if self.client_tokens else "open"

    @cached_property
    def chosen_upstream(self) -> Upstream:
        """The upstream API that answers (:mod:`rxgem.upstreams`), chosen once: by
        ``upstream_api``, and the pipeline's ``api``, else the ``upstream`` URL's host."""
        return upstream_of(self.upstream_api, api=self.pipeline.get("api"), base_url=self.upstream)

    @property
    def finds_credentials(self) -> str | None:
        """What the upstream finds the server's credentials with when it is given none
        (Vertex AI: Application Default Credentials), else ``None``."""
        try:
            return self.chosen_upstream.finds_credentials
        except ValueError:
            return None

    @property
    def upstream_summary(self) -> str:
        """What ``rxgem serve`` says at startup about its upstream: which API, where, and
        (Interactions) whether Google keeps the turns."""
        line = f"{self.upstream_api} API at {self.upstream}"
        if self.chosen_upstream.background:
            kept = "kept at Google" if self.interactions_store else "not kept at Google"
            line += f" (stored turns {kept})"
        return line

    @property
    def secrets(self) -> tuple[str, ...]:
        """Every secret the server holds, to scrub from anything it writes."""
        own = (self.api_key, self.access_token, *self.client_tokens)
        return tuple(s for s in own if s)

    @property
    def logging_level(self) -> int:
        """``log_level`` as a :mod:`logging` number."""
        return logging.getLevelNamesMapping()[self.log_level.upper()]

    def to_env(self) -> dict[str, str]:
        """The environment that makes ``settings_from_env`` give these settings back
        (what ``rxgem serve --workers N`` exports for its worker processes): every
        setting's variable, an empty one for ``None``.

        Raises:
            SettingsError: a list's value holds a comma (the variable is comma-separated).
        """
        return settings_env({f.name: getattr(self, f.name) for f in fields(self)})


def _form(name: str, hint: Any) -> _Form:
    """The environment form of a field of type ``hint``: a flag, a number, a text, a
    comma-separated list or a JSON object (``None`` is always an empty variable)."""
    if get_origin(hint) in (Union, UnionType):
        (hint,) = (a for a in get_args(hint) if a is not type(None))
    forms: dict[Any, _Form] = {bool: "flag", int: "int", float: "float", str: "text"}
    if hint in forms:
        return forms[hint]
    if get_origin(hint) is Literal:
        return "text"
    if get_origin(hint) is tuple and get_args(hint) == (str, ...):
        return "list"
    if get_origin(hint) is Mapping:
        return "json"
    raise TypeError(f"ServerSettings.{name}: no environment form for {hint!r}")


FORMS: Final[dict[str, _Form]] = {
    name: _form(name, hint) for name, hint in get_type_hints(ServerSettings).items()
}
"""How each setting is written in its environment variable (from the field's type)."""

ENV: Final = {name: f"RXGEM_{name.upper()}" for name in FORMS}
"""The environment variable of each setting: ``RXGEM_`` and its name in capitals (read
by ``settings_from_env``, written by ``to_env``)."""


def settings_env(values: Mapping[str, Any]) -> dict[str, str]:
    """The environment variables of some settings, by field name (``None``: empty).

    Raises:
        SettingsError: a list's value holds a comma (the variable is comma-separated).
    """
    env: dict[str, str] = {}
    for name, value in values.items():
        form = FORMS[name]
        if value is None:
            text = ""
        elif form == "flag":
            text = "1" if value else "0"
        elif form in ("int", "float"):
            text = repr(value)
        elif form == "list":
            if any("," in item for item in value):
                raise SettingsError(
                    f"a value of {name} cannot contain a comma ({ENV[name]} is comma-separated)"
                )
            text = ",".join(value)
        elif form == "json":
            text = json.dumps(value)
        else:
            text = str(value)
        env[ENV[name]] = text
    return env
