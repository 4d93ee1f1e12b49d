"""Target ``openapi``: JSON Schema → Gemini's ``Schema`` object (the OpenAPI 3.0 subset),
node by node (``_node``), with its keywords (``_keywords``), vocabulary (``_vocabulary``),
``$ref`` inlining (``_refs``) and ``allOf`` merging (``_all_of``)."""
