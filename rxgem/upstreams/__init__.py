"""The upstream APIs rxgem answers with, one object each (:class:`Upstream`), and the
registry that chooses one from the option values (:func:`upstream_of`).

- ``gemini/``: ``generateContent`` on the Gemini API (an API key);
- ``vertex/``: ``generateContent`` on Vertex AI (an access token);
- ``interactions/``: the Interactions API (``step.*`` events, resumable, background runs).

An upstream holds what differs: the request writers, the credentials, the exchange and the
reader stages. It is chosen once, where the options are read (the server's settings, the
client's and the in-process transport's options), and passed along; no module compares an
upstream's name but that choice. A new upstream is a new folder here and one line of the
registry (``_registry.UPSTREAMS``).
"""

from ._registry import upstream_at, upstream_of
from ._upstream import Upstream

__all__ = ["Upstream", "upstream_at", "upstream_of"]
