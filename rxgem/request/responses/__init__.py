"""The Responses request translation: a Responses body → a Gemini request.

``responses_to_gemini_request`` (in ``_request``) takes the body, with the history the
caller resolved; its input items (``_input``, their content in ``_content``), parameters
(``_params``), tools (``_tools``) and carried thought signatures (``_signatures``). It
reuses the chat translation's parts (messages, parameters, schemas) from the package.
"""
