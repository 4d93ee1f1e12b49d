"""What the in-process transport reads of a request, sans-IO: its route, its JSON body,
its model and its bearer token, refused as ``rxgem serve`` refuses them
(:class:`~rxgem.replies.Refusal`), and the Responses requests it cannot run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

import msgspec

from ..replies import Refusal, bad_request, http_reply, valid_model_name
from ..store import ResponseStore

__all__ = ["NO_STORE", "Route", "bearer", "json_body", "responses_refusal", "route_of"]

Route = tuple[Literal["chat", "responses", "models", "model"], str]
"""The route a request takes, and the model id of ``GET /v1/models/{id}``."""

_ROUTES: Final = {
    "/v1/chat/completions": ("POST", "chat"),
    "/v1/responses": ("POST", "responses"),
    "/v1/models": ("GET", "models"),
}
_ANSWERED: Final = (
    "the in-process transport answers POST /v1/chat/completions, POST /v1/responses,"
    " GET /v1/models and GET /v1/models/{id}: give the client base_url='http://HOST/v1'"
)


def route_of(method: str, path: str) -> Route:
    """The route of ``method`` ``path`` (raises :class:`Refusal`: 404, 405)."""
    path = path.rstrip("/") or "/"
    found = _ROUTES.get(path)
    if found is None and path.startswith("/v1/models/") and path.count("/") == 3:
        found = ("GET", "model")
    if found is None:
        raise Refusal(http_reply(404, f"Not Found: {_ANSWERED}", path))
    allowed, name = found
    if method != allowed:
        reply = http_reply(405, "Method Not Allowed", path)
        raise Refusal(reply)
    return (name, path.rpartition("/")[2]) if name == "model" else (name, "")  # type: ignore[return-value]


def json_body(content: bytes) -> dict[str, Any]:
    """The body as a JSON object with a plain model name (raises :class:`Refusal`: 400)."""
    try:
        body = msgspec.json.decode(content)
    except msgspec.DecodeError:
        raise Refusal(http_reply(400, "the request body is not valid JSON")) from None
    if not isinstance(body, dict):
        raise Refusal(http_reply(400, "the request body must be a JSON object"))
    model = body.get("model")
    if isinstance(model, str) and model and not valid_model_name(model):
        raise Refusal(bad_request("not a model name: letters, digits and . _ @ - only", "model"))
    return body


NO_STORE: Final = (
    "this OpenAITransport keeps no responses: give it a store"
    " (OpenAITransport(store=rxgem.store.SQLiteStore(path))) to continue one"
)


def responses_refusal(body: Mapping[str, Any], store: ResponseStore | None) -> Refusal | None:
    """Why the transport cannot run a Responses request (a background one; one that
    continues what a transport without a store never kept), or ``None``."""
    if body.get("background") is True:
        return Refusal(
            bad_request(
                "the in-process transport runs no background responses: use rxgem serve"
                " --upstream-api interactions --interactions-store",
                "background",
                "background_unsupported",
            )
        )
    if store is not None:
        return None
    if "previous_response_id" in body:
        return Refusal(bad_request(NO_STORE, "previous_response_id", "no_store"))
    if _references(body):
        return Refusal(bad_request(NO_STORE, "input", "no_store"))
    return None


def _references(body: Mapping[str, Any]) -> bool:
    """Whether ``input`` names a stored item (``item_reference``)."""
    items = body.get("input")
    return isinstance(items, list) and any(
        isinstance(item, dict) and item.get("type") == "item_reference" for item in items
    )


def bearer(headers: Mapping[str, str]) -> str | None:
    """The bearer token of a request's ``Authorization`` header, if any."""
    value = headers.get("authorization", "")
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None
