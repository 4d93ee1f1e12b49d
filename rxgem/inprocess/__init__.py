"""rxgem inside an OpenAI client, in process: :class:`OpenAITransport`, an httpx transport
(sync and async) that answers the OpenAI routes with Gemini as ``rxgem serve`` does,
without a server.

At the edge beside the server, and below neither: it composes :mod:`rxgem.client` (the
translation, the transport, the pipeline), :mod:`rxgem.replies` (the error replies and the
model list) and :mod:`rxgem.store` (stored Responses turns), with only the core
dependencies (httpx, reactivex, msgspec; no Starlette).

Modules: ``_transport`` (the transport), ``_options`` (its options, split), ``_requests``
(routes and bodies), ``_responses`` (a Responses request with its store),
``_answers`` (items to bytes), ``_streams`` (the streamed bodies), ``_loop`` (a private
event loop for what a sync client needs of async-only code).
"""

from ._transport import OpenAITransport

__all__ = ["OpenAITransport"]
