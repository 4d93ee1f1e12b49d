"""``OpenAITransport``: rxgem as an httpx transport, sync and async, for OpenAI clients in
the same process (the openai SDK, LangChain, ...), without a server."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Final

import httpx
import msgspec
from reactivex import Observable

from ..bridge import aiterate, iterate
from ..core import GeminiAPIError, RxGemError
from ..gateway import Gateway, ResponsesRun
from ..replies import (
    ErrorReply,
    Refusal,
    error_reply,
    internal_error,
    not_found,
    openai_model,
    openai_model_list,
    scrubber,
    valid_model_name,
)
from ..store import ANONYMOUS, ResponseStore
from ..transport import DEFAULT_TIMEOUT, get_model, list_models
from ._answers import Answer, ChatAnswer, ResponsesAnswer
from ._loop import LoopThread
from ._options import Options, options_of
from ._requests import Route, bearer, json_body, responses_refusal, route_of
from ._streams import AsyncFrames, SyncFrames

__all__ = ["OpenAITransport"]

_LOGGER: Final = logging.getLogger("rxgem.inprocess")

_JSON: Final = {"content-type": "application/json"}
_STREAM: Final = {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
}


@dataclass(frozen=True, slots=True)
class _Request:
    """A request as the gateway sees it (no counters: the transport keeps none)."""

    body_bytes: int
    request_id: str = "in-process"
    telemetry: None = None


def _reply_response(reply: ErrorReply) -> httpx.Response:
    return httpx.Response(
        reply.status, headers={**_JSON, **dict(reply.headers)}, content=reply.json()
    )


def _json_response(body: bytes) -> httpx.Response:
    return httpx.Response(200, headers=_JSON, content=body)


class OpenAITransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """rxgem inside an OpenAI client: an httpx transport that answers the OpenAI routes
    with Gemini, in process, as ``rxgem serve`` answers them (the same translation, the
    same SSE framing, the same error objects and statuses).

    One object serves an ``httpx.Client`` and an ``httpx.AsyncClient`` (as
    ``httpx.MockTransport`` does)::

        client = openai.OpenAI(
            api_key="unused",
            base_url="http://rxgem.local/v1",
            http_client=httpx.Client(transport=rxgem.OpenAITransport(api_key=KEY)),
        )

    It answers ``POST /v1/chat/completions``, ``POST /v1/responses`` (streamed or not)
    and ``GET /v1/models`` (and ``/v1/models/{id}``). A stream's body is read from the
    pipeline as Gemini's bytes arrive; closing it early cancels the upstream request.
    A sync client needs no event loop (Gemini is read on a worker thread); an async one
    reads on its own loop without blocking it.

    Args:
        upstream: ``"generateContent"`` (default) or ``"interactions"`` (Gemini's
            Interactions API, as ``rxgem serve --upstream-api interactions``; Google
            keeps nothing).
        api_key: the Gemini API key (else ``GEMINI_API_KEY``/``GOOGLE_API_KEY``); the
            OpenAI client's own ``api_key`` is not sent to Gemini.
        store: a :class:`~rxgem.store.ResponseStore` keeping Responses answers
            (``previous_response_id``, ``item_reference``) and the thought signatures
            handed out (a client that drops one gets it back to Gemini, as from
            ``rxgem serve``), per OpenAI client ``api_key``; none by default (then
            ``previous_response_id`` is a 400, and no signature is remembered).
        options: the transport's (``access_token``, ``base_url``, ``timeout``,
            ``retry``, ``headers``, ``max_line_bytes``, ``record``, ``resume``...) and
            the pipeline's (``signature_in_id``, ``reasoning_field``, ``slot_policy``,
            ``id_factory``, ...), as :func:`rxgem.chat_completions` takes them.

    Raises:
        TypeError: an option nothing takes, or one each request says (``model``...).
    """

    def __init__(
        self,
        *,
        upstream: str = "generateContent",
        api_key: str | None = None,
        store: ResponseStore | None = None,
        **options: Any,
    ) -> None:
        if api_key is not None:
            options["api_key"] = api_key
        self.options: Options = options_of(upstream, options)
        self.gateway = Gateway(self.options.gateway(), logger=_LOGGER)
        """What answers the requests, as it answers ``rxgem serve``'s."""
        self.gateway.store = store
        self.store = store
        self._timeout = self.options.transport.get("timeout", DEFAULT_TIMEOUT)
        self._client: httpx.Client | None = None
        self._aclients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._loop = LoopThread("rxgem-openai-transport")
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAITransport(upstream={self.options.upstream!r})"

    # -- Gemini's clients, one for sync requests, one per event loop for async ones

    def _sync_client(self) -> httpx.Client:
        with self._lock:  # requests of several threads share one pool
            if self._client is None:
                self._client = httpx.Client(timeout=self._timeout, follow_redirects=False)
            return self._client

    def _async_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._aclients.get(loop)
        if client is None:
            for gone in [known for known in self._aclients if known.is_closed()]:
                del self._aclients[gone]
            client = self._aclients[loop] = httpx.AsyncClient(
                timeout=self._timeout, follow_redirects=False
            )
        return client

    def close(self) -> None:
        """Close the sync client toward Gemini and the private loop (an ``httpx.Client``
        closing calls it)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        self._loop.close()

    async def aclose(self) -> None:
        """Close this event loop's client toward Gemini (an ``httpx.AsyncClient`` closing
        calls it)."""
        client = self._aclients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    # -- what both sides share

    async def _answer_of(
        self, route: Route, body: dict[str, Any], request: httpx.Request, size: int, client: Any
    ) -> tuple[Observable[Any], Answer]:
        """The Observable and the framing of a chat or Responses request (raises
        ``Refusal``, ``RxGemError``)."""
        o = self.options
        gateway = self.gateway
        common = {"secrets": o.secrets, "upstream": o.base_url}
        token = bearer(request.headers) or ANONYMOUS
        if route[0] == "chat":
            run = await gateway.chat(body, o, token, _Request(size), client=client)
            return run.source, ChatAnswer(stream=run.stream, watch=run.watch, **common)
        refused = responses_refusal(body, self.store)
        if refused is not None:
            raise refused
        answer = await gateway.responder.create(
            body, o, token, _Request(size), client=client, scrub=self._scrub
        )
        assert isinstance(answer, ResponsesRun)  # a background one is refused above
        framing = ResponsesAnswer(on_response=answer.on_response, stream=answer.stream, **common)
        return answer.events, framing

    def _scrub(self, text: str) -> str:
        """What Gemini said, as a failed response may show it: through the user's own
        ``scrub`` option, if any, then without the keys and the upstream's address."""
        o = self.options
        own = o.responses.get("scrub")
        return scrubber(o.secrets, o.base_url)(own(text) if own is not None else text)

    async def _models(self, client: httpx.AsyncClient, model: str | None) -> bytes:
        o = self.options
        credentials = {
            "api_key": o.transport.get("api_key"),
            "access_token": o.transport.get("access_token"),
        }
        if model is None:
            pages = await list_models(client, o.base_url, **credentials)
            return _encode(openai_model_list(pages))
        if not valid_model_name(model):
            raise Refusal(not_found("no such model", "model", "model_not_found"))
        found = openai_model(await get_model(client, model, o.base_url, **credentials))
        if found is None:
            raise GeminiAPIError(f"model {model} not found", code=404, http_status=404)
        return _encode(found)

    def _failed(self, error: BaseException) -> httpx.Response:
        if isinstance(error, Refusal):
            return _reply_response(error.reply)
        if isinstance(error, RxGemError):
            o = self.options
            return _reply_response(error_reply(error, o.secrets, o.base_url))
        _LOGGER.error("the in-process transport failed", exc_info=error)
        return _reply_response(internal_error())

    # -- sync

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            name, model = route_of(request.method, request.url.path)
            if name in ("models", "model"):
                return _json_response(self._loop.run(self._models_call(model or None)))
            content = request.read()
            body = json_body(content)
            client = self._sync_client()
            route = (name, model)
            source, answer = self._loop.run(
                self._answer_of(route, body, request, len(content), client)
            )
        except Exception as exc:
            return self._failed(exc)
        items = iterate(source)
        if not answer.stream:
            try:
                for item in items:
                    answer.collect(item)
                pending = answer.finish(None)
                if pending is not None:
                    self._run(pending)
                return _json_response(answer.body())
            except Exception as exc:
                return self._failed(exc)
            finally:
                items.close()
        try:
            first = [next(items)]
        except StopIteration:
            first = []
        except Exception as exc:
            items.close()
            return self._failed(exc)
        run = self._loop.run
        frames = SyncFrames(
            answer, items, first, lambda pending: run(_awaited(pending)), items.close
        )
        return httpx.Response(200, headers=_STREAM, stream=frames)

    def _run(self, pending: Awaitable[None]) -> None:
        self._loop.run(_awaited(pending))

    async def _models_call(self, model: str | None) -> bytes:
        async with httpx.AsyncClient(timeout=self._timeout, follow_redirects=False) as client:
            return await self._models(client, model)

    # -- async

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            name, model = route_of(request.method, request.url.path)
            client = self._async_client()
            if name in ("models", "model"):
                return _json_response(await self._models(client, model or None))
            content = await request.aread()
            body = json_body(content)
            source, answer = await self._answer_of(
                (name, model), body, request, len(content), client
            )
        except Exception as exc:
            return self._failed(exc)
        items = aiterate(source)
        if not answer.stream:
            try:
                async for item in items:
                    answer.collect(item)
                pending = answer.finish(None)
                if pending is not None:
                    await pending
                return _json_response(answer.body())
            except Exception as exc:
                return self._failed(exc)
            finally:
                items.close()
        try:
            first = [await items.__anext__()]
        except StopAsyncIteration:
            first = []
        except Exception as exc:
            items.close()
            return self._failed(exc)
        return httpx.Response(
            200, headers=_STREAM, stream=AsyncFrames(answer, items, first, items.close)
        )


async def _awaited(pending: Awaitable[None]) -> None:
    await pending


def _encode(value: Any) -> bytes:
    return msgspec.json.encode(value)
