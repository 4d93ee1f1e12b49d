"""The server's side toward Gemini: one shared ``httpx.AsyncClient``, chat and model calls."""

from __future__ import annotations

import time
from typing import Any, Final

import httpx
import msgspec
from reactivex import Observable

from ..client import chat_completions
from ..core import ChatCompletion, ChatCompletionChunk, GeminiAPIError, MalformedStreamError
from ..transport import http_error, model_url, resolve_headers
from ..transport._http import transport_error
from ._auth import Credentials
from ._models import openai_model, openai_model_list
from ._settings import ServerSettings

__all__ = ["Upstream"]

_MAX_PAGES: Final = 20
_PROBE_TTL: Final = 5.0


class Upstream:
    """Gemini behind the server: the connection pool and the calls made with it.

    The ``httpx.AsyncClient`` is made on first use (on the server's event loop) and
    closed by :meth:`aclose` (the app's shutdown). Streaming responses honour
    backpressure through the transport's flow gate (:mod:`rxgem.server._stream`).
    """

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._client: httpx.AsyncClient | None = None
        self._probe: tuple[float, str | None] | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        """The shared client (made on first use)."""
        if self._client is None:
            s = self.settings
            limits = httpx.Limits(
                max_connections=s.max_upstream_connections,
                max_keepalive_connections=min(100, s.max_upstream_connections),
            )
            self._client = httpx.AsyncClient(
                limits=limits,
                timeout=httpx.Timeout(s.read_timeout, connect=s.connect_timeout),
                follow_redirects=False,
            )
        return self._client

    def open(self) -> None:
        """Make the shared client now (on the server's event loop), not at first use."""
        _ = self.client

    @property
    def is_open(self) -> bool:
        """Whether the shared client exists and is not closed."""
        return self._client is not None and not self._client.is_closed

    async def aclose(self) -> None:
        """Close the shared client (idempotent)."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    def chat_completions(
        self, body: dict[str, Any], credentials: Credentials
    ) -> Observable[ChatCompletionChunk] | Observable[ChatCompletion]:
        """``rxgem.chat_completions`` on the shared client (raises ``InvalidRequestError``)."""
        return chat_completions(
            body,
            base_url=self.settings.upstream,
            api_key=credentials.api_key,
            access_token=credentials.access_token,
            client=self.client,
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
        headers = {"accept": "application/json"}
        if s.api_key or s.access_token:
            headers = resolve_headers(s.api_key, s.access_token, headers, {})
            headers.pop("content-type", None)
        url = f"{s.upstream.rstrip('/')}/models"
        problem: str | None = None
        try:
            response = await self.client.get(
                url, params={"pageSize": "1"}, headers=headers, timeout=s.connect_timeout
            )
        except httpx.HTTPError as exc:
            problem = f"upstream unreachable ({type(exc).__name__})"
        else:
            status = response.status_code
            refused = status in (401, 403) and bool(s.api_key or s.access_token)
            if status >= 500 or refused:
                problem = f"upstream answered HTTP {status}"
        self._probe = (now, problem)
        return problem

    async def list_models(self, credentials: Credentials) -> dict[str, Any]:
        """Gemini's model list (every page), in OpenAI's shape."""
        url = f"{self.settings.upstream.rstrip('/')}/models"
        pages: list[dict[str, Any]] = []
        page_token: str | None = None
        for _ in range(_MAX_PAGES):
            params = {"pageSize": "1000"}
            if page_token:
                params["pageToken"] = page_token
            page = await self._get_json(url, credentials, params)
            pages.append(page)
            next_token = page.get("nextPageToken")
            if not isinstance(next_token, str) or not next_token:
                break
            page_token = next_token
        return openai_model_list(pages)

    async def get_model(self, credentials: Credentials, name: str) -> dict[str, Any]:
        """One model, in OpenAI's shape (``name`` already checked to be a plain id)."""
        url = model_url(self.settings.upstream, name)
        model = openai_model(await self._get_json(url, credentials, {}))
        if model is None:
            raise GeminiAPIError(f"model {name} not found", code=404, http_status=404)
        return model

    async def _get_json(
        self, url: str, credentials: Credentials, params: dict[str, str]
    ) -> dict[str, Any]:
        headers = resolve_headers(
            credentials.api_key, credentials.access_token, {"accept": "application/json"}, {}
        )
        headers.pop("content-type", None)
        try:
            response = await self.client.get(url, params=params, headers=headers)
        except httpx.HTTPError as exc:
            raise transport_error(exc, url) from exc
        if response.status_code != 200:
            raise http_error(
                response.status_code, response.headers, response.content, response.reason_phrase
            )
        try:
            data = msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            data = None
        if not isinstance(data, dict):
            raise MalformedStreamError("the model list is not a JSON object")
        return data
