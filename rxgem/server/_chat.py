"""The chat routes: ``POST /v1/chat/completions`` and the model list (``/v1/models``).

Beside the Responses routes (:class:`~rxgem.server.responses.ResponsesRoutes`), on the
same request handling; the answer is a :class:`~rxgem.server.stream.CompletionResponse`.
"""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from ..core import RxGemError
from ..replies import Refusal, not_found, valid_model_name
from ._handling import Handling, json_response
from .observe import access_record
from .stream import CompletionResponse

__all__ = ["ChatRoutes"]


class ChatRoutes:
    """The chat completion and model handlers, on the app's :class:`Handling`."""

    def __init__(self, handling: Handling) -> None:
        self.handling = handling

    async def completions(self, request: Request) -> CompletionResponse:
        handling = self.handling
        record = access_record(request.scope)
        credentials, body = await handling.read(request, record)
        try:
            run = await handling.gateway.chat(
                body,
                credentials,
                handling.token(request),
                record,
                counted=lambda: handling.count(record, body),
                count_usage=True,  # the access log's tokens
            )
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc
        return CompletionResponse(
            run.source,
            stream=run.stream,
            send_usage=run.send_usage,
            answering=handling.answering(record),
            watch=run.watch,
        )

    async def list_models(self, request: Request) -> Response:
        record = access_record(request.scope)
        credentials = await self.handling.authorize(request, record)
        try:
            models = await self.handling.gateway.list_models(credentials)
        except RxGemError as exc:
            raise self.handling.failed(exc, record) from exc
        return json_response(msgspec.json.encode(models))

    async def get_model(self, request: Request) -> Response:
        record = access_record(request.scope)
        credentials = await self.handling.authorize(request, record)
        name = str(request.path_params["model_id"])
        record.model = name
        if not valid_model_name(name):
            raise Refusal(not_found("no such model", "model", "model_not_found"))
        try:
            model = await self.handling.gateway.get_model(credentials, name)
        except RxGemError as exc:
            raise self.handling.failed(exc, record) from exc
        return json_response(msgspec.json.encode(model))
