"""The tool schema translation: OpenAI's JSON Schemas → the schemas Gemini takes.

A folder per target, beside what they share:

- ``_convert``: the entry point (``to_gemini_schema``); picks the target, hands back
  the notes.
- ``_walk``: both targets; one conversion's state (budgets, notes, the ``$ref`` chain)
  and same-document ``$ref`` lookup.
- ``json_schema/``: target ``json_schema``; the pass-through copy (``_copy``).
- ``openapi/``: target ``openapi``; the walk over subschemas (unions, types, arrays,
  objects: ``_node``), a node's own keywords (``_keywords``), what Gemini's ``Schema``
  holds (``_vocabulary``), ``$ref`` inlined (``_refs``), ``allOf`` merged (``_all_of``).
"""
