"""The tool schema translation: a JSON Schema → what Gemini takes.

One entry point, ``to_gemini_schema`` (in ``_to_gemini``): a schema becomes Gemini's
``parametersJsonSchema`` (``_to_json_schema``) or, for an API that takes only the
OpenAPI subset, a ``parameters`` schema (``_to_openapi``, with ``$ref`` inlined, ``allOf``
merged and the keywords it keeps); both walk the schema with one ``_walk``.
"""
