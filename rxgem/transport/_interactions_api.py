"""Gemini's Interactions resources over httpx: create (not streamed), get, cancel, delete.

For the server's background runs: create one with ``"background": true``, poll it with
:func:`get_interaction`, stop it with :func:`cancel_interaction`, forget it with
:func:`delete_interaction`. Each returns Google's JSON as it came. Errors are the
stream's: :class:`GeminiAPIError` for a non-200 answer (a 404 for an interaction Google
does not keep), :class:`GeminiTransportError` when no answer comes,
:class:`MalformedStreamError` for a body that is not a JSON object, or an object whose
``id`` is not an interaction id as Google gives them (checked here, where it is received,
so that no answer can make a later request address anything but its interaction).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import msgspec
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT

from ..core import MalformedStreamError
from ._http import interactions_url, is_google_interaction_id, resolve_headers
from ._json_call import call_json

__all__ = ["cancel_interaction", "create_interaction", "delete_interaction", "get_interaction"]

_Timeout = httpx.Timeout | float | UseClientDefault | None


async def _call(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    credentials: tuple[str | None, str | None, Mapping[str, str] | None],
    body: Mapping[str, Any] | None,
    timeout: _Timeout,
) -> dict[str, Any]:
    api_key, access_token, environ = credentials
    headers = resolve_headers(api_key, access_token, {"accept": "application/json"}, environ)
    if body is None:
        headers.pop("content-type", None)
    content = None if body is None else msgspec.json.encode(body)
    answer = await call_json(
        client,
        method,
        url,
        headers,
        what="the Interactions answer",
        content=content,
        timeout=timeout,
    )
    if "id" in answer and not is_google_interaction_id(answer["id"]):
        raise MalformedStreamError(
            "the Interactions answer's id is not an interaction id (letters, digits and"
            " _ - . =, at most 256)"
        )
    return answer


async def create_interaction(
    client: httpx.AsyncClient,
    body: Mapping[str, Any],
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: _Timeout = USE_CLIENT_DEFAULT,
) -> dict[str, Any]:
    """``POST {base_url}/interactions`` with ``body`` (``"stream"`` forced false): the
    Interaction object (at once, ``in_progress``, for ``"background": true``).

    Credentials as :func:`resolve_headers` finds them (``environ={}``: only the ones
    passed). Raises what the module says, and :class:`MissingCredentialsError`.
    """
    url = interactions_url(base_url)
    payload = {**body, "stream": False}
    return await _call(client, "POST", url, (api_key, access_token, environ), payload, timeout)


async def get_interaction(
    client: httpx.AsyncClient,
    interaction_id: str,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: _Timeout = USE_CLIENT_DEFAULT,
) -> dict[str, Any]:
    """``GET {base_url}/interactions/{id}``: the Interaction object as it stands (poll a
    background run until its ``status`` is no longer ``in_progress``).

    Raises :class:`InvalidRequestError` (before any request) for an id that is not one.
    """
    url = interactions_url(base_url, interaction_id)
    return await _call(client, "GET", url, (api_key, access_token, environ), None, timeout)


async def cancel_interaction(
    client: httpx.AsyncClient,
    interaction_id: str,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: _Timeout = USE_CLIENT_DEFAULT,
) -> dict[str, Any]:
    """``POST {base_url}/interactions/{id}/cancel``: stop a background run; the object
    after it (``status`` ``cancelled``, or the final one when it had already ended)."""
    url = interactions_url(base_url, interaction_id) + "/cancel"
    return await _call(client, "POST", url, (api_key, access_token, environ), None, timeout)


async def delete_interaction(
    client: httpx.AsyncClient,
    interaction_id: str,
    base_url: str | None = None,
    *,
    api_key: str | None = None,
    access_token: str | None = None,
    environ: Mapping[str, str] | None = None,
    timeout: _Timeout = USE_CLIENT_DEFAULT,
) -> dict[str, Any]:
    """``DELETE {base_url}/interactions/{id}``: Google forgets the interaction (``{}``)."""
    url = interactions_url(base_url, interaction_id)
    return await _call(client, "DELETE", url, (api_key, access_token, environ), None, timeout)
