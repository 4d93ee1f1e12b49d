"""OpenAI requests → Gemini Interactions create bodies (``POST /v1beta/interactions``), sans-IO.

:func:`chat_to_interaction` translates a Chat Completions body, :func:`responses_to_interaction`
a Responses body (into an :class:`InteractionRequest`: the body and what the server keeps).
Both resolve the conversation as the ``generateContent`` translations do (messages, input
items, history, item references, schemas, parameters) and write it as Interactions steps
(``_steps``) and settings (``_config``).
"""

from ._chat import chat_to_interaction
from ._responses import InteractionRequest, responses_to_interaction

__all__ = ["InteractionRequest", "chat_to_interaction", "responses_to_interaction"]
