"""The server's side toward Gemini: the shared ``httpx.AsyncClient`` pools, and the chat,
model and probe calls made on them (the HTTP itself is :mod:`rxgem.transport`'s, over
``rxgem.transport.AiohttpTransport`` or httpx's own)."""

from __future__ import annotations

import http.cookiejar
import importlib.util
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, cast

import httpx
from reactivex import Observable

from ..client import chat_completions, response_events
from ..converter import ResponsesConverter, StreamOptions
from ..core import (
    ChatCompletion,
    ChatCompletionChunk,
    GeminiAPIError,
    GeminiTransportError,
    ResponsesEvent,
    Stage,
)
from ..replies import openai_model, openai_model_list
from ..request import InteractionRequest, ResponsesRequest
from ..transport import CassetteDir, ack_head, get_model, list_models, models_status
from .capture import Inspector
from .guard import Credentials
from .settings import RECORD_COUNT_ENV, ServerSettings

__all__ = ["Upstream", "uses_aiohttp"]

_PROBE_TTL: Final = 5.0
_SHARD_SIZE: Final = 64
_MAX_SHARDS: Final = 16


class _NoCookies(http.cookiejar.CookieJar):
    """A cookie jar that keeps nothing: the pools serve every client, so a cookie the
    upstream sets for one must not go out with another's requests (and looking each
    response's headers through for cookies costs time per request)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None

    def set_cookie(self, cookie: http.cookiejar.Cookie) -> None:
        return None


def uses_aiohttp(choice: str) -> bool:
    """Whether the server's upstream goes through aiohttp: ``choice`` is ``"aiohttp"``,
    or ``"auto"`` and aiohttp imports."""
    if choice == "httpx":
        return False
    if choice == "aiohttp":
        return True
    return importlib.util.find_spec("aiohttp") is not None


def _taken_by(stages: Sequence[Stage[Any]], options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``options`` that ``stages`` declare (the others are another upstream's)."""
    names = {name for stage in stages for name in stage.declared}
    return {k: v for k, v in options.items() if k in names}


def _aiohttp_transport(limits: httpx.Limits) -> httpx.AsyncBaseTransport:
    from ..transport import AiohttpTransport

    return AiohttpTransport(limits=limits)


class Upstream:
    """Gemini behind the server: the connection pools and the calls made with it.

    The ``httpx.AsyncClient`` objects (one per pool) are made on the server's event
    loop at startup (:meth:`open`) and closed by :meth:`aclose` (the app's shutdown).
    Streaming responses honour backpressure through the transport's flow gate
    (:mod:`rxgem.server.stream`).
    """

    def __init__(self, settings: ServerSettings, inspector: Inspector | None = None) -> None:
        self.settings = settings
        self.inspector = inspector
        """With the inspector on, what captures every generation (else nothing does)."""
        reader = settings.chosen_upstream.reader
        chosen = settings.chosen_upstream.pipeline
        self.chat_pipeline = chosen(_taken_by(reader.chat, settings.pipeline))
        """The pipeline options of every chat completion: the server's that the upstream's
        stages take (and those that choose its reader: ``upstream``, ``api``)."""
        self.responses_pipeline = chosen(_taken_by(reader.responses, settings.pipeline))
        """The same for every Responses answer."""
        self._clients: list[httpx.AsyncClient] = []
        self._turn = 0
        self._probe: tuple[float, str | None] | None = None
        self.recorder = (
            CassetteDir(
                settings.record,
                max_files=settings.record_max_files,
                secrets=settings.secrets,
                shared=os.environ.get(RECORD_COUNT_ENV) or None,
            )
            if settings.record
            else None
        )
        """Where each upstream exchange is written as a cassette (``--record``), if anywhere;
        the workers of one ``rxgem serve`` share its count (:data:`RECORD_COUNT_ENV`)."""

    @property
    def client(self) -> httpx.AsyncClient:
        """The first shared client (made on first use): for the model list and probes."""
        return self.clients[0]

    @property
    def clients(self) -> list[httpx.AsyncClient]:
        """The shared clients, made on first use.

        With httpx's own transport, several small pools rather than one large:
        httpcore looks at every connection of a pool for each request (a
        ``getpeername`` and a ``poll`` per idle one), so with hundreds of streams open
        one pool's scan costs more than the request. Requests take the pools in turn.
        aiohttp's pool finds a connection without a scan: one pool.
        """
        if not self._clients:
            s = self.settings
            aiohttp = uses_aiohttp(s.upstream_client)
            shards = 1 if aiohttp else -(-s.max_upstream_connections // _SHARD_SIZE)
            shards = max(1, min(_MAX_SHARDS, shards))
            per_shard = -(-s.max_upstream_connections // shards)
            limits = httpx.Limits(
                max_connections=per_shard,
                max_keepalive_connections=min(_SHARD_SIZE, per_shard),
            )
            timeout = httpx.Timeout(s.read_timeout, connect=s.connect_timeout)
            self._clients = [
                httpx.AsyncClient(
                    limits=limits,
                    timeout=timeout,
                    follow_redirects=False,
                    cookies=_NoCookies(),
                    transport=self._transport(limits, aiohttp),
                    # aiohttp's transport acknowledges each head itself
                    event_hooks=None if aiohttp else {"response": [ack_head]},
                )
                for _ in range(shards)
            ]
        return self._clients

    def _transport(self, limits: httpx.Limits, aiohttp: bool) -> httpx.AsyncBaseTransport | None:
        inner = _aiohttp_transport(limits) if aiohttp else None
        if self.inspector is None:
            return inner
        return self.inspector.transport(inner or httpx.AsyncHTTPTransport(limits=limits))

    def next_client(self) -> httpx.AsyncClient:
        """The pool the next chat request takes."""
        clients = self.clients
        self._turn = (self._turn + 1) % len(clients)
        return clients[self._turn]

    def open(self) -> None:
        """Make the shared client now (on the server's event loop), not at first use."""
        _ = self.client

    @property
    def is_open(self) -> bool:
        """Whether the shared clients exist and are not closed."""
        return any(not client.is_closed for client in self._clients)

    async def aclose(self) -> None:
        """Close the shared clients (idempotent)."""
        clients, self._clients = self._clients, []
        for client in clients:
            await client.aclose()

    def chat_completions(
        self,
        body: dict[str, Any],
        credentials: Credentials,
        client: httpx.AsyncClient | None = None,
    ) -> Observable[ChatCompletionChunk] | Observable[ChatCompletion]:
        """``rxgem.chat_completions`` on the shared client (``client``: the pool to take,
        chosen on the event loop when this runs in a worker thread), on the server's
        upstream API (raises ``InvalidRequestError``); through Interactions, Google keeps
        nothing."""
        return chat_completions(
            body,
            base_url=self.settings.upstream,
            api_key=credentials.api_key,
            access_token=credentials.access_token,
            client=client or self.next_client(),
            max_line_bytes=self.settings.max_upstream_line_bytes,
            record=self.recorder,
            **cast(StreamOptions, self.chat_pipeline),
        )

    def responses(
        self,
        request: ResponsesRequest | InteractionRequest,
        credentials: Credentials,
        on_start: Callable[[ResponsesConverter], None],
        response_id: str | None = None,
        scrub: Callable[[str], str] | None = None,
    ) -> Observable[ResponsesEvent]:
        """A translated Responses request's events on the shared client
        (:func:`rxgem.client.response_events`; ``on_start`` gets each subscription's
        converter), with the server's pipeline options that the Responses stages take;
        ``response_id``: the response's id (else Gemini's ``responseId`` makes it);
        ``scrub``: what a failed response's message from Gemini goes through."""
        return response_events(
            request,
            on_start=on_start,
            response_id=response_id,
            base_url=self.settings.upstream,
            api_key=credentials.api_key,
            access_token=credentials.access_token,
            client=self.next_client(),
            max_line_bytes=self.settings.max_upstream_line_bytes,
            record=self.recorder,
            **self.responses_pipeline,
            **({"scrub": scrub} if scrub is not None else {}),
        )

    async def probe(self) -> str | None:
        """Whether Gemini answers: ``None`` if so, else what is wrong (for ``/readyz``).

        A ``GET {upstream}/models?pageSize=1`` with the server's own credentials (none
        with pass-through auth: any answer then shows the upstream is there), at most
        once per ``_PROBE_TTL`` seconds; a refused key makes the server not ready.
        """
        now = time.monotonic()
        if self._probe is not None and now - self._probe[0] < _PROBE_TTL:
            return self._probe[1]
        s = self.settings
        problem: str | None = None
        try:
            status = await models_status(
                self.client,
                s.upstream,
                api_key=s.api_key,
                access_token=s.access_token,
                timeout=s.connect_timeout,
            )
        except GeminiTransportError as exc:
            problem = f"upstream unreachable ({type(exc.cause).__name__})"
        else:
            refused = status in (401, 403) and bool(s.api_key or s.access_token)
            if status >= 500 or refused:
                problem = f"upstream answered HTTP {status}"
        self._probe = (now, problem)
        return problem

    async def list_models(self, credentials: Credentials) -> dict[str, Any]:
        """Gemini's model list (every page), in OpenAI's shape."""
        pages = await list_models(
            self.client,
            self.settings.upstream,
            api_key=credentials.api_key,
            access_token=credentials.access_token,
            environ={},
        )
        return openai_model_list(pages)

    async def get_model(self, credentials: Credentials, name: str) -> dict[str, Any]:
        """One model, in OpenAI's shape (``name`` already checked to be a plain id)."""
        found = await get_model(
            self.client,
            name,
            self.settings.upstream,
            api_key=credentials.api_key,
            access_token=credentials.access_token,
            environ={},
        )
        model = openai_model(found)
        if model is None:
            raise GeminiAPIError(f"model {name} not found", code=404, http_status=404)
        return model
