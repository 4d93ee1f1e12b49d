"""``generateContent`` on Vertex AI (``*aiplatform.googleapis.com``): an OAuth access token
(``Authorization: Bearer``), tool schemas as the OpenAPI subset, Vertex's enum numbers.

The server given no token finds Application Default Credentials (google-auth, the
``vertex`` extra) and refreshes them before they expire (``_adc``); the project and the
location come from ``PROJECT/LOCATION``, else the environment (:func:`base_url`)."""

from ._upstream import VERTEX, base_url

__all__ = ["VERTEX", "base_url"]
