"""The :class:`Gateway`: one object under the server (and the in-process transport) that
owns the connection pools, the upstream, the pipeline options and the store, and answers
chat completions, Responses and background runs with typed results."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final

import httpx
from reactivex import Observable

from ..client import chat_completions_on, response_events_on
from ..converter import ResponsesConverter
from ..core import ChatCompletion, ChatCompletionChunk, GeminiAPIError, GeminiTransportError
from ..core.responses import ResponsesEvent
from ..operators import pipeline_stages, responses_stages
from ..replies import Refusal, openai_model, openai_model_list, valid_model_name
from ..request import InteractionRequest, ResponsesRequest
from ..store import ResponseStore
from ..transport import get_model, list_models, models_status
from ._agents import agent_of, chat_refusal
from ._chat_signatures import chat_recall
from ._interactions import Interactions
from ._offload import Offload
from ._options import GatewayOptions
from ._pools import Pools, TransportFactory
from ._responses import Responder
from ._results import ChatRun
from ._signature_memory import ChatWatch, SignatureMemory, caught_placeholders
from ._trace import Keys, Trace
from ._usage import usage_asked

__all__ = ["Gateway"]

_PROBE_TTL: Final = 5.0


class Gateway:
    """Gemini behind one object: the pools, the upstream calls, the pipeline options,
    signature memory and the response store.

    The pools are made on the event loop that uses them (:meth:`open`, else at first
    use) and closed by :meth:`aclose`. The store is set by whoever opens it
    (:attr:`store`; ``None``: nothing kept, no signature memory).

    Args:
        options: the upstream, the pools' bounds, the pipeline options.
        transport: what makes a pool's transport (``None``: httpx's own).
        sharded: several small pools rather than one (see :class:`Pools`).
        hooks: the pools' ``event_hooks``.
        logger: where signature memory and the store's failures are logged.
    """

    def __init__(
        self,
        options: GatewayOptions,
        *,
        transport: TransportFactory | None = None,
        sharded: bool = True,
        hooks: Mapping[str, Any] | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self.options = options
        self.logger = logger or logging.getLogger("rxgem.gateway")
        timeout = httpx.Timeout(options.read_timeout, connect=options.connect_timeout)
        self.pools = Pools(
            options.max_connections, timeout, transport, sharded=sharded, hooks=hooks
        )
        self.chat_pipeline = options.chat_pipeline()
        """The pipeline options of every chat completion (``upstream`` included)."""
        self.responses_pipeline = options.responses_pipeline()
        """The same for every Responses answer."""
        self.recorder = options.recorder
        self._calls = options.calls()
        self.offload = Offload()
        """Where each request's translation runs (a large body's: in a worker thread)."""
        self.memory = SignatureMemory(self.logger)
        """The thought signatures handed out, kept in the store."""
        self.interactions = Interactions(options, self.pools) if options.chosen.background else None
        """The Interactions upstream's calls, or ``None`` on ``generateContent``."""
        self.responder = Responder(self)
        """Responses and background runs."""
        self._probe: tuple[float, str | None] | None = None

    @property
    def store(self) -> ResponseStore | None:
        """The response store (``None``: none)."""
        return self.memory.store

    @store.setter
    def store(self, store: ResponseStore | None) -> None:
        self.memory.store = store

    # -- the pools

    def open(self) -> None:
        """Make the shared clients now (a TLS context takes tens of ms: not in the first
        request)."""
        self.pools.open()

    @property
    def is_open(self) -> bool:
        return self.pools.is_open

    async def aclose(self) -> None:
        """Close the pools (idempotent)."""
        await self.pools.aclose()

    # -- chat completions

    async def chat(
        self,
        body: dict[str, Any],
        keys: Keys,
        token: str,
        trace: Trace,
        *,
        counted: Callable[[], object] | None = None,
        count_usage: bool = False,
        client: Any = None,
    ) -> ChatRun:
        """A chat completion request, answered (raises :class:`Refusal`, ``RxGemError``).

        ``token``: whose signatures are remembered (the store derives the owner);
        ``counted``: called once the request is taken (not for a refused agent);
        ``count_usage``: whether the caller counts every answer's tokens (a stream then
        always brings the usage chunk; :attr:`ChatRun.send_usage` says if it goes out);
        ``client``: the httpx client to ask Gemini with (default: the next pool).
        """
        refused = chat_refusal(body)
        if refused is not None:
            raise Refusal(refused)
        if counted is not None:
            counted()
        stream = body.get("stream") is True
        body, send_usage = usage_asked(body, count_usage)
        memory = self.memory
        session = await memory.session(token, body, trace)
        recall = chat_recall(body, session.model if session is not None else None)
        unsigned = recall.unsigned
        if session is not None and recall.keys:
            body, restored = recall.restore(body, await session.recall(recall.keys))
            session.restored(restored)
            unsigned -= restored
        client = client or self.pools.next_client()
        source: Observable[ChatCompletionChunk] | Observable[ChatCompletion]
        if unsigned:  # Google's placeholder may go: count it (warnings are process-wide)
            work = partial(self.chat_completions, body, keys, client)
            source, placeholders = await self.offload.run_alone(
                trace.body_bytes, caught_placeholders(work)
            )
            memory.placeholders(trace, placeholders)
        else:
            source = await self.offload.run(
                trace.body_bytes, self.chat_completions, body, keys, client
            )
        watch = ChatWatch(session) if session is not None else None
        return ChatRun(source, stream, send_usage, watch)

    def chat_completions(
        self, body: dict[str, Any], keys: Keys, client: Any = None
    ) -> Observable[ChatCompletionChunk] | Observable[ChatCompletion]:
        """``rxgem.chat_completions`` on the shared pools (``client``: the pool to take,
        chosen on the event loop when this runs in a worker thread)."""
        return chat_completions_on(
            self.options.chosen,
            body,
            options={
                "api_key": keys.api_key,
                "access_token": keys.access_token,
                "client": client or self.pools.next_client(),
                **self._calls,
                **self.chat_pipeline,
            },
        )

    def response_events(
        self,
        request: ResponsesRequest | InteractionRequest,
        keys: Keys,
        on_start: Callable[[ResponsesConverter], None],
        response_id: str | None = None,
        client: Any = None,
        scrub: Callable[[str], str] | None = None,
    ) -> Observable[ResponsesEvent]:
        """A translated Responses request's events on the shared pools (``on_start`` gets
        each subscription's converter; ``response_id``: the response's id, else Gemini's
        ``responseId`` makes it; ``client``: as :meth:`chat`'s; ``scrub``: what a failed
        response's message from Gemini goes through)."""
        pipeline = {**self.responses_pipeline, "scrub": scrub} if scrub else self.responses_pipeline
        return response_events_on(
            self.options.chosen,
            request,
            on_start,
            {
                "response_id": response_id,
                "api_key": keys.api_key,
                "access_token": keys.access_token,
                "client": client or self.pools.next_client(),
                **self._calls,
                **pipeline,
            },
        )

    # -- models and readiness

    async def probe(self, keys: Keys | None = None) -> str | None:
        """Whether Gemini answers: ``None`` if so, else what is wrong (for ``/readyz``).

        A ``GET {upstream}/models?pageSize=1`` with ``keys`` (the credentials the server
        found itself), else the gateway's own (none with pass-through auth: any answer then
        shows the upstream is there), at most once per ``_PROBE_TTL`` seconds; a refused
        credential makes it not ready.
        """
        now = time.monotonic()
        if self._probe is not None and now - self._probe[0] < _PROBE_TTL:
            return self._probe[1]
        o = self.options
        api_key, access_token = (
            (keys.api_key, keys.access_token) if keys else (o.api_key, o.access_token)
        )
        problem: str | None = None
        try:
            status = await models_status(
                self.pools.client,
                o.upstream,
                api_key=api_key,
                access_token=access_token,
                timeout=o.connect_timeout,
            )
        except GeminiTransportError as exc:
            problem = f"upstream unreachable ({type(exc.cause).__name__})"
        else:
            refused = status in (401, 403) and bool(api_key or access_token)
            if status >= 500 or refused:
                problem = f"upstream answered HTTP {status}"
        self._probe = (now, problem)
        return problem

    async def list_models(self, keys: Keys) -> dict[str, Any]:
        """Gemini's model list (every page), in OpenAI's shape."""
        pages = await list_models(
            self.pools.client,
            self.options.upstream,
            api_key=keys.api_key,
            access_token=keys.access_token,
            environ={},
        )
        return openai_model_list(pages)

    async def get_model(self, keys: Keys, name: str) -> dict[str, Any]:
        """One model, in OpenAI's shape (``name`` already checked to be a plain id)."""
        found = await get_model(
            self.pools.client,
            name,
            self.options.upstream,
            api_key=keys.api_key,
            access_token=keys.access_token,
            environ={},
        )
        model = openai_model(found)
        if model is None:
            raise GeminiAPIError(f"model {name} not found", code=404, http_status=404)
        return model

    # -- what the edge asks of the pipeline without running it

    @staticmethod
    def valid_model(model: str) -> bool:
        """Whether a request's ``model`` is a plain model name, or ``agent:<name>`` of one."""
        return valid_model_name(agent_of(model) or model)

    @staticmethod
    def stages(responses: bool, options: Mapping[str, Any]) -> list[tuple[str, Any]]:
        """The named stages of a chat (or, ``responses``, a Responses) answer made with
        ``options`` (the inspector draws an exchange through them)."""
        if responses:
            return list(responses_stages(**options))
        return list(pipeline_stages(**options))
