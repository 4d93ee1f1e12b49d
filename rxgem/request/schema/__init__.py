"""The tool schema translation: OpenAI's JSON Schemas → the schemas Gemini takes.

Split by target, each module named for its side:

- ``_to_gemini``: the entry point (``to_gemini_schema``); picks the target, hands back
  the notes.
- ``_walk``: both targets; one conversion's state (budgets, notes, the ``$ref`` chain)
  and same-document ``$ref`` lookup.
- ``_to_json_schema``: target ``json_schema``; the pass-through copy.
- ``_to_openapi``: target ``openapi``; the walk over subschemas (unions, types, arrays,
  objects).
- ``_openapi_keywords``: a node's own keywords; ``_openapi_vocabulary``: what Gemini's
  ``Schema`` holds; ``_openapi_refs``: ``$ref`` inlined; ``_openapi_all_of``: ``allOf``
  merged.
"""
