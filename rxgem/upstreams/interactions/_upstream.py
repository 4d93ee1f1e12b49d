"""The Interactions API upstream."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from reactivex import Observable

from ...core.pipeline import reader_of
from ...request import (
    InteractionRequest,
    Resolve,
    Unsupported,
    chat_to_interaction,
    responses_to_interaction,
)
from ...transport import InteractionsTransportOptions, from_interactions, interactions_url
from .._upstream import Upstream

__all__ = ["INTERACTIONS"]


class Interactions(Upstream):
    """Gemini's Interactions API: stateless from rxgem (Google keeps nothing unless a
    background run asks it to), resumed from the last event id when a stream is cut."""

    name = "interactions"
    api = None
    reader = reader_of("interactions")
    provider = "gcp.gemini"
    background = True
    transport_options = InteractionsTransportOptions.__optional_keys__
    responses_type = InteractionRequest

    def chat_request(
        self,
        body: dict[str, Any],
        *,
        include_thoughts: bool | None = None,
        unsupported: Unsupported = "error",
    ) -> dict[str, Any]:
        return chat_to_interaction(body, include_thoughts=include_thoughts, unsupported=unsupported)

    def responses_request(
        self,
        body: Mapping[str, Any],
        *,
        unsupported: Unsupported = "error",
        history: Sequence[Mapping[str, Any]] | None = None,
        resolve: Resolve | None = None,
    ) -> InteractionRequest:
        return responses_to_interaction(
            body, unsupported=unsupported, history=history, resolve=resolve
        )

    def source(self, request: Mapping[str, Any], model: str, **transport: Any) -> Observable[bytes]:
        body = dict(request)
        if "model" not in body and "agent" not in body:
            body["model"] = model.removeprefix("models/")
        return from_interactions(body, **transport)

    def url(self, base_url: str | None, model: str) -> str:
        return interactions_url(base_url)

    def addresses(self, url: str) -> bool:
        return "/interactions" in url.partition("?")[0]

    def credentials(self, token: str) -> dict[str, str]:
        return {"api_key": token}


INTERACTIONS: Final = Interactions()
