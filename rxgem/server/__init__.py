"""``rxgem serve``: an OpenAI-compatible HTTP endpoint in front of Gemini.

Install the extra (``pip install 'rxgem[server]'``: Starlette and uvicorn), then::

    rxgem serve --client-token "$TOKEN"            # GEMINI_API_KEY from the environment

    from openai import OpenAI
    client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key=TOKEN)

Or build the ASGI app yourself and run it with any ASGI server::

    from rxgem.server import ServerSettings, create_app
    app = create_app(ServerSettings(api_key=KEY, client_tokens=(TOKEN,)))

Routes: ``POST /v1/chat/completions`` (streaming and not, through
:func:`rxgem.chat_completions`), ``POST /v1/responses`` (OpenAI's Responses API,
streaming and not) with its stored responses (``GET``/``DELETE /v1/responses/{id}``,
``GET /v1/responses/{id}/input_items``, ``POST /v1/responses/{id}/cancel`` for a
background one), ``GET /v1/models`` and ``GET /v1/models/{id}``
(Gemini's model list in OpenAI's shape), ``GET /healthz`` (liveness), ``GET /readyz``
(readiness) and, with ``metrics``, ``GET /metrics`` (Prometheus). Gemini answers through
``streamGenerateContent``, or with ``upstream_api="interactions"`` through its
Interactions API (background runs, agents, state kept at Google).

Several worker processes (``rxgem serve --workers N``, by default one per core) each
build their app with
:func:`app_from_env`, from the environment variables of :func:`settings_from_env`
(``RXGEM_UPSTREAM``, ``RXGEM_API_KEY``/``GEMINI_API_KEY``, ``RXGEM_CLIENT_TOKENS``,
every limit and timeout as ``RXGEM_<NAME>``, the store as ``RXGEM_STORE``); ``rxgem
serve`` sets them from its arguments before it starts the workers. Chat completions
keep no state between requests, and stored responses are in the store (SQLite for one
host, Redis for several): run as many copies as you like behind a load balancer. (Under
plain ``uvicorn rxgem.server:app_from_env --factory`` the app works, but uvicorn's own HTTP
protocol lacks the connection guard: head deadlines, the connection cap.)

The server does HTTP only: what is asked of Gemini (the pools, the translation, the
pipeline, signature memory, the store's use and limits, background runs) is the gateway's
(:class:`rxgem.gateway.Gateway`); the server imports no :mod:`rxgem.operators`,
``rxgem.converter``, ``rxgem.request`` or ``rxgem.client``.

The folders, one a concern, each crossed through its face (its ``__init__``) and none
importing the one above it (``tests/meta/test_server_folders.py``); the error vocabulary
and the model list are :mod:`rxgem.replies`' (the in-process transport answers with them
too), the stored turns :mod:`rxgem.store`'s:

- ``http/``, sans-IO: the ``Host`` names answered and the JSON content type (pages kept
  out); a request body's nesting and value count checked, then decoded, in bounded
  steps; where each request head on a connection begins and ends.
- ``observe/``: the access log and the error boundary; the metrics and traces of each
  request, Prometheus and OpenTelemetry, under the route list and bounded label values.
- ``settings/``: :class:`ServerSettings` and its environment variables
  (:func:`settings_env`, :func:`settings_from_env`).
- ``guard/``: client tokens and pass-through keys; the concurrent-request limit and the
  SIGTERM drain; the in-flight budget of bodies and JSON values.
- ``run/``: uvicorn's HTTP protocols with the connection guard (head deadline and size,
  connection cap, ``TCP_NODELAY``), and the uvicorn configuration.
- ``capture/``: the live inspector's record of the upstream exchanges, redacted, in a
  spool every worker reads; ``inspector/``: its page at ``/inspect``.
- ``stream/``: one answer over ASGI (disconnects, keep-alives, backpressure from a
  slow client to the upstream read, heartbeats), the stream's observer, the sends, and
  the one SSE framing of chat and Responses.

On top of them, the routes and the way to Gemini:

- ``_handling``: what every route does first (auth, the body, counting), refusals
  raised as one exception and answered by one handler; ``_chat``: the chat and model
  routes; ``_probes``: ``/healthz`` and ``/readyz``; ``responses/``: the Responses
  routes and their answer (named SSE events or the Response, on ``stream/``'s machinery).
- ``_upstream``: the server's gateway, its pools over
  ``rxgem.transport.AiohttpTransport`` (an httpx transport on aiohttp) unless httpx's
  own is chosen; ``_app``: the Starlette app, assembled. The ``rxgem serve`` command is
  :mod:`rxgem.cli.serve`.

Importing this package does not import Starlette or uvicorn; the names that need
them load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .settings import ServerSettings, SettingsError, settings_from_env

# Not in `__all__`: what other rxgem packages import from this face (they import
# through faces, never private modules).
# isort: off
from .settings import (
    ENV as ENV,
    PIPELINE_OPTIONS as PIPELINE_OPTIONS,
    RECORD_COUNT_ENV as RECORD_COUNT_ENV,
    UPSTREAM_APIS as UPSTREAM_APIS,
    UPSTREAM_CLIENTS as UPSTREAM_CLIENTS,
    AuthMode as AuthMode,
    UpstreamAPI as UpstreamAPI,
    settings_env as settings_env,
)
# isort: on

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from ._app import create_app
    from .run import uvicorn_options as uvicorn_options

__all__ = [
    "ServerSettings",
    "SettingsError",
    "app_from_env",
    "create_app",
    "settings_from_env",
]

_LAZY = {
    "create_app": "._app",
    "uvicorn_options": ".run",  # what `rxgem serve` runs uvicorn with
}


def app_from_env() -> Starlette:
    """The app with :func:`settings_from_env` settings: the factory worker processes use.

    ``uvicorn rxgem.server:app_from_env --factory`` (what ``rxgem serve --workers N``
    runs in each worker, after exporting its settings).
    """
    from ._app import create_app

    return create_app(settings_from_env())


def __getattr__(name: str) -> Any:
    import importlib

    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value
