"""The chat routes: ``POST /v1/chat/completions`` and the model list (``/v1/models``).

Beside the Responses routes (:class:`~rxgem.server.responses.ResponsesRoutes`), on the
same request handling; the answer is a :class:`~rxgem.server.stream.CompletionResponse`.
"""

from __future__ import annotations

from functools import partial

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from ..core import RxGemError
from ..replies import Refusal, not_found, valid_model_name
from ._agents import chat_refusal
from ._chat_signatures import chat_recall
from ._handling import Handling, json_response
from ._signature_memory import ChatWatch, caught_placeholders
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
        refused = chat_refusal(body)
        if refused is not None:
            raise Refusal(refused)
        stream = handling.count(record, body)
        stream_options = body.get("stream_options")
        send_usage = isinstance(stream_options, dict) and bool(stream_options.get("include_usage"))
        if stream and (stream_options is None or isinstance(stream_options, dict)):
            # always ask for the usage chunk, for the access log; it is sent only if asked
            body = {**body, "stream_options": {**(stream_options or {}), "include_usage": True}}
        memory = handling.memory
        session = await memory.session(request.headers.get("authorization"), body, record)
        recall = chat_recall(body, session.model if session is not None else None)
        unsigned = recall.unsigned
        if session is not None and recall.keys:
            body, restored = recall.restore(body, await session.recall(recall.keys))
            session.restored(restored)
            unsigned -= restored
        upstream = handling.upstream
        client = upstream.next_client()
        try:
            if unsigned:  # Google's placeholder may go: count it (warnings are process-wide)
                work = partial(upstream.chat_completions, body, credentials, client)
                source, placeholders = await handling.offload.run_alone(
                    record.body_bytes, caught_placeholders(work)
                )
                memory.placeholders(record, placeholders)
            else:
                source = await handling.offload.run(
                    record.body_bytes, upstream.chat_completions, body, credentials, client
                )
        except RxGemError as exc:
            raise handling.failed(exc, record) from exc
        return CompletionResponse(
            source,
            stream=stream,
            send_usage=send_usage,
            answering=handling.answering(record),
            watch=ChatWatch(session) if session is not None else None,
        )

    async def list_models(self, request: Request) -> Response:
        record = access_record(request.scope)
        credentials = await self.handling.authorize(request, record)
        try:
            models = await self.handling.upstream.list_models(credentials)
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
            model = await self.handling.upstream.get_model(credentials, name)
        except RxGemError as exc:
            raise self.handling.failed(exc, record) from exc
        return json_response(msgspec.json.encode(model))
