"""One request whose answer is a JSON object, with the transport's typed errors.

Shared by the model list (:mod:`._models_api`) and the Interactions resources
(:mod:`._interactions_api`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx
import msgspec
from httpx import USE_CLIENT_DEFAULT
from httpx._client import UseClientDefault  # the type of USE_CLIENT_DEFAULT

from ..core import MalformedStreamError
from ._http import http_error, transport_error

__all__ = ["call_json"]


async def call_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    headers: Mapping[str, str],
    *,
    what: str,
    params: Mapping[str, str] | None = None,
    content: bytes | None = None,
    timeout: httpx.Timeout | float | UseClientDefault | None = USE_CLIENT_DEFAULT,
) -> dict[str, Any]:
    """The JSON object Google answered with.

    Raises:
        GeminiAPIError: an answer with another status than 200.
        GeminiTransportError: no answer (connection, timeout).
        MalformedStreamError: a body that is not a JSON object, or one nested deeper than
            the decoder goes (``what`` names it).
    """
    try:
        response = await client.request(
            method, url, params=params, content=content, headers=headers, timeout=timeout
        )
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
    except RecursionError:
        raise MalformedStreamError(f"{what} is JSON nested too deeply") from None
    if not isinstance(data, dict):
        raise MalformedStreamError(f"{what} is not a JSON object")
    return data
