"""What one upstream API is to rxgem: the one object that holds what differs between them.

Each upstream (a folder of :mod:`rxgem.upstreams`) is an :class:`Upstream` that writes the
request (a Chat Completions or a Responses body into its own), knows its credentials, opens
its exchange (the body's bytes) and names the reader that reads them. Everything above takes
the object it was given and asks it; nothing compares the upstream's name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from reactivex import Observable

from ..core.gemini import GeminiApi
from ..core.pipeline import Reader
from ..request import InteractionRequest, Resolve, ResponsesRequest, Unsupported

__all__ = ["Tokens", "Upstream"]


class Tokens(Protocol):
    """A credential an upstream finds and keeps fresh itself: the token to send now."""

    def token(self) -> str:
        """The token, refreshed first if need be (blocks)."""
        ...

    async def atoken(self) -> str:
        """The token, a refresh waited for off the event loop."""
        ...


class Upstream:
    """One upstream API: its request writers, credentials, exchange and reader.

    Attributes:
        name: the option value that chooses it (``rxgem serve --upstream-api``, the
            pipeline's ``upstream``); two upstreams share one when the ``api`` tells them
            apart (Gemini and Vertex AI both answer ``generateContent``).
        api: whose enum numbers its stream is read with (``None``: no ``api`` option).
        reader: the stages that read its stream (:func:`~rxgem.core.reader_of`): the
            stream format's, which upstreams that speak one format share.
        provider: OpenTelemetry's ``gen_ai.provider.name`` for it.
        background: whether it runs background responses and agents (kept at Google).
        transport_options: the keyword options its exchange (:meth:`source`) takes.
        responses_type: the type of what :meth:`responses_request` writes.
        finds_credentials: what it finds a credential of its own with when given none
            (:meth:`own_tokens`), for messages; ``None``: it needs one given.
    """

    name: str
    api: GeminiApi | None
    reader: Reader
    provider: str
    background: bool = False
    transport_options: frozenset[str]
    responses_type: type[ResponsesRequest | InteractionRequest]
    finds_credentials: str | None = None

    def __repr__(self) -> str:
        return f"<upstream {self.name}{f' ({self.api})' if self.api else ''}>"

    def pipeline(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` with the pipeline options that choose this upstream's reader."""
        return {**options, "upstream": self.reader.name}

    def chat_request(
        self,
        body: dict[str, Any],
        *,
        include_thoughts: bool | None = None,
        unsupported: Unsupported = "error",
    ) -> dict[str, Any]:
        """A Chat Completions request body written as this upstream's request body.

        Raises:
            InvalidRequestError: for a request that cannot be translated.
        """
        raise NotImplementedError

    def responses_request(
        self,
        body: Mapping[str, Any],
        *,
        unsupported: Unsupported = "error",
        history: Sequence[Mapping[str, Any]] | None = None,
        resolve: Resolve | None = None,
    ) -> ResponsesRequest | InteractionRequest:
        """A Responses request body written for this upstream, with what a server keeps.

        Raises:
            InvalidRequestError: for a request that cannot be translated.
        """
        raise NotImplementedError

    def source(self, request: Mapping[str, Any], model: str, **transport: Any) -> Observable[bytes]:
        """The exchange: ``request`` (a body :meth:`chat_request` or
        :meth:`responses_request` wrote) sent for ``model``, its answer's body as bytes.
        ``transport``: the options of :attr:`transport_options`."""
        raise NotImplementedError

    def url(self, base_url: str | None, model: str) -> str:
        """Where :meth:`source` sends a request for ``model`` (raises
        ``InvalidRequestError`` for a model name that is not one)."""
        raise NotImplementedError

    def addresses(self, url: str) -> bool:
        """Whether ``url`` (a request's) is one of this upstream's streaming endpoints."""
        raise NotImplementedError

    def credentials(self, token: str) -> dict[str, str]:
        """A client's own bearer token as the credential this upstream takes (the
        transport's keyword: ``api_key``, ``access_token``)."""
        raise NotImplementedError

    def own_tokens(self, *, timeout: float) -> Tokens:
        """The credential it finds itself (when :attr:`finds_credentials` says so), each
        token sent as :meth:`credentials` says; ``timeout``: the longest wait for one.
        Blocks while it looks.

        Raises:
            MissingCredentialsError: none was found (the message says where to put one).
        """
        raise NotImplementedError
