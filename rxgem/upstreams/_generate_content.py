"""What the two ``generateContent`` upstreams (the Gemini API, Vertex AI) share: the request
writers (``to_gemini_request``, ``responses_to_gemini_request`` with their ``api``), the
exchange (:func:`~rxgem.transport.from_gemini`) and the reader (``parse`` …
``flush_on_finish``). What tells them apart (the ``api``, the credential, the provider) is
each folder's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from reactivex import Observable

from ..core.gemini import GeminiApi
from ..core.pipeline import reader_of
from ..request import (
    Resolve,
    ResponsesRequest,
    Unsupported,
    responses_to_gemini_request,
    to_gemini_request,
)
from ..transport import TransportOptions, from_gemini, stream_url
from ._upstream import Upstream

__all__ = ["GenerateContent"]

_STREAM: Final = ":streamGenerateContent"


class GenerateContent(Upstream):
    """``models/{model}:streamGenerateContent`` on one API (``api``)."""

    api: GeminiApi
    reader = reader_of("generate-content")
    transport_options = TransportOptions.__optional_keys__
    responses_type = ResponsesRequest

    def __init__(self, name: str, api: GeminiApi, provider: str, credential: str) -> None:
        self.name = name
        self.api = api
        self.provider = provider
        self._credential = credential

    def pipeline(self, options: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().pipeline(options), "api": self.api}

    def chat_request(
        self,
        body: dict[str, Any],
        *,
        include_thoughts: bool | None = None,
        unsupported: Unsupported = "error",
    ) -> dict[str, Any]:
        return to_gemini_request(
            body, api=self.api, include_thoughts=include_thoughts, unsupported=unsupported
        )

    def responses_request(
        self,
        body: Mapping[str, Any],
        *,
        unsupported: Unsupported = "error",
        history: Sequence[Mapping[str, Any]] | None = None,
        resolve: Resolve | None = None,
    ) -> ResponsesRequest:
        return responses_to_gemini_request(
            body, api=self.api, unsupported=unsupported, history=history, resolve=resolve
        )

    def source(self, request: Mapping[str, Any], model: str, **transport: Any) -> Observable[bytes]:
        return from_gemini(request, model=model, **transport)

    def url(self, base_url: str | None, model: str) -> str:
        return stream_url(base_url, model)

    def addresses(self, url: str) -> bool:
        return _STREAM in url.partition("?")[0]

    def credentials(self, token: str) -> dict[str, str]:
        return {self._credential: token}
