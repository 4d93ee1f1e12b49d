"""The server's side toward Gemini's Interactions API (``--upstream-api interactions``):
the chat and Responses streams, and a background run's create, get, stream and cancel,
on the shared pools of :class:`~rxgem.server._upstream.Upstream`.

Every request to Google streams (``from_interactions``): a client that did not ask for a
stream gets the same events assembled, as on ``generateContent``. The pipeline options of
the server that the Interactions stages take go to every answer; the others (the
``generateContent`` reader's) are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

import msgspec
from reactivex import Observable
from reactivex import operators as ops

from ..converter import ResponsesConverter, interaction_response
from ..core import (
    INTERACTIONS_RESPONSES_STAGES,
    INTERACTIONS_STAGES,
    ChatCompletion,
    ChatCompletionChunk,
    InvalidRequestError,
    Response,
    ResponsesEvent,
    completion,
)
from ..operators import gemini_to_openai, responses_operator
from ..request import InteractionRequest, chat_to_interaction
from ..transport import cancel_interaction, create_interaction, from_interactions, get_interaction
from ._auth import Credentials
from ._upstream import Upstream

__all__ = ["Interactions"]

_ENCRYPTED: Final = "reasoning.encrypted_content"
_UPSTREAM: Final = "interactions"


def _stage_options(stages: Any, pipeline: Mapping[str, Any]) -> dict[str, Any]:
    names = {name for stage in stages for name in stage.declared}
    return {k: v for k, v in pipeline.items() if k in names}


class Interactions:
    """Gemini's Interactions API behind the server, on ``upstream``'s pools and settings."""

    def __init__(self, upstream: Upstream) -> None:
        self.upstream = upstream
        self.settings = settings = upstream.settings
        self._chat_pipeline = _stage_options(INTERACTIONS_STAGES, settings.pipeline)
        self.responses_pipeline = _stage_options(INTERACTIONS_RESPONSES_STAGES, settings.pipeline)
        """The server's pipeline options that the Interactions Responses stages take."""

    def _transport(self, credentials: Credentials) -> dict[str, Any]:
        return {
            "base_url": self.settings.upstream,
            "api_key": credentials.api_key,
            "access_token": credentials.access_token,
            "client": self.upstream.next_client(),
            "max_line_bytes": self.settings.max_upstream_line_bytes,
        }

    def _credentials(self, credentials: Credentials) -> dict[str, Any]:
        return {
            "api_key": credentials.api_key,
            "access_token": credentials.access_token,
            "environ": {},
        }

    def chat_completions(
        self, body: dict[str, Any], credentials: Credentials
    ) -> Observable[ChatCompletionChunk] | Observable[ChatCompletion]:
        """A chat completion answered through Interactions, never kept at Google (raises
        ``InvalidRequestError``)."""
        create = chat_to_interaction(body, store=False)
        stream = body.get("stream")
        if stream not in (None, True, False):
            raise InvalidRequestError("must be true or false", where="stream")
        stream_options = body.get("stream_options") or {}
        if type(stream_options) is not dict:
            raise InvalidRequestError("must be an object", where="stream_options")
        include_usage = bool(stream_options.get("include_usage")) if stream else True
        operator = gemini_to_openai(
            upstream=_UPSTREAM,
            model=str(body["model"]).removeprefix("models/"),
            include_usage=include_usage,
            **self._chat_pipeline,
        )
        chunks = from_interactions(create, **self._transport(credentials)).pipe(operator)
        if stream:
            return chunks
        return chunks.pipe(ops.to_list(), ops.map(completion))

    def response_options(
        self, request: InteractionRequest, response_id: str | None
    ) -> dict[str, Any]:
        """The Responses pipeline's options for ``request``'s events (the server's, the
        request's echo, and ``response_id``)."""
        return {
            **self.responses_pipeline,
            "model": request.model.removeprefix("models/"),
            "request": {**request.echo, "store": request.store},
            "include_encrypted_reasoning": _ENCRYPTED in request.include,
            "namespaced": request.namespaced,
            "response_id": response_id,
        }

    def responses(
        self,
        request: InteractionRequest,
        credentials: Credentials,
        on_start: Callable[[ResponsesConverter], None],
        response_id: str | None = None,
    ) -> Observable[ResponsesEvent]:
        """The Responses events of a translated request (``on_start`` gets each
        subscription's converter: its ``signatures`` and ``interaction_id``)."""
        options = self.response_options(request, response_id)
        operator = responses_operator({**options, "upstream": _UPSTREAM}, on_start)
        return from_interactions(request.body, **self._transport(credentials)).pipe(operator)

    def replay(
        self,
        interaction_id: str,
        credentials: Credentials,
        options: Mapping[str, Any],
        on_start: Callable[[ResponsesConverter], None] | None = None,
    ) -> Observable[ResponsesEvent]:
        """The Responses events of a stored run's stream, from its start (``options``: the
        Responses pipeline's)."""
        operator = responses_operator({**options, "upstream": _UPSTREAM}, on_start)
        return from_interactions(
            {}, interaction_id=interaction_id, **self._transport(credentials)
        ).pipe(operator)

    async def create(self, body: Mapping[str, Any], credentials: Credentials) -> dict[str, Any]:
        """Create a run (a background one answers at once) and return its object."""
        client = self.upstream.next_client()
        return await create_interaction(
            client, body, self.settings.upstream, **self._credentials(credentials)
        )

    async def get(self, interaction_id: str, credentials: Credentials) -> dict[str, Any]:
        """The run's Interaction object as it stands."""
        client = self.upstream.next_client()
        return await get_interaction(
            client, interaction_id, self.settings.upstream, **self._credentials(credentials)
        )

    async def cancel(self, interaction_id: str, credentials: Credentials) -> dict[str, Any]:
        """Cancel the run at Google; its object after."""
        client = self.upstream.next_client()
        return await cancel_interaction(
            client, interaction_id, self.settings.upstream, **self._credentials(credentials)
        )

    @staticmethod
    def response(interaction: Mapping[str, Any], options: Mapping[str, Any]) -> Response:
        """An ended run's Interaction object as the Responses ``response`` (``options``:
        the output stage's, as :meth:`response_options` gives them)."""
        names = INTERACTIONS_RESPONSES_STAGES[-1].declared
        own = {k: v for k, v in options.items() if k in names}
        return interaction_response(msgspec.json.encode(interaction), **own)
