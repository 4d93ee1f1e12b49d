"""The upstream APIs rxgem answers with, one object each (:class:`Upstream`), and the
registry that chooses one from the option values (:func:`upstream_of`).

- ``gemini/``: ``generateContent`` on the Gemini API (an API key);
- ``vertex/``: ``generateContent`` on Vertex AI (an access token);
- ``interactions/``: the Interactions API (``step.*`` events, resumable, background runs).

An upstream holds what differs: the request writers, the credentials, the exchange and the
reader stages. It is chosen once, where the options are read (the server's settings, the
client's and the in-process transport's options), and passed along (the gateway answers on
the object it was given); no module compares an upstream's name but that choice.

Adding an upstream: a folder here whose face exports one :class:`Upstream` (a subclass
where it differs, e.g. :class:`~._generate_content.GenerateContent` for another
``generateContent`` endpoint), and its entry in ``_registry.UPSTREAMS`` (the import and the
line). Its ``name`` is then an option value everywhere with no other change:
``rxgem serve --upstream-api`` and ``RXGEM_UPSTREAM_API`` (:data:`UPSTREAM_NAMES`), the
client's ``upstream=`` (``chat_completions``, ``responses``, ``stream_chat``),
``OpenAITransport(upstream=...)`` (spelled in camel case); the pipeline's own ``upstream``
option names the stream format its reader reads, which the upstream sets.
``tests/upstreams/test_new_upstream.py`` adds a toy one that way. An upstream reads an
existing stream format: its :attr:`Upstream.reader` is one of the core's readers
(``generateContent``'s or the Interactions API's) and its exchange runs on the transport's
(:func:`~rxgem.transport.from_gemini`, :func:`~rxgem.transport.from_interactions`); a new
stream *format* is new sans-IO code below (a reader in ``core/pipeline``, a strategy of the
exchange machine in ``transport``), as the layers require.
"""

from ._registry import UPSTREAM_NAMES as UPSTREAM_NAMES
from ._registry import upstream_at, upstream_of
from ._upstream import Upstream

__all__ = ["Upstream", "upstream_at", "upstream_of"]
