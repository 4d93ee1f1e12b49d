"""Gemini's model list over httpx: ``models.list`` (every page) and ``models.get``.

Both return Gemini's JSON as it came (the Gemini API's ``{"models": [...]}`` or Vertex
AI's ``{"publisherModels": [...]}``); turning it into OpenAI's shape is the caller's
business (``rxgem serve`` does it in its model list). Errors are the
stream's: :class:`GeminiAPIError` for a non-200 answer, :class:`GeminiTransportError`
when no answer comes, :class:`MalformedStreamError` for a body that is not a JSON
object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import httpx
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT

from ._http import DEFAULT_BASE_URL, model_url, resolve_headers, transport_error
from ._json_call import call_json

__all__ = ["MAX_MODEL_PAGES", "get_model", "list_models", "models_status"]

MAX_MODEL_PAGES: Final = 20
"""The most pages :func:`list_models` asks for (1000 models each)."""


def _models_url(base_url: str | None) -> str:
    return f"{(base_url or DEFAULT_BASE_URL).rstrip('/')}/models"


def _json_headers(
    api_key: str | None, access_token: str | None, environ: Mapping[str, str] | None
) -> dict[str, str]:
    headers = resolve_headers(api_key, access_token, {"accept": "application/json"}, environ)
    headers.pop("content-type", None)  # a GET has no body
    return headers


async def _get_json(
    client: httpx.AsyncClient, url: str, headers: Mapping[str, str], params: Mapping[str, str]
) -> dict[str, Any]:
    return await call_json(client, "GET", url, headers, params=params, what="the model list")


async def list_models(
    client: httpx.AsyncClient,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every page of ``GET {base_url}/models`` (1000 models a page, at most
    :data:`MAX_MODEL_PAGES` pages), each as Gemini sent it.

    Credentials as :func:`resolve_headers` finds them (``environ={}``: only the ones
    passed, never the process's ``GEMINI_API_KEY``).

    Raises:
        MissingCredentialsError: no key or token.
        GeminiAPIError: a page was answered with another status than 200.
        GeminiTransportError: no answer (connection, timeout).
        MalformedStreamError: a page is not a JSON object.
    """
    url = _models_url(base_url)
    headers = _json_headers(api_key, access_token, environ)
    pages: list[dict[str, Any]] = []
    page_token: str | None = None
    for _ in range(MAX_MODEL_PAGES):
        params = {"pageSize": "1000"}
        if page_token:
            params["pageToken"] = page_token
        page = await _get_json(client, url, headers, params)
        pages.append(page)
        next_token = page.get("nextPageToken")
        if not isinstance(next_token, str) or not next_token:
            break
        page_token = next_token
    return pages


async def get_model(
    client: httpx.AsyncClient,
    model: str,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``GET {base_url}/models/{model}``: one model, as Gemini sent it.

    Raises what :func:`list_models` raises, and :class:`InvalidRequestError` (before
    any request) when ``model`` is not a model id (:func:`model_segment`).
    """
    url = model_url(base_url, model)
    return await _get_json(client, url, _json_headers(api_key, access_token, environ), {})


async def models_status(
    client: httpx.AsyncClient,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    timeout: httpx.Timeout | float | UseClientDefault | None = USE_CLIENT_DEFAULT,
) -> int:
    """The HTTP status of ``GET {base_url}/models?pageSize=1``: whether Gemini answers,
    and whether it takes these credentials (a readiness probe).

    Without ``api_key`` or ``access_token`` no credential is sent (none is looked for in
    the environment): any answer then shows that Gemini is there.

    Raises:
        GeminiTransportError: no answer (its ``cause`` is httpx's error).
    """
    url = _models_url(base_url)
    headers = {"accept": "application/json"}
    if api_key or access_token:
        headers = _json_headers(api_key, access_token, {})
    try:
        response = await client.get(url, params={"pageSize": "1"}, headers=headers, timeout=timeout)
    except httpx.HTTPError as exc:
        raise transport_error(exc, url) from exc
    return response.status_code
