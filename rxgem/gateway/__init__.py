"""The gateway: one object below the edges (``rxgem serve``'s routes, the in-process
:class:`~rxgem.OpenAITransport`) that owns the connection pools toward Gemini, the
upstream, the pipeline options and the response store, and answers chat completions,
Responses and background runs with typed results (``ChatRun``,
:class:`ResponsesRun`, :class:`Document`) and typed errors (``Refusal`` for what the
client asked wrong, ``RxGemError`` for Gemini's and the translation's).

The edges do their transport's work only (HTTP routes, auth, limits, framing); what is
asked of the pipeline, the translation, signature memory and the store is decided here:
the usage chunk is asked for here, and whether it goes out decided (:mod:`._usage`).

Modules: ``_gateway`` (the object), ``_options``, ``_pools`` (the shared clients),
``_results``, ``_trace`` (what the gateway reads of a request), ``_usage``,
``_offload`` (where a translation runs), ``_agents``, ``_responses`` (Responses
composed), ``_runs``/``_background``/``_interactions`` (background runs on the
Interactions API), ``_store_limits``, and signature memory: ``_signature_memory``,
``_signature_keys``, ``_chat_signatures``, ``_responses_signatures``.
"""

from ._gateway import Gateway
from ._options import GatewayOptions
from ._results import Document, ResponsesRun

__all__ = ["Document", "Gateway", "GatewayOptions", "ResponsesRun"]
