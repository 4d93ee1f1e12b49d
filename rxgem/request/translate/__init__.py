"""The four translations, each a reader and a writer: Chat Completions or Responses into
the typed form (:mod:`..read`), the form into ``generateContent`` or Interactions
(:mod:`..write`)."""

from ._generate_content import ResponsesRequest as ResponsesRequest
from ._generate_content import responses_to_gemini_request as responses_to_gemini_request
from ._generate_content import to_gemini_request as to_gemini_request
from ._interactions import InteractionRequest as InteractionRequest
from ._interactions import chat_to_interaction as chat_to_interaction
from ._interactions import responses_to_interaction as responses_to_interaction
