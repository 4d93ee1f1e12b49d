"""The Responses API routes: ``POST /v1/responses`` and the stored responses.

``POST /v1/responses`` is answered as chat completions are (the same request handling,
admission, access log, telemetry and OpenAI-shaped errors): the gateway translates the
body and asks Gemini (:class:`rxgem.gateway.Gateway`), and its events are streamed or
assembled by :class:`ResponsesAnswer`.

Stored responses (unless the server runs with ``no_store``): a request with ``store``
(true unless sent false) is kept with its input, output and Gemini's thought signatures,
under the owner id of the client's bearer token (:meth:`rxgem.store.ResponseStore.owner`;
a client of an ``open`` server that sends no token is :data:`ANONYMOUS`). Another
client's id is a 404, exactly as an unknown one; ids are checked
(:func:`rxgem.store.valid_turn_id`, :func:`rxgem.store.valid_item_id`) before any store
sees them.

On the Interactions upstream, a ``background: true`` request is a background run at
Google, polled, streamed again and cancelled through the store's record of it (the
gateway's background runs).

Modules: ``_routes`` (the handlers; what is stored, and read back, is
:mod:`rxgem.store`'s) and ``_answer`` (the ASGI answer with the Responses framing).
"""

from ...store import ANONYMOUS
from ._answer import ResponsesAnswer
from ._routes import ResponsesRoutes

__all__ = ["ANONYMOUS", "ResponsesAnswer", "ResponsesRoutes"]
