"""What the in-process transport reads of a request, sans-IO: its route, its JSON body and
its model, refused as ``rxgem serve`` refuses them (:class:`~rxgem.replies.Refusal`)."""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec

from ..replies import Refusal, bad_request, http_reply, valid_model_name

__all__ = ["Route", "json_body", "route_of"]

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
